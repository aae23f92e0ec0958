package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.internal.txn.StagedRows;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.error.WriteInterruptedException;
import io.lancecontext.core.internal.codec.BatchValidator;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.read.BaseTable;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write path of one resident store: a validated batch in the dataset schema is deduplicated by key
 * (the last row wins, a tombstone row included), routed to the bucket of each key, put durably on every
 * bucket's resident writer (in parallel) and acknowledged once every writer still owned its shard
 * ({@link UniqueIdsCheck} first, with capability {@code unique-ids}); and the staging of transaction parts,
 * whose publish is the {@link Publisher}'s. Thread-safe.
 */
public final class StoreWrites {
  private static final Logger LOG = LoggerFactory.getLogger(StoreWrites.class);

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
  private final Publisher publisher;
  private final UniqueIdsCheck uniqueIds;
  private final ExecutorService putPool;

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
    this.publisher = new Publisher(writers, transactions, uri, name, onWrite);
    this.uniqueIds = new UniqueIdsCheck(spec, codec, reads, uri);
    this.putPool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "lancecontext-add-" + name);
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Runs {@code task} on one of the store's own threads and returns at once; a failure is logged (at debug: the
   * caller's later foreground call meets it again and reports it), as is a store closed before it ran.
   */
  public void inBackground(String action, Runnable task) {
    try {
      putPool.execute(() -> {
        try {
          task.run();
        } catch (RuntimeException e) {
          LOG.debug("{}: {} in the background failed: {}", name, action, e.toString());
        }
      });
    } catch (RejectedExecutionException e) {
      LOG.debug("{}: {}: the store is closing", name, action);
    }
  }

  /** The shard (bucket) of a key. */
  public int bucketOf(String key) {
    return Buckets.of(key, writers.length);
  }

  /**
   * Copies each bucket's rows of {@code batch} ({@code rowsOf}, one array per bucket) into a batch of its own (the
   * caller closes them).
   */
  private List<VectorSchemaRoot> parts(VectorSchemaRoot batch, boolean owned, List<int[]> rowsOf) {
    int n = batch.getRowCount();
    List<VectorSchemaRoot> parts = new ArrayList<>();
    try {
      List<String> columns = datasetSchema.getFields().stream().map(f -> f.getName()).toList();
      for (int[] rows : rowsOf) {
        VectorSchemaRoot copy;
        if (owned && rowsOf.size() == 1 && rows.length == n) {
          copy = RowCopier.transfer(batch, columns, allocator);
        } else {
          copy = RowCopier.copy(batch, columns, rows, rows.length, allocator);
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

  /**
   * One bucket's rows of a staged batch (after dedupe), the caller owns {@code rows}; {@code keyHashes} are the
   * 64-bit hashes of their keys (see {@link KeyRoute}).
   */
  record BucketRows(int bucket, VectorSchemaRoot rows, int deletes, long[] keyHashes) {}

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
    List<KeyRoute.Bucket> routed = route(batch, tombstones(spec, batch));
    List<VectorSchemaRoot> parts = parts(batch, owned, routed.stream().map(KeyRoute.Bucket::rows).toList());
    List<BucketRows> out = new ArrayList<>(parts.size());
    for (int i = 0; i < parts.size(); i++) {
      KeyRoute.Bucket b = routed.get(i);
      out.add(new BucketRows(b.bucket(), parts.get(i), b.deletes(), b.keyHashes()));
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
    List<LanceFragment> fragments = transactions.writePart(txid, bucket, partName, batches);
    StagedKeys staged = transactions.stagedKeys();
    if (staged.wanted()) {  // a reader in this JVM takes them once the part is published
      StagedKeys.Keys keys = StagedKeys.Keys.of(batches, spec.key(), SystemColumns.TOMBSTONE);
      // the batches are closed after this call: their vectors are moved, not copied
      staged.offer(TxnIds.partDir(txid, bucket, partName), keys, StagedRows.moveFrom(batches, allocator),
          fragments.stream().map(LanceFragment::identity).toList());
    }
  }

  /** Publishes and aborts this store's transactions. */
  public Publisher publisher() {
    return publisher;
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
    BitVector tombstone = tombstones(spec, batch);
    List<KeyRoute.Bucket> buckets = route(batch, tombstone);
    List<int[]> rowsOf = buckets.stream().map(KeyRoute.Bucket::rows).toList();
    int rows = 0;
    int deletes = 0;
    for (KeyRoute.Bucket b : buckets) {
      rows += b.rows().length;
      deletes += b.deletes();
    }
    boolean unique = spec.has(Capability.UNIQUE_IDS) && deletes < rows;
    if (unique) {
      // fail fast, with nothing written, when the keys exist already; the binding check runs per bucket
      // under its writer's lock, right before the put
      uniqueIds.rejectExisting(batch, rowsOf, tombstone);
    }
    List<VectorSchemaRoot> parts = parts(batch, owned, rowsOf);
    List<PutReceipt> receipts = putAll(buckets, parts,
        unique ? part -> uniqueIds.rejectExisting(part, buckets.size() > 1) : null);
    onWrite.run();
    return new Outcome(rows - deletes, deletes, receipts);
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
    publisher.publish(txid, List.of(new WriteSummary(staged.rows(), staged.deletes(), List.of(), txid, staged.parts())));
    bulkWrites.incrementAndGet();
    return new Outcome(staged.rows(), staged.deletes(), List.of());
  }

  private final AtomicLong bulkWrites = new AtomicLong();

  /** Batches written through the bulk path. */
  public long bulkWrites() {
    return bulkWrites.get();
  }

  /** The tombstone column of a batch in the dataset schema; null without capability {@code tombstones}. */
  static BitVector tombstones(SchemaSpec spec, VectorSchemaRoot batch) {
    return spec.has(Capability.TOMBSTONES) ? (BitVector) batch.getVector(SystemColumns.TOMBSTONE) : null;
  }

  /** A batch's winning rows by bucket ({@link KeyRoute}). */
  private List<KeyRoute.Bucket> route(VectorSchemaRoot batch, BitVector tombstone) {
    return KeyRoute.of((VarCharVector) batch.getVector(spec.key()), tombstone, batch.getRowCount(), writers.length);
  }

  static boolean isTombstone(BitVector tombstone, int row) {
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
  private List<PutReceipt> putAll(List<KeyRoute.Bucket> buckets, List<VectorSchemaRoot> parts,
      BucketWriter.KeyCheck check) {
    if (buckets.size() == 1) {
      return List.of(writers[buckets.get(0).bucket()].put(parts.get(0), buckets.get(0).keyHashes(), check));
    }
    // shards are put in parallel; the first on the calling thread
    List<Future<PutReceipt>> futures = new ArrayList<>();
    for (int i = 1; i < buckets.size(); i++) {
      KeyRoute.Bucket route = buckets.get(i);
      VectorSchemaRoot part = parts.get(i);
      try {
        futures.add(putPool.submit(() -> writers[route.bucket()].put(part, route.keyHashes(), check)));
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
      receipts.add(writers[buckets.get(0).bucket()].put(parts.get(0), buckets.get(0).keyHashes(), check));
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

  /** Stops the pool that puts shards in parallel (after the store's operations drained). */
  public void close() {
    putPool.shutdown();
  }
}
