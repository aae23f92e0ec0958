package io.lancecontext.core;

import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.store.HandleWrites;
import io.lancecontext.core.internal.store.ResidentStore;
import io.lancecontext.core.internal.store.SplitOptions;
import io.lancecontext.core.internal.store.StoreDrop;
import io.lancecontext.core.internal.store.StoreRegistry;
import io.lancecontext.core.internal.txn.ReplacePublish;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.write.Buckets;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.result.FlushResult;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A context store: one Lance dataset with MemWAL shards, written by many processes and read as one
 * LSM view (newest row per key, deletions hidden).
 *
 * <p>Contracts:
 * <ul>
 *   <li>When {@link #add} (or {@link #delete}) returns, its rows are durable (they survive a crash of this
 *       process) and visible to every reader in every process.</li>
 *   <li>Adds upsert by key; within one call the last row of a key wins. A call that throws
 *       {@link io.lancecontext.core.error.WriteNotAcknowledgedException} (fenced, timed out, interrupted)
 *       acknowledged nothing, but may have stored some rows; retrying it is safe.</li>
 *   <li>Every failure is a {@link io.lancecontext.core.error.LanceContextException}, which says whether
 *       retrying the call is safe ({@code isRetryable()}).</li>
 *   <li>Reads see the newest row of every key; filters never return a row a newer version replaced.</li>
 * </ul>
 *
 * <p>A handle is cheap: every handle to one location in a JVM shares one resident store (one writer per
 * shard, one cache), which stays resident after the last handle is closed until it has been idle for a
 * while. Handles are thread-safe.
 */
public final class ContextStore extends StoreHandle implements AutoCloseable {
  private final StoreRegistry registry;
  private final HandleWrites writes;

  ContextStore(StoreRegistry registry, ResidentStore store, StoreConfig config) {
    super(store, config);
    this.registry = registry;
    this.writes = new HandleWrites(store, config);
  }

  /** Opens the store at option {@code path}, creating it when option {@code schema} is given and none exists. */
  public static ContextStore open(Map<String, String> options) {
    return open(StoreConfig.of(options));
  }

  public static ContextStore open(StoreConfig config) {
    return open(StoreRegistry.INSTANCE, config);
  }

  /**
   * Deletes the store at option {@code path}: closed in this JVM first (handles to it then fail with a retryable
   * {@link StoreClosedException}), then every object of it deleted. Processes that still write it are not
   * stopped. Returns false, deleting nothing, when no store is there.
   */
  public static boolean drop(Map<String, String> options) {
    return StoreDrop.drop(StoreConfig.of(options));
  }

  /** A handle from {@code registry} (tests use registries of their own). */
  static ContextStore open(StoreRegistry registry, StoreConfig config) {
    return new ContextStore(registry, registry.acquire(config), config);
  }

  /**
   * The bucket of {@code key} in a store of {@code shards} buckets, without opening it (Iceberg's bucket
   * transform: {@code (murmur3_x86_32(utf8(key)) & Integer.MAX_VALUE) % shards}).
   */
  public static int bucketOf(String key, int shards) {
    return Buckets.of(key, shards);
  }

  /**
   * The bucket of the UTF-8 key in {@code utf8[offset, offset + length)}, as {@link #bucketOf(String, int)} gives
   * for the key it encodes, without decoding it (an engine's string bytes: Spark's {@code UTF8String}, Flink's
   * {@code BinaryStringData}).
   */
  public static int bucketOf(byte[] utf8, int offset, int length, int shards) {
    return Buckets.of(utf8, offset, length, shards);
  }

  // ---------------------------------------------------------------- writes

  /** Adds (upserts) records; see the class contract. Returns the rows written (after dedupe by key). */
  public int add(List<? extends Map<String, ?>> records) {
    return writes().add(records);
  }

  /**
   * Adds (upserts) an Arrow batch, in the store's dataset schema ({@link SchemaSpec#toArrowSchema()}; system
   * column values are stamped, but {@code _lc_tombstone} deletes its key) or in the user schema
   * ({@link SchemaSpec#toUserArrowSchema()}, conformed by column name as {@link StoreWriter#write(VectorSchemaRoot)}
   * does). The batch is not closed. Returns the rows written (after dedupe by key).
   */
  public int add(VectorSchemaRoot batch) {
    return writes().add(batch);
  }

  /** Deletes keys (writes tombstones); needs capability {@code tombstones}. Durable and visible on return. */
  public int delete(Collection<String> keys) {
    return writes().delete(keys);
  }

  /** A write handle for one task, keyless rows getting random UUIDv7 keys (see {@link StoreWriter}). */
  public StoreWriter newWriter() {
    return newWriter(WriterOptions.defaults());
  }

  /** A write handle for one task (see {@link StoreWriter}, and {@link WriterOptions} for the id seed). */
  public StoreWriter newWriter(WriterOptions options) {
    check();
    return new StoreWriter(this, options);
  }

  /** The handle's writes (for its write handles too), once the handle is checked open. */
  HandleWrites writes() {
    check();
    return writes;
  }

  // ---------------------------------------------------------------- transactions

  /**
   * Readies this process to publish transactions (a Flink committer and a Spark driver call it when they start):
   * every bucket's write lanes are opened and claimed in the background, as a first publish would, so that the first
   * publish does not wait for them (54-258 ms for 4 buckets on a local disk, one claim per lane). Returns at once;
   * what fails is left to the first publish, which opens what is still closed and reports its own errors.
   */
  public void preparePublishing() {
    live().preparePublishing();
  }

  /**
   * Publishes transaction {@code transactionId} (a Spark driver's job commit, a Flink committer): exactly the
   * parts the summaries name become visible together, to every reader in every process. A replay is safe
   * ({@link PublishResult#alreadyPublished()}); a failed publish published nothing or everything. See
   * docs/architecture.md, "Transactions", for ordering and cost.
   *
   * @throws io.lancecontext.core.error.TransactionAbortedException if the transaction was aborted
   * @throws IllegalArgumentException if a summary is not of this transaction
   */
  public PublishResult publish(String transactionId, Collection<WriteSummary> summaries) {
    return live().operation("publish a transaction", () -> store.publisher().publish(transactionId, summaries));
  }

  /** As {@link #publish}, running {@code whileHeld} once every touched bucket is held (it may refuse by throwing). */
  PublishResult publish(String transactionId, Collection<WriteSummary> summaries, Runnable whileHeld) {
    return live().operation("publish a transaction",
        () -> store.publisher().publish(transactionId, summaries, whileHeld));
  }

  /**
   * Deletes every key whose newest row matches {@code filter}, in one transaction; if another writer changes one
   * of them before the publish so that it no longer matches, nothing is deleted and a retryable
   * {@link io.lancecontext.core.error.CommitConflictException} names the key. Needs capability {@code tombstones}.
   *
   * @return the publish, whose {@code keysDeleted} counts the keys deleted
   */
  public PublishResult deleteWhere(Predicate filter) {
    return deleteWhere(filter, () -> { });
  }

  /** {@link #deleteWhere(Predicate)} running {@code afterRead} between its read and its publish (tests). */
  PublishResult deleteWhere(Predicate filter, Runnable afterRead) {
    check();
    writes.requireTombstones();
    return DeleteWhere.run(this, filter, afterRead);
  }

  /**
   * Publishes a transaction of deletions whose keys a read taken at {@code readAt} chose, only if none of those
   * keys changed since (else a retryable {@link io.lancecontext.core.error.CommitConflictException} naming the
   * key, and nothing deleted). Replays are safe as for {@link #publish}.
   */
  public PublishResult publishDeletes(String transactionId, Collection<WriteSummary> summaries, Instant readAt) {
    return live().operation("publish a delete",
        () -> DeleteConflicts.publish(this, store, transactionId, summaries, java.util.Objects.requireNonNull(readAt)));
  }

  /**
   * Publishes transaction {@code transactionId} as {@link #publish} does and in the same publish deletes every
   * key it does not write: afterwards the store holds exactly the transaction's rows (an overwrite, on every
   * store). Readers see the contents before or after, never a mix; keys first written by others after the call
   * read the view keep their rows. See docs/architecture.md, "Transactions".
   *
   * @throws io.lancecontext.core.error.TransactionAbortedException if the transaction was aborted
   */
  public PublishResult publishReplacing(String transactionId, Collection<WriteSummary> summaries) {
    return publishReplacing(transactionId, summaries, () -> { });
  }

  /** {@link #publishReplacing(String, Collection)} running {@code afterRead} between its key read and its publish (tests). */
  PublishResult publishReplacing(String transactionId, Collection<WriteSummary> summaries, Runnable afterRead) {
    return live().operation("publish a replacing transaction",
        () -> ReplacePublish.publish(new ReplacingStore(this, store, afterRead), transactionId, summaries));
  }

  /**
   * Keeps transaction {@code transactionId} alive until the lease is closed, so that garbage collection never
   * aborts a transaction whose job still runs (a Spark driver holds it from the start of a write to its commit;
   * atomic write handles hold theirs while open).
   */
  public TransactionLease holdTransaction(String transactionId) {
    TxnIds.requireValid(transactionId);
    return holdAttempt(writes().currentAttempt(transactionId));
  }

  /** Holds one attempt of a transaction alive (an atomic handle's, see TxnIds.attempt). */
  TransactionLease holdAttempt(String attemptId) {
    check();
    AutoCloseable held = store.transactions().liveness().hold(attemptId, config().get(StoreOptions.TXN_TIMEOUT));
    return () -> {
      try {
        held.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);  // never: the lease's close throws nothing
      }
    };
  }

  /**
   * Aborts transaction {@code transactionId}: nothing it staged will be visible, and a late publish fails.
   *
   * @return false if it was aborted before
   * @throws io.lancecontext.core.error.TransactionAbortedException if it was published
   */
  public boolean abort(String transactionId) {
    return live().operation("abort a transaction", () -> store.publisher().abort(transactionId));
  }

  /**
   * Builds (or rebuilds, when stale) the vector index of each vector column and the full-text index of each of
   * {@code search.text-columns} now, whatever
   * {@code search.index.min-rows} says; maintenance otherwise does so in the background. Returns the columns
   * whose index was built.
   */
  public List<String> buildSearchIndexes() {
    return live().maintenance().buildSearchIndexes();
  }

  /**
   * The keys a read of a {@code spec} store with {@code scan}'s filter is confined to and reads by key (point
   * lookups instead of a scan); empty when it scans. Engines show it in their plans.
   */
  public static Optional<java.util.Set<String>> keysReadByKey(SchemaSpec spec, ScanSpec scan) {
    return Optional.ofNullable(io.lancecontext.core.internal.read.Predicates.keysReadByKey(spec, scan.filter()));
  }

  /**
   * Whether a read of a {@code spec} store with {@code scan} only counts the view's records, taking them from its
   * indexes where it can (no column, no filter, limit or offset, no lifecycle rule or supersession hiding rows):
   * engines may then push a {@code COUNT(*)} down to such a read, summing what its splits count.
   */
  public static boolean countsOnly(SchemaSpec spec, ScanSpec scan) {
    return io.lancecontext.core.internal.read.ScanRules.countsOnly(spec, scan);
  }

  /**
   * Opens the store a split names in a process that did not plan it (a Spark executor, a Flink task manager),
   * with the reading side's own credentials: the {@code storage.*} entries of {@code options} (other keys are
   * ignored). Every other option takes the value of the store resident in this JVM, or its default.
   */
  public static ContextStore openForSplit(ReadSplit split, Map<String, String> options) {
    return open(SplitOptions.of(split, options));
  }

  public StoreStats stats() {
    return live().stats(registry.residentStores(), registry.openWriters());
  }

  // ---------------------------------------------------------------- maintenance

  /**
   * Seals the generations this JVM's writers hold open, then merges flushed generations into the base table now
   * (at most {@code merge.max-bytes}; the result says what is {@code remaining}). Skipped when another process
   * holds the maintenance lease.
   */
  public MergeResult merge() {
    return live().operation("merge", () -> {
      store.sealAll("merge requested");
      return store.maintenance().merge();
    });
  }

  /**
   * Flushes everything into the base table, within {@code merge.flush-timeout}; see {@link #flush(Duration)}.
   */
  public FlushResult flush() {
    return flush(store.config().get(StoreOptions.FLUSH_TIMEOUT));
  }

  /**
   * Flushes everything into the base table: when it returns {@link FlushResult#complete() complete}, every row
   * acknowledged (by any process) before the call started is in the base table and no deleted key is left there,
   * so any Lance reader of the base table finds it. It claims shards whose WAL tail another process left (which
   * fences that writer until {@code write.fence-backoff} passes), logs progress at INFO, and past {@code timeout}
   * returns an incomplete result saying what is left. See docs/architecture.md, "Maintenance".
   */
  public FlushResult flush(Duration timeout) {
    return live().operation("flush", () -> store.maintenance().flush(timeout));
  }

  /** Compacts the base table now (deferred index remap; the key index is rebuilt). */
  public CompactionResult compact() {
    return live().operation("compact", () -> store.maintenance().compact());
  }

  /** Deletes merged generations, sealed WAL entries and old versions older than {@code gc.grace}. */
  public GcResult gc() {
    return live().operation("collect garbage", () -> store.maintenance().gc());
  }

  /** Seals every shard's open generation now and waits (it then becomes mergeable). */
  public void seal() {
    check();
    store.operation("seal", () -> {
      store.sealAll("requested");
      return null;
    });
  }

  /** Releases this handle; the store stays resident for other handles and for a while after. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      registry.release(store);
    }
  }

  /**
   * Closes every resident store of this JVM now (tests, shutdown): calls in flight complete first; later calls
   * through handles opened before fail with a retryable {@link StoreClosedException}.
   */
  public static void closeAllResident() {
    StoreRegistry.INSTANCE.closeAll();
  }

  /** Stores resident in this JVM. */
  public static int residentStores() {
    return StoreRegistry.INSTANCE.residentStores();
  }

  /** The shared state behind this handle (tests). */
  ResidentStore resident() {
    return store;
  }

  @Override
  public String toString() {
    return "ContextStore[" + uri() + "]";
  }
}
