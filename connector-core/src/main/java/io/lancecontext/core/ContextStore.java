package io.lancecontext.core;

import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.io.ReadLeases;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.ReadPlanner;
import io.lancecontext.core.internal.read.StoreScan;
import io.lancecontext.core.internal.read.VectorSearch;
import io.lancecontext.core.internal.store.HandleWrites;
import io.lancecontext.core.internal.store.IncrementalReads;
import io.lancecontext.core.internal.store.ResidentStore;
import io.lancecontext.core.internal.store.SplitOptions;
import io.lancecontext.core.internal.store.StoreDrop;
import io.lancecontext.core.internal.txn.ReplacePublish;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.store.StoreRegistry;
import io.lancecontext.core.internal.store.StoreSnapshots;
import io.lancecontext.core.internal.write.Buckets;
import io.lancecontext.core.internal.write.StagingBuffer;
import io.lancecontext.core.internal.write.StoreWrites;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadLease;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.result.FlushResult;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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
public final class ContextStore implements AutoCloseable {
  private final StoreRegistry registry;
  private final ResidentStore store;
  private final StoreConfig config;
  private final HandleWrites writes;
  private volatile boolean closed;

  ContextStore(StoreRegistry registry, ResidentStore store, StoreConfig config) {
    this.registry = registry;
    this.store = store;
    this.config = config;
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
   * Deletes the store at option {@code path}: closed in this JVM first (its writers sealed; handles to it then
   * fail with a retryable {@link StoreClosedException}, other stores stay open), then every object of it
   * deleted. Processes that still write it are not stopped. Returns false, deleting nothing, when no store is
   * there (a location without a Lance table is never deleted).
   */
  public static boolean drop(Map<String, String> options) {
    return StoreDrop.drop(StoreConfig.of(options));
  }

  /** A handle from {@code registry} (tests use registries of their own). */
  static ContextStore open(StoreRegistry registry, StoreConfig config) {
    return new ContextStore(registry, registry.acquire(config), config);
  }

  public SchemaSpec spec() {
    return store.spec();
  }

  public String uri() {
    return store.config().uri();
  }

  /** The options this handle was opened with. */
  public StoreConfig config() {
    return config;
  }

  public int shards() {
    return store.shards();
  }

  /** The bucket (shard number) of a key; engines cluster rows by it so that one task writes one shard. */
  public int bucketOf(String key) {
    return store.bucketOf(key);
  }

  /**
   * The bucket of {@code key} in a store of {@code shards} buckets, without opening it: what
   * {@link #bucketOf(String)} returns ({@code (murmur3_x86_32(utf8(key)) & Integer.MAX_VALUE) % shards},
   * Iceberg's bucket transform). Engines key rows by it before writing so one task writes one bucket.
   */
  public static int bucketOf(String key, int shards) {
    return Buckets.of(key, shards);
  }

  // ---------------------------------------------------------------- writes

  /** Adds (upserts) records; see the class contract. Returns the rows written (after dedupe by key). */
  public int add(List<? extends Map<String, ?>> records) {
    check();
    return writes.add(records);
  }

  /**
   * Adds (upserts) an Arrow batch: either in the store's dataset schema ({@link SchemaSpec#toArrowSchema()},
   * system columns included; their values are stamped by the store, except {@code _lc_tombstone}, which
   * deletes its key), validated by the same rules as records, or in the user schema
   * ({@link SchemaSpec#toUserArrowSchema()}, no system column), conformed by column name as a write
   * handle does ({@link StoreWriter#write(VectorSchemaRoot)}; keyless rows get random UUIDv7 keys). The
   * batch is not closed. Returns the rows written (after dedupe by key).
   */
  public int add(VectorSchemaRoot batch) {
    check();
    return writes.add(batch);
  }

  /** Deletes keys (writes tombstones); needs capability {@code tombstones}. Durable and visible on return. */
  public int delete(Collection<String> keys) {
    check();
    return writes.delete(keys);
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

  /** The attempt of transaction {@code txid} an atomic handle opened now stages under (see TxnIds.attempt). */
  String currentAttempt(String txid) {
    check();
    return writes.currentAttempt(txid);
  }

  /** The staging buffer of an atomic write handle (see {@link HandleWrites#stagingBuffer}). */
  StagingBuffer stagingBuffer(String txid, String partId) {
    check();
    return writes.stagingBuffer(txid, partId);
  }

  /** Stages a batch in the dataset schema through an atomic handle's buffer (null batch: flush it). */
  StoreWrites.Staged stage(StagingBuffer buffer, VectorSchemaRoot batch, boolean owned) {
    check();
    return writes.stage(buffer, batch, owned);
  }

  // ---------------------------------------------------------------- transactions

  /**
   * Publishes transaction {@code transactionId} (a Spark driver's job commit, a Flink committer): exactly
   * the parts the atomic handles' summaries name become visible together, to every reader in every
   * process; parts staged under the transaction but not named (failed attempts, speculative losers) never
   * do. The transaction is ordered after every write acknowledged before this call began and before every
   * write acknowledged after it returned; within it the last row of a key wins (see
   * {@link WriterOptions.Builder#transaction}). Publishing a transaction published before changes nothing
   * and says so ({@link PublishResult#alreadyPublished()}), whatever summaries are passed: a replay after
   * failover is safe. A publish that fails (or a process killed during it) published nothing or
   * everything: call it again to know which.
   *
   * <p>Cost: each bucket the transaction touches is claimed by this JVM (fencing the writers of other
   * processes there, which claim it back after {@code write.fence-backoff}), then one small record is
   * written.
   *
   * @throws io.lancecontext.core.error.TransactionAbortedException if the transaction was aborted
   * @throws IllegalArgumentException if a summary is not of this transaction
   */
  public PublishResult publish(String transactionId, Collection<WriteSummary> summaries) {
    check();
    return store.operation("publish a transaction", () -> store.publisher().publish(transactionId, summaries));
  }

  /** As {@link #publish}, running {@code whileHeld} once every touched bucket is held (it may refuse by throwing). */
  PublishResult publish(String transactionId, Collection<WriteSummary> summaries, Runnable whileHeld) {
    check();
    return store.operation("publish a transaction",
        () -> store.publisher().publish(transactionId, summaries, whileHeld));
  }

  /**
   * Deletes every key whose newest row matches {@code filter}, in one transaction: all of them disappear together
   * for every reader, and a failure leaves the store unchanged. The keys are read from one snapshot; if another
   * writer changes one of them before the delete is published so that it no longer matches, nothing is deleted
   * and a {@link io.lancecontext.core.error.CommitConflictException} (retryable) names the key. Keys that start
   * to match after the read (written by others meanwhile) are not deleted. Needs capability {@code tombstones}.
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
   * Publishes a transaction of deletions whose keys a read taken at {@code readAt} chose (a Spark {@code DELETE}
   * whose condition Spark evaluates itself, {@link ReadPlan#plannedAt()} of its scan), only if none of those keys
   * changed since: while the publish holds every bucket it touches, a key whose newest row was written (or
   * deleted) by another writer after {@code readAt} fails it with a retryable
   * {@link io.lancecontext.core.error.CommitConflictException} naming the key, and nothing is deleted. Replays
   * are safe as for {@link #publish}.
   */
  public PublishResult publishDeletes(String transactionId, Collection<WriteSummary> summaries, Instant readAt) {
    check();
    return store.operation("publish a delete",
        () -> DeleteConflicts.publish(this, store, transactionId, summaries, java.util.Objects.requireNonNull(readAt)));
  }

  /**
   * Publishes transaction {@code transactionId} as {@link #publish} does, and in the same publish deletes
   * every key it does not write (superseded, retired and expired ones included, so none reappears):
   * afterwards the store holds exactly the transaction's rows. Works on every store: on one without capability
   * {@code tombstones} the deletions live in the transaction's parts until a merge deletes the base rows they
   * hide. Readers in every process see the contents before or after, never a mix and never an empty store; a
   * failed call changed nothing or everything, as {@link #publish}. Replays are safe: a transaction published
   * before changes nothing. It costs a read of the view's keys and one staged tombstone per key, before the one
   * record is written.
   *
   * <p>Rows other writers add while the call runs: the keys deleted are those visible when the call reads
   * them, at its start. A key among them is deleted even if another writer rewrote it since (the publish is
   * ordered after every row acknowledged before it); a key first written after that read keeps its row; rows
   * acknowledged after the call returns are ordinary writes after the replace.
   *
   * @throws io.lancecontext.core.error.TransactionAbortedException if the transaction was aborted
   */
  public PublishResult publishReplacing(String transactionId, Collection<WriteSummary> summaries) {
    return publishReplacing(transactionId, summaries, () -> { });
  }

  /** {@link #publishReplacing(String, Collection)} running {@code afterRead} between its key read and its publish (tests). */
  PublishResult publishReplacing(String transactionId, Collection<WriteSummary> summaries, Runnable afterRead) {
    check();
    return store.operation("publish a replacing transaction",
        () -> ReplacePublish.publish(new ReplacingStore(this, store, afterRead), transactionId, summaries));
  }

  /**
   * Keeps transaction {@code transactionId} alive until the lease is closed (see {@link TransactionLease}): for
   * a job's coordinator (a Spark driver from the start of a write to its commit), so that garbage collection
   * never aborts a transaction whose job still runs, however long its tasks take between two staged parts.
   * Atomic write handles hold their transaction so while they are open. Costs one small object write per
   * quarter of {@code txn.timeout}.
   */
  public TransactionLease holdTransaction(String transactionId) {
    TxnIds.requireValid(transactionId);
    return holdAttempt(currentAttempt(transactionId));
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
   * Aborts transaction {@code transactionId}: nothing it staged will be visible, and garbage collection
   * deletes its parts after {@code gc.grace}. Never publishing has the same effect once {@code txn.timeout}
   * has passed since its owner last renewed it (see {@link #holdTransaction}); aborting decides it now, so that
   * a late publish fails.
   *
   * @return false if it was aborted before
   * @throws io.lancecontext.core.error.TransactionAbortedException if it was published
   */
  public boolean abort(String transactionId) {
    check();
    return store.operation("abort a transaction", () -> store.publisher().abort(transactionId));
  }

  /** Puts a batch in the dataset schema for a write handle (see {@link StoreWrites#write}). */
  StoreWrites.Outcome put(VectorSchemaRoot batch, boolean owned) {
    check();
    return writes.put(batch, owned);
  }

  // ---------------------------------------------------------------- reads

  /** The record with this key, unless it is deleted (or retired/expired, with capability lifecycle). */
  public Optional<Map<String, Object>> get(String key) {
    List<Map<String, Object>> found = get(List.of(key));
    return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
  }

  /** The records with these keys that exist (in no particular order). */
  public List<Map<String, Object>> get(Collection<String> keys) {
    return lookup(keys, store.spec().columnNames(), false);
  }

  /** Looks keys up, returning {@code columns}; {@code includeExpired} also returns retired/expired records. */
  public List<Map<String, Object>> lookup(Collection<String> keys, List<String> columns, boolean includeExpired) {
    check();
    return store.lookup(new ArrayList<>(keys), columns, includeExpired, Instant.now());
  }

  /**
   * Reads the LSM view as Arrow batches: as it is now, or at the snapshot {@code spec} names
   * ({@link ScanSpec#atSnapshot}). Close the reader.
   *
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if the snapshot is not kept (any more)
   */
  public StoreReader scan(ScanSpec spec) {
    check();
    ReadSplit.Snapshot at = spec.snapshot() == null ? null : snapshots().resolve(spec.snapshot());
    if (spec.incremental()) {
      IncrementalReads.Opened read = IncrementalReads.open(store, snapshots(), spec, at);
      return StoreReader.over(read.to(), read::scan, store.codec());
    }
    LsmSnapshot snapshot = openSnapshot(at);
    ScanSpec read = at != null && spec.now() == null ? spec.withNow(at.plannedAt()) : spec;
    return StoreReader.over(snapshot,
        () -> new StoreScan(store.spec(), snapshot, read, store.allocator(), ReadSplit.Part.ALL, null), store.codec());
  }

  /** The LSM view as it is now ({@code at} null) or at the snapshot {@code at}; the caller closes it. */
  private LsmSnapshot openSnapshot(ReadSplit.Snapshot at) {
    return at == null ? store.snapshot(null)
        : store.pinnedSnapshot(new ReadSplit(config, at, ScanSpec.all(), ReadSplit.Part.ALL, null));
  }

  /**
   * The {@code k} rows of the LSM view nearest to the query vector, nearest first, each with its
   * {@code _distance}: every acknowledged add is searchable as soon as it returns, a key's newest row is the only
   * one that can match, deleted rows never do. The base table is searched through the column's vector index
   * (see option {@code search.index.min-rows}), the fresh tier exactly. See docs/search.md.
   *
   * @throws io.lancecontext.core.error.SchemaException if the column is not a vector column or the query vector
   *     has another dimension
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if the query names a snapshot no longer kept
   */
  public SearchResult search(VectorQuery query) {
    check();
    ReadSplit.Snapshot at = query.snapshot() == null ? null : snapshots().resolve(query.snapshot());
    try (LsmSnapshot snapshot = openSnapshot(at)) {
      return new SearchResult(VectorSearch.run(store.spec(), snapshot, query, at == null ? Instant.now() : at.plannedAt(),
          new VectorSearch.Tuning(config.get(StoreOptions.SEARCH_NPROBES), config.get(StoreOptions.SEARCH_REFINE_FACTOR)),
          store.allocator()), store.codec());
    }
  }

  /**
   * Builds (or rebuilds, when stale) the vector index of each vector column now, whatever
   * {@code search.index.min-rows} says, where the base table holds rows; maintenance otherwise does so in the
   * background. Returns the columns whose index was built.
   */
  public List<String> buildSearchIndexes() {
    check();
    return store.maintenance().buildSearchIndexes();
  }

  /**
   * The keys a read of a {@code spec} store with {@code scan}'s filter is confined to and reads by key
   * (point lookups in both tiers instead of a scan: {@code key = 'a'}, {@code key IN (...)}, conjunctions
   * and disjunctions of them, at most 10,000 keys); empty when it scans. Engines show it in their plans.
   */
  public static Optional<java.util.Set<String>> keysReadByKey(SchemaSpec spec, ScanSpec scan) {
    return Optional.ofNullable(io.lancecontext.core.internal.read.Predicates.keysReadByKey(spec, scan.filter()));
  }

  /**
   * Splits a read into independent parts that return, together, exactly the LSM view of one snapshot:
   * groups of base-table fragments, and groups of whole buckets of the fresh tier, with a row and byte
   * estimate for each (see {@link ReadPlan}). About {@code maxSplits} parts, shared between the tiers in
   * proportion to their estimated rows; a tier that holds anything gets at least one. Engines read the
   * parts in parallel, in any process ({@link #read(ReadSplit)}, {@link #openForSplit}). The scan may not
   * have an offset; a limit applies to each part. Expiry is judged at planning time.
   */
  public ReadPlan planRead(ScanSpec scan, int maxSplits) {
    check();
    ReadSplit.Snapshot at = scan.snapshot() == null ? null : snapshots().resolve(scan.snapshot());
    if (scan.incremental()) {
      return IncrementalReads.plan(store, snapshots(), scan, at);
    }
    return store.planRead(ReadPlanner.scanToPlan(store.spec(), scan, at == null ? null : at.plannedAt()), maxSplits,
        at);
  }

  // ---------------------------------------------------------------- snapshots

  /**
   * Takes a snapshot of the LSM view as it is now, readable by its token
   * ({@code ScanSpec.all().atSnapshot(token)}, in any process) for {@code snapshot.retention}: such a read
   * returns exactly the rows a read now would, whatever merges, compactions and garbage collections run
   * meanwhile. Costs one small object write.
   */
  public StoreSnapshot snapshot() {
    check();
    try (LsmSnapshot now = store.snapshot(null)) {
      return snapshots().retain(now.pin(), config.get(StoreOptions.SNAPSHOT_RETENTION));
    }
  }

  /**
   * Takes a snapshot as {@link #snapshot()} does if the view changed since the snapshot {@code tokenOrTag} names
   * (another base version or other fresh-tier positions: a merge or a compaction counts, though it changes no row);
   * empty, writing nothing, if it did not. For readers polling for what arrived since their last snapshot.
   *
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if that snapshot is not kept (any more)
   */
  public Optional<StoreSnapshot> snapshotIfChanged(String tokenOrTag) {
    check();
    ReadSplit.Snapshot then = snapshots().resolve(tokenOrTag);
    try (LsmSnapshot now = store.snapshot(null)) {
      return snapshots().retainIfChanged(then, now.pin(), config.get(StoreOptions.SNAPSHOT_RETENTION));
    }
  }

  /**
   * Takes a snapshot of the LSM view as it is now and tags it {@code name}: readable by the tag or its token
   * until {@link #dropTag} (garbage collection keeps what it reads, and so everything written after it).
   *
   * @throws IllegalArgumentException if {@code name} is not a tag name or the tag exists
   */
  public StoreSnapshot tag(String name) {
    check();
    try (LsmSnapshot now = store.snapshot(null)) {
      return snapshots().tag(name, now.pin());
    }
  }

  /**
   * Tags the snapshot {@code snapshot} names (a token, or another tag) as {@code name}, if it is still kept.
   *
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if it is not kept any more
   * @throws IllegalArgumentException if {@code name} is not a tag name or the tag exists
   */
  public StoreSnapshot tag(String name, String snapshot) {
    check();
    return snapshots().tag(name, snapshots().resolve(snapshot));
  }

  /** Drops the tag {@code name}; false if there is none. What only it kept is collected by a later {@link #gc()}. */
  public boolean dropTag(String name) {
    check();
    return snapshots().dropTag(name);
  }

  /** The store's tags. */
  public List<StoreSnapshot> tags() {
    check();
    return snapshots().tags();
  }

  private StoreSnapshots snapshots() {
    return new StoreSnapshots(store.files(), uri(), shards(), store.config().get(StoreOptions.GC_GRACE));
  }

  /**
   * Keeps {@code plan} readable until the lease is closed, and {@code read.lease-timeout} after that: garbage
   * collection, in any process, deletes nothing its splits read. For a plan used longer than {@code gc.grace}
   * (a cached DataFrame's second action, a long scan, a stage retry, a Flink job restoring its splits). Costs
   * one small object write now and per quarter of {@code read.lease-timeout}.
   */
  public ReadLease holdRead(ReadPlan plan) {
    return holdRead(plan.plannedAt());
  }

  /**
   * As {@link #holdRead(ReadPlan)}, for every split planned at {@code plannedAt} or later (what a Flink
   * enumerator restored from a checkpoint holds: the planning time of splits its readers may still read).
   */
  public ReadLease holdRead(Instant plannedAt) {
    check();
    return ReadLeases.holdForHandle(store.files(), plannedAt.toEpochMilli(), config().get(StoreOptions.READ_LEASE_TIMEOUT));
  }

  /**
   * Reads one part of a planned read (in this or any other process) with this handle's storage options.
   * The cost is proportional to the part: a base part needs only the set of keys the fresh tier holds
   * (computed once per plan and JVM), a fresh part only its buckets. Close the reader.
   */
  public StoreReader read(ReadSplit split) {
    check();
    if (split.scan().incremental()) {
      IncrementalReads.Opened read = IncrementalReads.open(store, snapshots(), split.scan(), split.snapshot());
      return StoreReader.over(read.to(), read::scan, store.codec());
    }
    LsmSnapshot snapshot = store.pinnedSnapshot(split);
    return StoreReader.over(snapshot, () -> new StoreScan(store.spec(), snapshot, split.scan(), store.allocator(),
        split.part(), split.fragments()), store.codec());
  }

  /**
   * Opens the store a split names, for reading it in a process that did not plan it (a Spark executor, a
   * Flink task manager), with the reading side's own credentials: the {@code storage.*} entries of
   * {@code options} (a Spark data source option map or Flink table options may be passed whole; other keys
   * are ignored). Every other option takes the value of the store already resident in this JVM, or its
   * default, so the handle never conflicts with one this process opened to write. Close the handle; read
   * with {@link #read(ReadSplit)}.
   */
  public static ContextStore openForSplit(ReadSplit split, Map<String, String> options) {
    return open(SplitOptions.of(split, options));
  }

  /** Reads the LSM view as records. */
  public List<Map<String, Object>> scanRecords(ScanSpec spec) {
    try (StoreReader reader = scan(spec)) {
      return reader.records();
    }
  }

  /** Visible records. */
  public long count() {
    return count(Predicate.alwaysTrue());
  }

  /**
   * Visible records matching {@code filter}. Without a filter (and lifecycle rule or supersession), base fragments
   * whose key hashes this JVM holds and the fresh tier are counted without reading their rows.
   */
  public long count(Predicate filter) {
    try (StoreReader reader = scan(ScanSpec.all().withColumns(List.of()).withFilter(filter))) {
      long n = 0;
      while (reader.next()) {
        n += reader.batch().getRowCount();
      }
      return n;
    }
  }

  public StoreStats stats() {
    check();
    return store.stats(registry.residentStores(), registry.openWriters());
  }

  // ---------------------------------------------------------------- maintenance

  /**
   * Seals the generations this JVM's writers hold open, then merges every flushed generation into the base
   * table now (at most {@code merge.max-bytes} of them; the result says what is {@code remaining}). A shard
   * whose writer lives in another process is left to that writer (it seals on its own triggers) or to
   * {@link #flush()}, which claims it. Returns a skipped result when another process holds the maintenance
   * lease.
   */
  public MergeResult merge() {
    check();
    return store.operation("merge", () -> {
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
   * acknowledged (by any process) before the call started is in the base table, and no deleted key is left
   * there, so any Lance reader of the base table (lance-core {@code Dataset}, pylance, lance-spark, LanceDB
   * with {@code useLsm(false)}) finds it. Call it when a batch job ends, or before reading with another reader.
   *
   * <p>It seals every shard's WAL tail: the writers of this JVM are sealed, and a shard whose unsealed tail
   * was left by a writer in another process (or an abandoned one) is claimed, which fences that writer; the
   * claim replays its tail (about 1 ms per WAL entry) and the fenced writer's next add waits
   * {@code write.fence-backoff} and claims the shard back, so concurrent writers keep writing (their adds
   * during the flush may land after it). Then it merges until every generation sealed so far is merged,
   * waiting while another process holds the maintenance lease and retrying failed merges, and finally removes
   * tombstone rows from the base table (one delete that scans the base's tombstone column). Progress is logged
   * at INFO every few seconds. When {@code timeout} passes first, it returns an incomplete result saying what
   * is left (nothing is undone; calling it again continues).
   */
  public FlushResult flush(Duration timeout) {
    check();
    return store.operation("flush", () -> store.maintenance().flush(timeout));
  }

  /** Compacts the base table now (deferred index remap; the key index is rebuilt). */
  public CompactionResult compact() {
    check();
    return store.operation("compact", () -> store.maintenance().compact());
  }

  /** Deletes merged generations, sealed WAL entries and old versions older than {@code gc.grace}. */
  public GcResult gc() {
    check();
    return store.operation("collect garbage", () -> store.maintenance().gc());
  }

  /** Seals every shard's open generation now and waits (it then becomes mergeable). */
  public void seal() {
    check();
    store.operation("seal", () -> {
      store.sealAll("requested");
      return null;
    });
  }

  private void check() {
    if (closed) {
      throw new StoreClosedException("this handle to " + uri() + " is closed", false);
    }
    store.ensureOpen();
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
   * Closes every resident store of this JVM now: writers sealed, caches freed (tests, shutdown). Calls in
   * flight complete first; later calls through handles opened before fail with a retryable
   * {@link StoreClosedException} (open the store again); an open of a store being closed waits for it.
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
