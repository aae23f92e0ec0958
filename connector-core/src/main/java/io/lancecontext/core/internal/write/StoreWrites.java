package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.error.TransactionAbortedException;
import io.lancecontext.core.error.TransactionExpiredException;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.txn.TxnRecord;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.error.UniqueKeyViolationException;
import io.lancecontext.core.error.WriteInterruptedException;
import io.lancecontext.core.internal.codec.BatchValidator;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.MergedWatermarks;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.read.BaseTable;
import io.lancecontext.core.internal.read.FreshShard;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.WalSource;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The write path of one resident store: a validated batch in the dataset schema is deduplicated by key
 * (the last row wins, a tombstone row included), routed to the bucket of each key, put durably on every
 * bucket's resident writer (in parallel) and acknowledged once every writer still owned its shard. Also
 * what the bucket writers ask of the store's data (the highest write sequences present) and the
 * {@code unique-ids} checks. Thread-safe.
 */
public final class StoreWrites {

  /** What the write path reads from its store. */
  public interface Reads {
    /** A snapshot over the given shards (all when null); the caller closes it. */
    LsmSnapshot snapshot(Set<String> shardIds);

    /** The latest base table, retained for the caller. */
    BaseTable base();

    /** The stored records of those keys that exist. */
    List<Map<String, Object>> lookup(List<String> keys, List<String> columns, boolean includeExpired, Instant now);
  }

  /**
   * What one write stored: rows upserted and keys deleted (after dedupe by key), and the puts that hold
   * them, one receipt per bucket.
   */
  public record Outcome(int rows, int deletes, List<PutReceipt> puts) {
    public static final Outcome NONE = new Outcome(0, 0, List.of());

    public int keys() {
      return rows + deletes;
    }
  }

  private final SchemaSpec spec;
  private final Schema datasetSchema;
  private final String uri;
  private final String name;
  private final BufferAllocator allocator;
  private final BucketWriter[] writers;
  private final RecordCodec codec;
  private final Reads reads;
  private final Runnable onWrite;
  private final Transactions transactions;
  private final ExecutorService putPool;
  private final AtomicLong adds = new AtomicLong();
  private final AtomicLong rowsAdded = new AtomicLong();

  /** {@code onWrite} runs after every acknowledged write (the maintenance schedule). */
  public StoreWrites(SchemaSpec spec, Schema datasetSchema, String uri, String name, BufferAllocator allocator,
      BucketWriter[] writers, RecordCodec codec, Reads reads, Runnable onWrite, Transactions transactions) {
    this.spec = spec;
    this.datasetSchema = datasetSchema;
    this.uri = uri;
    this.name = name;
    this.allocator = allocator;
    this.writers = writers;
    this.codec = codec;
    this.reads = reads;
    this.onWrite = onWrite;
    this.transactions = transactions;
    this.putPool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "lancecontext-add-" + name);
      t.setDaemon(true);
      return t;
    });
  }

  /** The shard (bucket) of a key. */
  public int bucketOf(String key) {
    return Buckets.of(key, writers.length);
  }

  public long adds() {
    return adds.get();
  }

  public long rowsAdded() {
    return rowsAdded.get();
  }

  /**
   * A batch's rows after dedupe by key (the last row of a key wins): {@code last} maps every key to its
   * winning row, in first-seen order; {@code deletes} counts the winning tombstones; {@code buckets} holds
   * the buckets with rows, ascending.
   */
  private record Routed(Map<String, Integer> last, int deletes, List<Route> buckets) {}

  /** One bucket's winning rows of a batch, in batch order, with their keys and how many are tombstones. */
  private record Route(int bucket, int[] rows, List<String> keys, int deletes) {}

  /** Dedupes {@code batch} by key and routes its rows to their buckets; each key decoded and hashed once. */
  private Routed route(VectorSchemaRoot batch) {
    int n = batch.getRowCount();
    VarCharVector keyVector = (VarCharVector) batch.getVector(spec.key());
    BitVector tombstone = spec.has(Capability.TOMBSTONES) ? (BitVector) batch.getVector(SystemColumns.TOMBSTONE) : null;
    String[] keyOf = new String[n];
    Map<String, Integer> last = new LinkedHashMap<>(n * 4 / 3 + 1);
    for (int r = 0; r < n; r++) {
      keyOf[r] = new String(keyVector.get(r), StandardCharsets.UTF_8);
      last.put(keyOf[r], r);
    }
    int[] bucketOfRow = new int[n];
    int[] rowCount = new int[writers.length];
    int[] deleteCount = new int[writers.length];
    int deletes = 0;
    for (int r = 0; r < n; r++) {
      if (last.get(keyOf[r]) != r) {
        bucketOfRow[r] = -1;  // a later row of this batch has the same key
        continue;
      }
      int b = bucketOf(keyOf[r]);
      bucketOfRow[r] = b;
      rowCount[b]++;
      if (isTombstone(tombstone, r)) {
        deleteCount[b]++;
        deletes++;
      }
    }
    int[][] rowsOf = new int[writers.length][];
    List<List<String>> keysOf = new ArrayList<>(writers.length);
    for (int b = 0; b < writers.length; b++) {
      rowsOf[b] = new int[rowCount[b]];
      keysOf.add(rowCount[b] == 0 ? List.of() : new ArrayList<>(rowCount[b]));
    }
    int[] filled = new int[writers.length];
    for (int r = 0; r < n; r++) {
      int b = bucketOfRow[r];
      if (b >= 0) {
        rowsOf[b][filled[b]++] = r;
        keysOf.get(b).add(keyOf[r]);
      }
    }
    List<Route> buckets = new ArrayList<>();
    for (int b = 0; b < writers.length; b++) {
      if (rowCount[b] > 0) {
        buckets.add(new Route(b, rowsOf[b], keysOf.get(b), deleteCount[b]));
      }
    }
    return new Routed(last, deletes, buckets);
  }

  /** Copies each bucket's rows of {@code batch} into a batch of its own (the caller closes them). */
  private List<VectorSchemaRoot> parts(VectorSchemaRoot batch, boolean owned, Routed routed) {
    int n = batch.getRowCount();
    List<VectorSchemaRoot> parts = new ArrayList<>();
    try {
      List<String> columns = datasetSchema.getFields().stream().map(f -> f.getName()).toList();
      for (Route route : routed.buckets()) {
        VectorSchemaRoot copy;
        if (owned && routed.buckets().size() == 1 && route.rows().length == n) {
          copy = RowCopier.transfer(batch, columns, allocator);
        } else {
          copy = RowCopier.copy(batch, columns, route.rows(), route.rows().length, allocator);
        }
        emptyBlobsToNull(copy);
        parts.add(new VectorSchemaRoot(datasetSchema, copy.getFieldVectors(), copy.getRowCount()));
      }
    } catch (RuntimeException e) {
      parts.forEach(VectorSchemaRoot::close);
      throw e;
    }
    return parts;
  }

  // ---------------------------------------------------------------- transactions

  /** What one flush of an atomic handle staged. */
  public record Staged(int rows, int deletes, List<WriteSummary.StagedPart> parts) {}

  /**
   * Stages a batch in the dataset schema (validated here) for transaction {@code txid}: deduplicated by
   * key (the last row wins), split by bucket, each bucket's rows written once as a Lance dataset. Nothing
   * of it is visible until the transaction is published naming these parts. Does not close {@code batch}.
   */
  public Staged stage(VectorSchemaRoot batch, boolean owned, String txid, String partId, int index) {
    try (StagingBuffer buffer = new StagingBuffer(this, txid, partId, index, 0, Long.MAX_VALUE, null)) {
      Staged added = buffer.add(batch, owned);
      Staged flushed = buffer.flush();
      List<WriteSummary.StagedPart> parts = new ArrayList<>(added.parts());
      parts.addAll(flushed.parts());
      return new Staged(added.rows(), added.deletes(), parts);
    }
  }

  /**
   * A staging buffer of one atomic write handle of transaction {@code txid}: it keeps each bucket's rows
   * until the buffer holds about {@code maxBytes} or the bucket {@code maxPartBytes}, so that a handle writes
   * few, large parts (see {@link StagingBuffer}). Each part it writes renews the transaction by {@code timeout}.
   */
  public StagingBuffer stagingBuffer(String txid, String partId, long maxBytes, long maxPartBytes,
      java.time.Duration timeout) {
    return new StagingBuffer(this, txid, partId, 0, maxBytes, maxPartBytes, timeout);
  }

  /** One bucket's rows of a staged batch (after dedupe), the caller owns {@code rows}. */
  record BucketRows(int bucket, VectorSchemaRoot rows, int deletes, List<String> keys) {}

  /**
   * Validates {@code batch} and splits it by bucket, deduplicated by key (the last row wins), each bucket's
   * rows in batch order; the caller closes the roots. Does not close {@code batch}.
   */
  List<BucketRows> splitForStaging(VectorSchemaRoot batch, boolean owned) {
    BatchValidator.validate(spec, batch);
    int n = batch.getRowCount();
    if (n == 0) {
      return List.of();
    }
    Routed routed = route(batch);
    List<VectorSchemaRoot> parts = parts(batch, owned, routed);
    List<BucketRows> out = new ArrayList<>(parts.size());
    for (int i = 0; i < parts.size(); i++) {
      Route route = routed.buckets().get(i);
      out.add(new BucketRows(route.bucket(), parts.get(i), route.deletes(), route.keys()));
    }
    return out;
  }

  /**
   * Stages deletions of keys as parts of transaction attempt {@code txid} (see {@code TxnIds.attempt}) named by
   * {@code partId}, on any store (see {@link DeletionParts}), at most {@code rowsPerPart} keys per part.
   */
  public DeletionParts deletionParts(String txid, String partId, int rowsPerPart) {
    return new DeletionParts(this, txid, partId, rowsPerPart);
  }

  SchemaSpec spec() {
    return spec;
  }

  Schema datasetSchema() {
    return datasetSchema;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  /** The store's transactions (records, parts, liveness). */
  Transactions transactions() {
    return transactions;
  }

  /** Writes one part of {@code txid} from {@code batches} (one bucket's rows, one row per key, in order). */
  void writePart(String txid, int bucket, String partName, List<VectorSchemaRoot> batches) {
    transactions.writePart(txid, bucket, partName, batches);
  }

  /**
   * Publishes transaction {@code txid}: exactly the parts the summaries name become visible to every
   * reader in every process at once (when its record is written). Every bucket touched is claimed first
   * (fencing other writers, who re-seed above the transaction when they claim back) and given its publish
   * sequence, above every stamp present; the record is written while this JVM holds those buckets.
   *
   * @throws TransactionAbortedException if the transaction was aborted
   */
  public PublishResult publish(String transaction, Collection<WriteSummary> summaries) {
    return publish(transaction, summaries, () -> { });
  }

  /**
   * As {@link #publish(String, Collection)}; {@code whileHeld} runs once every touched bucket is claimed for the
   * publish (no put can land in them until it ends) and before the record is written: a check that throws
   * leaves the transaction undecided and nothing published.
   */
  public PublishResult publish(String transaction, Collection<WriteSummary> summaries, Runnable whileHeld) {
    long started = System.nanoTime();
    TxnIds.requireValid(transaction);
    for (WriteSummary w : summaries) {
      if (w.transactionId().isEmpty() || !TxnIds.transactionOf(w.transactionId().get()).equals(transaction)) {
        throw new IllegalArgumentException("a write summary of " + w.transactionId().map(t -> "transaction " + t)
            .orElse("an immediate handle") + " passed to the publish of transaction " + transaction);
      }
    }
    // the attempt a replay after an expiry staged under (TxnIds.attempt): the first that did not expire
    String txid = transaction;
    var existing = transactions.record(txid);
    int attempt = 0;
    while (existing.isPresent() && existing.get().expired()) {
      txid = TxnIds.attempt(transaction, ++attempt);
      existing = transactions.record(txid);
    }
    if (existing.isPresent()) {
      return decided(existing.get(), started);
    }
    String current = txid;
    if (attempt > 0 && summaries.stream().noneMatch(w -> w.transactionId().get().equals(current))) {
      // nothing was staged again since the last attempt expired: that attempt's answer stands
      return decided(transactions.record(TxnIds.attempt(transaction, attempt - 1)).orElseThrow(), started);
    }
    Map<String, WriteSummary.StagedPart> byName = new LinkedHashMap<>();
    for (WriteSummary w : summaries) {
      if (!w.transactionId().get().equals(txid)) {
        // staged under an earlier attempt, which expired: its parts are gone
        return decided(transactions.record(w.transactionId().get()).orElseThrow(), started);
      }
      for (WriteSummary.StagedPart p : w.staged()) {
        if (p.bucket() < 0 || p.bucket() >= writers.length) {
          throw new IllegalArgumentException("a staged part of bucket " + p.bucket() + "; the store has "
              + writers.length);
        }
        byName.putIfAbsent(p.bucket() + "/" + p.name(), p);
      }
    }
    try {
      for (WriteSummary.StagedPart p : byName.values()) {
        if (!transactions.files().prefixExists(TxnIds.partDir(txid, p.bucket(), p.name()) + "/")) {
          throw new io.lancecontext.core.error.StorageException(uri + ": staged part "
              + TxnIds.partDir(txid, p.bucket(), p.name()) + " of transaction " + txid + " does not exist (never "
              + "staged, or collected after its txn.timeout without a publish)", null);
        }
      }
    } catch (IOException e) {
      throw LanceErrors.translate("check the staged parts of transaction " + txid, e);
    }
    TreeSet<Integer> buckets = new TreeSet<>();
    byName.values().forEach(p -> buckets.add(p.bucket()));
    Map<Integer, Long> sequences = new java.util.TreeMap<>();
    List<Integer> begun = new ArrayList<>();
    TxnRecord decided;
    TxnRecord mine = null;
    try {
      // ascending bucket order: two publishes in one JVM cannot deadlock
      for (int b : buckets) {
        sequences.put(b, writers[b].beginPublish());
        begun.add(b);
      }
      whileHeld.run();
      mine = new TxnRecord(txid, true, System.currentTimeMillis(), sequences, new ArrayList<>(byName.values()));
      decided = transactions.decide(mine);
    } finally {
      RuntimeException failed = null;
      for (int b : begun) {
        try {
          if (!writers[b].endPublish()) {
            org.slf4j.LoggerFactory.getLogger(StoreWrites.class).info("{} bucket {}: another writer claimed a lane "
                + "during the publish of transaction {}; claimed it back", name, b, txid);
          }
        } catch (RuntimeException e) {
          // the record decides the transaction either way; a writer that keeps the lane may order its
          // next puts before the transaction (docs/architecture.md, Transactions, limits)
          if (failed == null) {
            failed = e;
          }
        }
      }
      if (failed != null) {
        org.slf4j.LoggerFactory.getLogger(StoreWrites.class).warn("{}: transaction {}: claiming a lane back after "
            + "the publish failed: {}", name, txid, failed.toString());
      }
    }
    if (decided != mine) {
      return decided(decided, started);  // another committer published (or aborted) it meanwhile
    }
    onWrite.run();
    return result(decided, false, started);
  }

  private PublishResult decided(TxnRecord r, long started) {
    if (r.expired()) {
      throw new TransactionExpiredException("transaction " + r.txid() + " of " + uri
          + " expired before it was published: nothing renewed it for its txn.timeout, so garbage collection "
          + "aborted it at " + java.time.Instant.ofEpochMilli(r.atMillis()) + " and deleted its staged rows. Raise "
          + "'txn.timeout' (default 1h) above the longest time a job may stay down before it is restored or "
          + "replayed");
    }
    if (!r.published()) {
      throw new TransactionAbortedException("transaction " + r.txid() + " of " + uri + " was aborted; it cannot be "
          + "published");
    }
    transactions.markPublished();
    return result(r, true, started);
  }

  private static PublishResult result(TxnRecord r, boolean already, long started) {
    long rows = 0;
    long deletes = 0;
    for (WriteSummary.StagedPart p : r.parts()) {
      rows += p.rows();
      deletes += p.deletes();
    }
    return new PublishResult(r.txid(), already, r.parts().size(), rows, deletes, r.sequences(),
        (System.nanoTime() - started) / 1_000_000);
  }

  /**
   * Aborts transaction {@code txid}: none of its parts will ever be visible; garbage collection deletes
   * them after {@code gc.grace}.
   *
   * @return false if it was aborted before
   * @throws TransactionAbortedException if it was published (a transaction is decided once)
   */
  public boolean abort(String transaction) {
    TxnIds.requireValid(transaction);
    String txid = transactions.currentAttempt(transaction);
    TxnRecord mine = TxnRecord.aborted(txid, System.currentTimeMillis());
    TxnRecord r = transactions.decide(mine);
    if (r.published()) {
      throw new TransactionAbortedException("transaction " + txid + " of " + uri + " was published; it cannot be "
          + "aborted");
    }
    return r == mine;
  }

  // ---------------------------------------------------------------- sequences (BucketWriter.Host)

  /** The highest write sequence in a shard's unsealed WAL tail, or -1 if it has none. */
  public long tailSequence(String shardId) {
    try (LsmSnapshot snap = reads.snapshot(Set.of(shardId))) {
      long max = -1;
      for (var source : snap.shard(shardId).sources()) {
        if (source instanceof WalSource w) {
          max = Math.max(max, w.maxSequence());
        }
      }
      return max;
    }
  }

  /** The highest write sequence in a bucket's fresh tier (0 if none). */
  public long maxFreshSequence(int bucket) {
    try (LsmSnapshot snap = reads.snapshot(new HashSet<>(ShardIds.forBucket(bucket)))) {
      long max = 0;
      for (FreshShard s : snap.shards().values()) {
        max = Math.max(max, s.maxSequence());
      }
      return max;
    }
  }

  /**
   * The highest write sequence the latest base table holds for {@code bucket} if it is above {@code floor},
   * else {@code floor}: the highest stamp of its rows (all buckets'; a scan of the rows above the floor), and
   * the bucket's merged publish sequence, which the rows of a part a merge appended whole do not carry.
   */
  public long maxBaseSequence(int bucket, long floor) {
    BaseTable b = reads.base();
    ScanRequest request = ScanRequest.of(List.of(SystemColumns.SEQUENCE)).filter(SystemColumns.SEQUENCE + " > " + floor);
    try (ScanHandle scan = b.dataset().scan(request)) {
      long max = Math.max(floor, MergedWatermarks.read(b.dataset()).getOrDefault(TxnIds.txnShardId(bucket), 0L));
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        BigIntVector v = (BigIntVector) reader.getVectorSchemaRoot().getVector(SystemColumns.SEQUENCE);
        for (int i = 0; i < v.getValueCount(); i++) {
          if (!v.isNull(i)) {
            max = Math.max(max, v.get(i));
          }
        }
      }
      return max;
    } catch (IOException | RuntimeException e) {
      throw LanceErrors.translate("read the highest write sequence of the base table", e);
    } finally {
      b.release();
    }
  }

  // ---------------------------------------------------------------- writes

  /**
   * Writes a batch in the dataset schema (validated here): dedupe by key (last row wins; a row whose
   * {@code _lc_tombstone} is true deletes its key), route each row to its shard, put every shard's rows
   * durably (in parallel), verify each writer still owned its shard. Does not close {@code batch}.
   *
   * @param owned the batch is a temporary of the caller that may be emptied (its vectors are moved
   *     instead of copied when all its rows go to one bucket)
   */
  public Outcome write(VectorSchemaRoot batch, boolean owned) {
    BatchValidator.validate(spec, batch);
    int n = batch.getRowCount();
    if (n == 0) {
      return Outcome.NONE;
    }
    BitVector tombstone = spec.has(Capability.TOMBSTONES) ? (BitVector) batch.getVector(SystemColumns.TOMBSTONE) : null;
    Routed routed = route(batch);
    Map<String, Integer> last = routed.last();
    int deletes = routed.deletes();
    boolean unique = spec.has(Capability.UNIQUE_IDS) && deletes < last.size();
    if (unique) {
      // fail fast, with nothing written, when the keys exist already; the binding check runs per bucket
      // under its writer's lock, right before the put
      rejectExisting(batch, last, tombstone);
    }
    List<Route> buckets = routed.buckets();
    List<VectorSchemaRoot> parts = parts(batch, owned, routed);
    List<PutReceipt> receipts = putAll(buckets, parts,
        unique ? (part, partKeys) -> rejectExisting(part, partKeys, buckets.size() > 1) : null);
    adds.incrementAndGet();
    rowsAdded.addAndGet(last.size());
    onWrite.run();
    return new Outcome(last.size() - deletes, deletes, receipts);
  }

  /**
   * As {@link #write(VectorSchemaRoot, boolean)}, but a batch of at least {@code bulkRows} rows (0: never;
   * never with capability {@code unique-ids}) takes the <b>bulk path</b>: it is written once as Lance data,
   * one part per bucket, and published as a transaction of its own before this returns, instead of as WAL
   * entries that are flushed into generations later. Same contract: durable and visible on return, ordered
   * after every write acknowledged before and before every write acknowledged after.
   */
  public Outcome write(VectorSchemaRoot batch, boolean owned, int bulkRows) {
    if (bulkRows <= 0 || batch.getRowCount() < bulkRows || spec.has(Capability.UNIQUE_IDS)) {
      return write(batch, owned);
    }
    String txid = TxnIds.BULK_PREFIX + java.util.UUID.randomUUID();
    Staged staged = stage(batch, owned, txid, "0", 0);
    if (staged.parts().isEmpty()) {
      return Outcome.NONE;
    }
    publish(txid, List.of(new WriteSummary(staged.rows(), staged.deletes(), List.of(), txid, staged.parts())));
    adds.incrementAndGet();
    rowsAdded.addAndGet(staged.rows() + staged.deletes());
    bulkWrites.incrementAndGet();
    return new Outcome(staged.rows(), staged.deletes(), List.of());
  }

  private final AtomicLong bulkWrites = new AtomicLong();

  /** Batches written through the bulk path. */
  public long bulkWrites() {
    return bulkWrites.get();
  }

  private static boolean isTombstone(BitVector tombstone, int row) {
    return tombstone != null && !tombstone.isNull(row) && tombstone.get(row) == 1;
  }

  /**
   * Stores an empty value of a nullable blob column as null: lance-core 7.0.0's merge turns null blobs
   * into zero-length ones, so only one of the two can be told apart in every tier.
   */
  private void emptyBlobsToNull(VectorSchemaRoot part) {
    for (var c : spec.blobColumns()) {
      if (!c.nullable()) {
        continue;
      }
      var v = (org.apache.arrow.vector.VariableWidthFieldVector) part.getVector(c.name());
      for (int i = 0; i < part.getRowCount(); i++) {
        if (!v.isNull(i) && v.getValueLength(i) == 0) {
          v.setNull(i);
        }
      }
    }
  }

  /** Puts every part on its shard; parts go to the shard writers, which close them. */
  private List<PutReceipt> putAll(List<Route> buckets, List<VectorSchemaRoot> parts, BucketWriter.KeyCheck check) {
    if (buckets.size() == 1) {
      return List.of(writers[buckets.get(0).bucket()].put(parts.get(0), buckets.get(0).keys(), check));
    }
    // shards are put in parallel; the first on the calling thread
    List<Future<PutReceipt>> futures = new ArrayList<>();
    for (int i = 1; i < buckets.size(); i++) {
      Route route = buckets.get(i);
      VectorSchemaRoot part = parts.get(i);
      try {
        futures.add(putPool.submit(() -> writers[route.bucket()].put(part, route.keys(), check)));
      } catch (RejectedExecutionException e) {
        // only after close gave up waiting for this add; the parts not handed over are freed
        parts.get(0).close();
        parts.subList(i, parts.size()).forEach(VectorSchemaRoot::close);
        throw new StoreClosedException("the store " + uri + " was closed in this JVM while this add was in "
            + "flight; it was not acknowledged (rows of some shards may be durable). Open the store again and retry",
            true, e);
      }
    }
    List<PutReceipt> receipts = new ArrayList<>();
    RuntimeException first = null;
    try {
      receipts.add(writers[buckets.get(0).bucket()].put(parts.get(0), buckets.get(0).keys(), check));
    } catch (RuntimeException e) {
      first = e;
    }
    for (Future<PutReceipt> f : futures) {
      try {
        receipts.add(f.get());
      } catch (ExecutionException e) {
        RuntimeException r = e.getCause() instanceof RuntimeException re ? re
            : LanceErrors.translate("put", e.getCause());
        if (first == null) {
          first = r;
        } else {
          first.addSuppressed(r);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        WriteInterruptedException w = new WriteInterruptedException(name + ": the calling thread was interrupted while "
            + "the puts of other shards were in flight; they complete in the background", e);
        if (first != null) {
          w.addSuppressed(first);
        }
        throw w;
      }
    }
    if (first != null) {
      throw first;
    }
    return receipts;
  }

  /** {@link #rejectExisting(VectorSchemaRoot, Collection, boolean)} for the rows {@code lastRow} maps keys to. */
  private void rejectExisting(VectorSchemaRoot batch, Map<String, Integer> lastRow, BitVector tombstone) {
    List<String> keys = new ArrayList<>();
    for (var e : lastRow.entrySet()) {
      if (!isTombstone(tombstone, e.getValue())) {
        keys.add(e.getKey());
      }
    }
    Map<String, Map<String, Object>> existing = existing(keys);
    if (existing.isEmpty()) {
      return;
    }
    List<String> clashing = new ArrayList<>();
    for (String k : keys) {
      Map<String, Object> stored = existing.get(k);
      if (stored != null && !sameRecord(stored, codec.decodeRow(batch, lastRow.get(k)))) {
        clashing.add(k);
      }
    }
    throwIfAny(clashing, false);
  }

  /**
   * Capability {@code unique-ids}: fails if a key of {@code batch} (dataset schema, one row per key)
   * exists with other content. A stored row equal to the one being added is not a violation: it is this
   * add, retried after it failed unacknowledged. Tombstone rows are not checked.
   */
  private void rejectExisting(VectorSchemaRoot batch, Collection<String> keys, boolean otherBuckets) {
    Map<String, Map<String, Object>> existing = existing(keys);
    if (existing.isEmpty()) {
      return;
    }
    BitVector tombstone = spec.has(Capability.TOMBSTONES) ? (BitVector) batch.getVector(SystemColumns.TOMBSTONE) : null;
    List<Map<String, Object>> rows = codec.decode(batch);
    List<String> clashing = new ArrayList<>();
    for (int r = 0; r < rows.size(); r++) {
      if (isTombstone(tombstone, r)) {
        continue;
      }
      Map<String, Object> row = rows.get(r);
      String k = (String) row.get(spec.key());
      Map<String, Object> stored = existing.get(k);
      if (stored != null && !sameRecord(stored, row)) {
        clashing.add(k);
      }
    }
    throwIfAny(clashing, otherBuckets);
  }

  private void throwIfAny(List<String> clashing, boolean otherBuckets) {
    if (clashing.isEmpty()) {
      return;
    }
    throw new UniqueKeyViolationException("capability unique-ids: " + clashing.size()
        + " key(s) already exist in " + uri + " with other content: " + clashing.stream().limit(10).toList()
        + (clashing.size() > 10 ? " ..." : "") + "; " + (otherBuckets
        ? "their rows were not written (rows of this call in other shards may have been)" : "nothing was written"),
        clashing);
  }

  /** The stored records of those {@code keys} that exist (deleted keys do not; expired ones do). */
  private Map<String, Map<String, Object>> existing(Collection<String> keys) {
    Map<String, Map<String, Object>> out = new HashMap<>();
    if (keys.isEmpty()) {
      return out;
    }
    for (Map<String, Object> r : reads.lookup(new ArrayList<>(keys), spec.columnNames(), true, Instant.now())) {
      out.put((String) r.get(spec.key()), r);
    }
    return out;
  }

  /** Whether two decoded records hold the same values (arrays and nested values compared by content). */
  static boolean sameRecord(Object a, Object b) {
    if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
      Set<Object> names = new HashSet<>(ma.keySet());
      names.addAll(mb.keySet());
      for (Object n : names) {
        if (!sameRecord(ma.get(n), mb.get(n))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof List<?> la && b instanceof List<?> lb) {
      if (la.size() != lb.size()) {
        return false;
      }
      for (int i = 0; i < la.size(); i++) {
        if (!sameRecord(la.get(i), lb.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a == null && b instanceof byte[] bytes || b == null && a instanceof byte[] bytes2) {
      return (a == null ? (byte[]) b : (byte[]) a).length == 0;  // an empty blob is stored as null
    }
    return java.util.Objects.deepEquals(a, b);
  }

  /** Stops the pool that puts shards in parallel (after the store's operations drained). */
  public void close() {
    putPool.shutdown();
  }
}
