package io.lancecontext.core.internal.txn;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.WriteSummary;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The transactions of one store as this JVM sees them: staged parts are written here, and the records
 * that decide them are read here (and cached: a record never changes once written). Thread-safe.
 *
 * <p>Finding published transactions without listing {@code _lc/txn} on every read: every publish, after
 * its record is written and before it returns, overwrites the marker {@link TxnIds#PUBLISHED_MARKER} with a
 * value never written before. {@link #publishedParts()} reads the marker first and lists the transactions
 * again only when the marker changed since its last listing (or {@link #RELIST_NANOS} passed, which bounds
 * how long a record whose publisher died before the marker write stays unseen): a publish that returned
 * before the marker was read changed it, and a listing made after the marker read holds every record
 * written before it.
 */
public final class Transactions {
  /** The longest a cached listing of published transactions is used without listing again. */
  static final long RELIST_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

  private final StoreConfig config;
  private final StoreFiles files;
  private final BufferAllocator allocator;
  private final Map<String, TxnRecord> records = new ConcurrentHashMap<>();
  private final Object listing = new Object();
  private Listing listed;
  private volatile TxnLedger.Version ledger = TxnLedger.Version.NONE;
  private final java.util.concurrent.atomic.AtomicLong listings = new java.util.concurrent.atomic.AtomicLong();

  /** The published parts as of one marker value. */
  private record Listing(String marker, long atNanos, Map<Integer, List<PublishedPart>> parts) {}

  private final TxnLiveness liveness;
  private final StagedKeys staged = new StagedKeys();
  private final PublishIntents intents;

  public Transactions(StoreConfig config, StoreFiles files, BufferAllocator allocator) {
    this.config = config;
    this.files = files;
    this.allocator = allocator;
    this.liveness = new TxnLiveness(files, config.uri(), records::containsKey);
    this.intents = new PublishIntents(files);
  }

  /** The publishes in flight (see {@link PublishIntents}). */
  public PublishIntents intents() {
    return intents;
  }

  /**
   * The buckets a merge that listed {@code listed} ({@link #publishedParts()}) must leave alone: those a publish
   * in flight names, and those whose published parts changed since (see {@link PublishIntents}).
   */
  public java.util.Set<Integer> publishing(Map<Integer, List<PublishedPart>> listed) {
    try {
      java.util.Set<Integer> busy = new java.util.TreeSet<>(intents.liveBuckets(System.currentTimeMillis()));
      Map<Integer, List<PublishedPart>> now = publishedParts();
      java.util.Set<Integer> buckets = new java.util.HashSet<>(now.keySet());
      buckets.addAll(listed.keySet());
      for (int b : buckets) {
        if (!now.getOrDefault(b, List.of()).equals(listed.getOrDefault(b, List.of()))) {
          busy.add(b);
        }
      }
      return busy;
    } catch (IOException e) {
      throw LanceErrors.translate("list the publishes in flight", e);
    }
  }

  /** Renews and holds this store's transactions alive (see {@link TxnLiveness}). */
  public TxnLiveness liveness() {
    return liveness;
  }

  /** Listings of {@code _lc/txn} made by {@link #publishedParts()} so far (for tests and stats). */
  public long listings() {
    return listings.get();
  }

  public StoreFiles files() {
    return files;
  }

  /**
   * The ledger entry of {@code txid}, if garbage collection compacted its record: the cached ledger version
   * when it holds it, else the newest version (one listing and one read; only a missing record gets here).
   */
  private Optional<TxnRecord> compacted(String txid) throws IOException {
    TxnLedger.Version v = ledger;
    TxnRecord r = v.entries().get(txid);
    if (r != null) {
      return Optional.of(r);
    }
    v = TxnLedger.newest(files);
    ledger = v;
    return Optional.ofNullable(v.entries().get(txid));
  }

  /**
   * Folds published, merged transactions into the compact ledger (a new version holding every earlier entry
   * and these). Their records may be deleted once this returns true; called by the maintenance lease holder.
   *
   * @return false if another collector wrote the next version first (nothing may be deleted this time)
   */
  public boolean compact(java.util.Collection<TxnRecord> published) {
    try {
      TxnLedger.Version latest = TxnLedger.newest(files);
      var written = TxnLedger.append(files, latest, published, System.currentTimeMillis());
      ledger = written.orElse(latest);
      return written.isPresent();
    } catch (IOException e) {
      throw LanceErrors.translate("write the transaction ledger", e);
    }
  }

  /** Ledger versions older than the newest two (superseded; a reader that loses one lists again). */
  public List<String> supersededLedgerVersions() {
    try {
      List<Long> numbers = TxnLedger.numbers(files);
      List<String> out = new ArrayList<>();
      for (int i = 0; i < numbers.size() - 2; i++) {
        out.add(TxnLedger.path(numbers.get(i)));
      }
      return out;
    } catch (IOException e) {
      throw LanceErrors.translate("list the transaction ledger", e);
    }
  }

  /** The record of {@code txid}, if it was published or aborted (also once its record was compacted). */
  public Optional<TxnRecord> record(String txid) {
    TxnRecord r = records.get(txid);
    if (r != null) {
      return Optional.of(r);
    }
    try {
      Optional<byte[]> content = files.readIfPresent(TxnIds.record(txid));
      if (content.isEmpty()) {
        // read after the record: a record is deleted only once a ledger version holding it exists
        r = compacted(txid).orElse(null);
        if (r == null) {
          return Optional.empty();
        }
      } else {
        r = TxnRecord.fromBytes(content.get());
      }
    } catch (IOException e) {
      throw LanceErrors.translate("read the record of transaction " + txid, e);
    }
    records.put(txid, r);
    return Optional.of(r);
  }

  /**
   * The attempt of {@code txid} to stage under and publish now: the first of {@code txid}, {@code txid..1}, …
   * ({@link TxnIds#attempt}) that did not expire. Reads one record per expired attempt (decided records are
   * cached); an attempt without a record file is taken as it is (a compacted record is a published one).
   */
  public String currentAttempt(String txid) {
    for (int n = 0; n < 100_000; n++) {
      String id = TxnIds.attempt(txid, n);
      TxnRecord r = records.get(id);
      if (r == null) {
        try {
          Optional<byte[]> content = files.readIfPresent(TxnIds.record(id));
          if (content.isEmpty()) {
            return id;
          }
          r = cache(TxnRecord.fromBytes(content.get()));
        } catch (IOException e) {
          throw LanceErrors.translate("read the record of transaction " + id, e);
        }
      }
      if (!r.expired()) {
        return id;
      }
    }
    throw new IllegalStateException("transaction " + txid + " expired 100,000 times");
  }

  /**
   * Writes the record of a transaction once.
   *
   * @return the record that decides the transaction: {@code record}, or the one written before it
   */
  public TxnRecord decide(TxnRecord record) {
    try {
      if (!record.published()) {
        Optional<TxnRecord> compacted = compacted(record.txid());
        if (compacted.isPresent()) {
          return cache(compacted.get());  // published, merged and compacted: its record is gone
        }
      }
      if (files.createIfAbsent(TxnIds.record(record.txid()), record.toBytes())) {
        if (!record.published()) {
          // compacted between the check above and the create: the ledger decides, the new record goes
          Optional<TxnRecord> compacted = compacted(record.txid());
          if (compacted.isPresent()) {
            files.delete(TxnIds.record(record.txid()));
            return cache(compacted.get());
          }
        }
        records.put(record.txid(), record);
        if (record.published()) {
          markPublished();
        }
        return record;
      }
    } catch (IOException e) {
      throw LanceErrors.translate("write the record of transaction " + record.txid(), e);
    }
    TxnRecord decided = record(record.txid()).orElseThrow(() -> new IllegalStateException("the record of transaction "
        + record.txid() + " exists and does not"));
    if (decided.published()) {
      markPublished();  // a replay: its first publisher may have died before the marker write
    }
    return decided;
  }

  private TxnRecord cache(TxnRecord r) {
    records.put(r.txid(), r);
    return r;
  }

  /**
   * Changes the publish marker (a value never written before) and drops this JVM's cached listing; called
   * for every publish, a replay of a published transaction included (its first publisher may have died
   * between its record and the marker).
   */
  public void markPublished() {
    String value = java.util.UUID.randomUUID() + " " + System.currentTimeMillis();
    try {
      files.overwrite(TxnIds.PUBLISHED_MARKER, value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw LanceErrors.translate("mark a transaction published", e);
    }
    synchronized (listing) {
      listed = null;
    }
  }

  private String marker() {
    try {
      return new String(files.read(TxnIds.PUBLISHED_MARKER), java.nio.charset.StandardCharsets.UTF_8);
    } catch (io.lancecontext.core.internal.io.StoreFiles.NotFound e) {
      return "";
    } catch (IOException e) {
      throw LanceErrors.translate("read the transactions' publish marker", e);
    }
  }

  /** Every transaction id with a directory under {@code _lc/txn}. */
  public List<String> transactionIds() {
    try {
      return files.list(TxnIds.ROOT);
    } catch (IOException e) {
      throw LanceErrors.translate("list the transactions", e);
    }
  }

  /** The visible parts of every published transaction, by bucket, each bucket's in {@link PublishedPart#ORDER}. */
  public Map<Integer, List<PublishedPart>> publishedParts() {
    String marker = marker();
    long now = System.nanoTime();
    synchronized (listing) {
      Listing l = listed;
      if (l != null && l.marker().equals(marker) && now - l.atNanos() < RELIST_NANOS) {
        return l.parts();
      }
    }
    Map<Integer, List<PublishedPart>> parts = listPublishedParts();
    synchronized (listing) {
      listed = new Listing(marker, now, parts);
    }
    return parts;
  }

  private Map<Integer, List<PublishedPart>> listPublishedParts() {
    listings.incrementAndGet();
    Map<Integer, List<PublishedPart>> out = new HashMap<>();
    for (String txid : transactionIds()) {
      Optional<TxnRecord> r = record(txid);
      if (r.isEmpty() || !r.get().published()) {
        continue;
      }
      int order = 0;
      for (WriteSummary.StagedPart p : r.get().parts()) {
        long seq = r.get().sequences().get(p.bucket());
        out.computeIfAbsent(p.bucket(), b -> new ArrayList<>()).add(new PublishedPart(txid, p.bucket(), p.name(),
            TxnIds.partDir(txid, p.bucket(), p.name()), seq, order++, p.rows()));
      }
    }
    out.replaceAll((b, l) -> {
      l.sort(PublishedPart.ORDER);
      return List.copyOf(l);
    });
    return Map.copyOf(out);
  }

  /** The keys and rows of the parts this JVM staged, for its readers ({@link StagedKeys}). */
  public StagedKeys stagedKeys() {
    return staged;
  }

  /**
   * Writes one staged part (rows of one bucket in the dataset schema, one row per key) once as a Lance
   * dataset, in one data file so that a row's offset is its place in the part. Does not close {@code rows}.
   */
  public void writePart(String txid, int bucket, String name, VectorSchemaRoot rows) {
    writePart(txid, bucket, name, List.of(rows));
  }

  /**
   * As {@link #writePart(String, int, String, VectorSchemaRoot)}, from several batches of one schema,
   * stored in their order. Does not close them. Returns the part's fragments.
   */
  public List<io.lancecontext.core.internal.lance.LanceFragment> writePart(String txid, int bucket, String name,
      List<VectorSchemaRoot> batches) {
    String uri = config.uri() + "/" + TxnIds.partDir(txid, bucket, name);
    return LanceDataset.writeNew(uri, batches, config, allocator, "stage a part of transaction " + txid);
  }

  /**
   * The keys of the rows of {@code parts} of transaction attempt {@code txid} (tombstones included), read from
   * their datasets' {@code keyColumn}.
   */
  public List<String> stagedKeys(String txid, java.util.Collection<WriteSummary.StagedPart> parts, String keyColumn) {
    List<String> keys = new ArrayList<>();
    for (WriteSummary.StagedPart p : parts) {
      String uri = config.uri() + "/" + TxnIds.partDir(txid, p.bucket(), p.name());
      try (LanceDataset ds = io.lancecontext.core.internal.session.StoreDatasets.open(uri, config, allocator);
          io.lancecontext.core.internal.lance.ScanHandle scan = ds.scan(ScanRequest.of(List.of(keyColumn)))) {
        while (scan.reader().loadNextBatch()) {
          org.apache.arrow.vector.VarCharVector v =
              (org.apache.arrow.vector.VarCharVector) scan.reader().getVectorSchemaRoot().getVector(keyColumn);
          for (int r = 0; r < v.getValueCount(); r++) {
            keys.add(new String(v.get(r), java.nio.charset.StandardCharsets.UTF_8));
          }
        }
      } catch (IOException | RuntimeException e) {
        throw LanceErrors.translate("read the keys of part " + p.name() + " of transaction " + txid, e);
      }
    }
    return keys;
  }
}
