package io.lancecontext.core.internal.store;

import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.MemWalEnvironment;
import io.lancecontext.core.internal.maintenance.Maintenance;
import io.lancecontext.core.internal.read.BaseTable;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.Predicates;
import io.lancecontext.core.internal.read.ReadPlanner;
import io.lancecontext.core.internal.read.Snapshots;
import io.lancecontext.core.internal.read.WriteSequences;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.internal.write.Buckets;
import io.lancecontext.core.internal.write.Publisher;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.internal.write.StoreWrites;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of one store in one JVM, shared by every handle to it: the base table, the resident shard
 * writers, the fresh-tier cache and the maintenance schedule. Thread-safe.
 *
 * <p>This class composes them and delegates; its operations run through an {@link OperationGate} (open,
 * closing, in flight) and its stats are collected by {@link ResidentStats}.
 */
public final class ResidentStore implements BucketWriter.Host, Maintenance.Host, StoreWrites.Reads {
  private static final Logger LOG = LoggerFactory.getLogger(ResidentStore.class);

  private final StoreConfig config;
  private final SchemaSpec spec;
  private final Schema datasetSchema;
  private final StoreFiles files;
  private final BufferAllocator allocator;
  private final int shards;
  private final BucketWriter[] writers;
  private final LanceDataset writerBase;
  private final Snapshots reads;
  private final RecordCodec codec;
  private final StoreWrites writes;
  private final Transactions transactions;
  private final Maintenance maintenance;
  private final String name;
  /** Which store this is ({@link StoreCreation#STORE_ID}); null for a store created before stores had ids. */
  private final String storeId;
  private final OperationGate gate;
  private final ResidentStats residentStats;

  ResidentStore(StoreConfig config) {
    this.config = config;
    this.gate = new OperationGate(config.uri(), shortName(config.uri()));
    MemWalEnvironment.check(config);
    this.files = StoreFiles.forUri(config.uri(), config.storageOptions());
    this.allocator = LanceRuntime.get().allocator().newChildAllocator("store " + config.uri(), 0, Long.MAX_VALUE);
    StoreCreation.Opened opened;
    try {
      opened = StoreCreation.openOrCreate(config, files, allocator);
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
    this.writerBase = opened.dataset();
    this.spec = opened.spec();
    this.shards = opened.shards();
    this.storeId = opened.storeId();
    this.datasetSchema = writerBase.schema();
    if (!datasetSchema.getFields().equals(spec.toArrowSchema().getFields())) {
      throw new SchemaException("the dataset schema at " + config.uri() + " does not match its stored spec");
    }
    this.name = shortName(config.uri());
    this.codec = new RecordCodec(spec);
    io.lancecontext.core.internal.lance.TextIndex.columns(spec, config);  // a bad search.text-columns fails the open
    this.writers = new BucketWriter[shards];
    for (int i = 0; i < shards; i++) {
      writers[i] = new BucketWriter(this, i, Maintenance.SEAL_ENTRIES, Maintenance.sealBytes(config, shards, i));
    }
    this.transactions = new Transactions(config, files, allocator);
    List<String> allShards = ShardIds.all(shards);
    this.reads = new Snapshots(config, spec, files, allocator, allShards,
        key -> ShardIds.forBucket(bucketOf(key)), transactions, shard -> {
          int i = allShards.indexOf(shard);
          return i >= 0 && i % ShardIds.LANES == 0 ? i / ShardIds.LANES : null;
        }, shard -> allShards.indexOf(shard) / ShardIds.LANES);
    this.maintenance = new Maintenance(this);
    this.writes = new StoreWrites(spec, datasetSchema, config.uri(), name, allocator, writers, codec, this,
        maintenance::onWrite, transactions);
    this.residentStats = new ResidentStats(config, files, writers, reads, maintenance, () -> snapshot(null));
    LOG.info("Opened store {}{} ({} shards, {} columns, key '{}')", config.uri(), opened.created() ? " (new)" : "",
        shards, spec.columns().size(), spec.key());
  }

  private static String shortName(String uri) {
    String s = uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
    return s.substring(s.lastIndexOf('/') + 1);
  }

  // ---------------------------------------------------------------- Host (writers and maintenance)

  /** The store's transactions. */
  @Override
  public Transactions transactions() {
    return transactions;
  }

  @Override
  public LanceDataset baseDataset() {
    return writerBase;
  }

  @Override
  public StoreFiles files() {
    return files;
  }

  @Override
  public BufferAllocator allocator() {
    return allocator;
  }

  @Override
  public Duration putTimeout() {
    return config.putTimeout();
  }

  @Override
  public Duration fenceBackoff() {
    return config.get(StoreOptions.FENCE_BACKOFF);
  }

  @Override
  public Duration gcGrace() {
    return config.get(StoreOptions.GC_GRACE);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public StoreConfig config() {
    return config;
  }

  @Override
  public SchemaSpec spec() {
    return spec;
  }

  @Override
  public int shards() {
    return shards;
  }

  @Override
  public BucketWriter[] writers() {
    return writers;
  }

  /** Seals every bucket's open generations now and waits ({@code reason} is logged). */
  public void sealAll(String reason) {
    for (BucketWriter writer : writers) {
      writer.seal(reason);
    }
  }

  Schema datasetSchema() {
    return datasetSchema;
  }

  public RecordCodec codec() {
    return codec;
  }

  public Maintenance maintenance() {
    return maintenance;
  }

  // ---------------------------------------------------------------- write path (StoreWrites)

  /** The shard (bucket) of a key. */
  public int bucketOf(String key) {
    return writes.bucketOf(key);
  }

  @Override
  public long tailSequence(String shardId) {
    try (LsmSnapshot snap = writeSideSnapshot(Set.of(shardId))) {
      return WriteSequences.inWalTail(snap, shardId);
    }
  }

  @Override
  public long maxFreshSequence(int bucket) {
    try (LsmSnapshot snap = writeSideSnapshot(new java.util.HashSet<>(ShardIds.forBucket(bucket)))) {
      return WriteSequences.inFreshTier(snap);
    }
  }

  @Override
  public long maxBaseSequence(int bucket, long floor) {
    BaseTable b = base();
    try {
      return WriteSequences.inBase(b, TxnIds.txnShardId(bucket), floor);
    } finally {
      b.release();
    }
  }

  /** Publishes and aborts this store's transactions. */
  public Publisher publisher() {
    return writes.publisher();
  }

  /** Opens and claims every bucket's lanes in the background, as a first publish would (see {@link Publisher#prepare}). */
  public void preparePublishing() {
    writes.inBackground("prepare to publish", () -> operation("prepare to publish", () -> {
      writes.publisher().prepare();
      return null;
    }));
  }

  /** The store's write path. */
  public StoreWrites writes() {
    return writes;
  }

  /**
   * Writes a batch in the dataset schema (see {@link StoreWrites#write}). Does not close {@code batch}.
   *
   * @return rows written (after dedupe)
   */
  public int add(VectorSchemaRoot batch, boolean tombstones) {
    return add(batch, tombstones, false);
  }

  /**
   * As {@link #add(VectorSchemaRoot, boolean)}; {@code owned}: the batch is a temporary of the caller
   * that may be emptied.
   */
  public int add(VectorSchemaRoot batch, boolean tombstones, boolean owned) {
    return operation("add rows", () -> writes.write(batch, owned).keys());
  }

  // ---------------------------------------------------------------- read path (see Snapshots)

  /** The latest base table, retained for the caller. */
  @Override
  public BaseTable base() {
    ensureOpen();
    return reads.base();
  }

  /**
   * A snapshot over the given shards (all when null), for a reader. Every read entry point notes the reader
   * ({@code StagedKeys.readerPresent}), so that the parts this JVM stages from then on are kept for it: a reader
   * that started before a job's first publish finds that publish's parts kept too.
   */
  public LsmSnapshot snapshot(Set<String> shardIds) {
    transactions.stagedKeys().readerPresent();
    return operation("take a snapshot", () -> reads.snapshot(shardIds));
  }

  /** A snapshot the write path reads its sequences from: not a reader's, so it keeps no staged parts. */
  private LsmSnapshot writeSideSnapshot(Set<String> shardIds) {
    return operation("take a snapshot", () -> reads.snapshot(shardIds));
  }

  /** The snapshot a read split pinned, holding what the split reads (see {@link Snapshots#pinned}). */
  public LsmSnapshot pinnedSnapshot(ReadSplit split) {
    transactions.stagedKeys().readerPresent();
    return operation("open a read split's snapshot", () -> reads.pinned(split));
  }

  /** Plans a read of the current snapshot (see {@link ReadPlanner}). */
  public ReadPlan planRead(ScanSpec scan, int maxSplits) {
    return planRead(scan, maxSplits, null);
  }

  /** Plans a read of {@code at} (the current snapshot when null). */
  public ReadPlan planRead(ScanSpec scan, int maxSplits, ReadSplit.Snapshot at) {
    transactions.stagedKeys().readerPresent();
    return operation("plan a read", () -> {
      List<List<String>> buckets = new ArrayList<>();
      for (int b = 0; b < shards; b++) {
        buckets.add(ShardIds.forBucket(b));
      }
      try (LsmSnapshot snapshot = at == null ? reads.snapshot(null)
          : reads.pinned(new ReadSplit(config, at, scan, ReadSplit.Part.ALL, null))) {
        Set<String> keys = Predicates.keysReadByKey(spec, scan.filter());
        if (keys != null) {
          // a key lives in one bucket: the read needs only its keys' buckets' lanes
          java.util.SortedSet<Integer> keyBuckets = new java.util.TreeSet<>();
          keys.forEach(k -> keyBuckets.add(Buckets.of(k, shards)));
          List<String> lanes = new ArrayList<>();
          keyBuckets.forEach(b -> lanes.addAll(buckets.get(b)));
          return ReadPlanner.planByKey(config, snapshot, scan, keys.size(), lanes);
        }
        return ReadPlanner.plan(config, snapshot, scan, maxSplits, buckets);
      }
    });
  }

  public List<Map<String, Object>> lookup(List<String> keys, List<String> columns, boolean includeExpired, Instant now) {
    transactions.stagedKeys().readerPresent();
    return operation("look keys up", () -> reads.lookup(keys, columns, includeExpired, now, codec));
  }

  // ---------------------------------------------------------------- stats

  public StoreStats stats(int residentStores, int openWriters) {
    return operation("collect stats", () -> residentStats.collect(residentStores, openWriters));
  }

  @Override
  public String summary() {
    return stats(-1, openWriters()).summary();
  }

  public int openWriters() {
    return residentStats.openWriters();
  }

  // ---------------------------------------------------------------- lifecycle

  public void ensureOpen() {
    gate.ensureOpen();
  }

  /**
   * Runs one operation of the store: {@link #close()} waits for the operations in flight, and an
   * operation that starts after close began fails with a retryable {@link StoreClosedException}. Failures
   * leave as the taxonomy's exceptions ({@link LanceErrors#translate}, the cause kept).
   */
  public <T> T operation(String action, Supplier<T> body) {
    return gate.run(action, body);
  }

  public boolean isClosed() {
    return gate.isClosed();
  }

  /** The store's snapshots and tags. */
  public StoreSnapshots snapshots() {
    return new StoreSnapshots(files, config.uri(), shards(), config.get(StoreOptions.GC_GRACE));
  }

  @Override
  public java.util.List<ReadSplit.Snapshot> taggedSnapshots() {
    return snapshots().taggedSnapshots();
  }

  /**
   * Whether the store at this store's location is still this one: false once it was dropped, or dropped and
   * created again (another id), by any process. One small read. A store without an id (created before stores
   * had ids) is taken to be still there, as is one whose id cannot be read (a storage error is not a drop).
   */
  @Override
  public boolean isStillAtItsLocation() {
    if (storeId == null) {
      return true;
    }
    try {
      return storeId.equals(StoreCreation.storeId(files));
    } catch (LanceContextException e) {
      LOG.warn("{}: could not read the store id, taking the store to be still there: {}", name, e.getMessage());
      return true;
    }
  }

  /**
   * Seals and closes every writer, stops maintenance and frees the caches. If the store is no longer at its
   * location ({@link #isStillAtItsLocation}) the writers are discarded unsealed instead.
   */
  void close() {
    if (!gate.close()) {
      return;
    }
    // operations that started before close complete first (an add is bounded by about two put timeouts:
    // its shard's put plus the group ahead of it); later ones fail with StoreClosedException
    Duration wait = config.putTimeout().multipliedBy(2).plusSeconds(5);
    if (!gate.awaitDrained(wait.toNanos())) {
      LOG.warn("{}: {} operations still in flight after {}; closing anyway (they fail as closed)", name, gate.inFlight(),
          wait);
    }
    maintenance.close();
    // sealing writes this store's rows into its location: never into another store that took its place
    boolean here = isStillAtItsLocation();
    if (!here) {
      LOG.warn("{}: the store at {} was dropped (or dropped and created again) elsewhere; its writers are discarded "
          + "unsealed so that none of its rows reach the store now there", name, config.uri());
    }
    for (BucketWriter w : writers) {
      try {
        if (here) {
          w.close();
        } else {
          w.discard("the store was dropped");
        }
      } catch (RuntimeException e) {
        LOG.warn("{}: closing bucket {} failed: {}", name, w.bucket(), e.getMessage());
      }
    }
    writes.close();
    transactions.stagedKeys().close();  // rows kept for readers are this store's memory
    reads.close();
    writerBase.close();
    long held = allocator.getAllocatedMemory();
    if (held == 0) {
      allocator.close();
    } else {
      // held by abandoned writers (lance-core keeps the batches of a writer that is never closed, and a put
      // stuck in native code keeps its batch), or by readers still open
      LOG.warn("{}: {} bytes of Arrow memory stay held by abandoned writers or open readers", name, held);
    }
    LOG.info("Closed store {}", config.uri());
  }

  @Override
  public String toString() {
    return "store " + config.uri();
  }

}
