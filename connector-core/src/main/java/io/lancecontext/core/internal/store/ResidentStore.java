package io.lancecontext.core.internal.store;

import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.error.UniqueKeyViolationException;
import io.lancecontext.core.error.WriteInterruptedException;
import io.lancecontext.core.internal.codec.BatchValidator;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.maintenance.Maintenance;
import io.lancecontext.core.internal.read.BaseTable;
import io.lancecontext.core.internal.read.FreshCache;
import io.lancecontext.core.internal.read.FreshShard;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.ReadPlanner;
import io.lancecontext.core.internal.read.Snapshots;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.internal.write.Buckets;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.ipc.ScanOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of one store in one JVM, shared by every handle to it: the base table, the resident shard
 * writers, the fresh-tier cache and the maintenance schedule. Thread-safe.
 */
public final class ResidentStore implements BucketWriter.Host, Maintenance.Host {
  private static final Logger LOG = LoggerFactory.getLogger(ResidentStore.class);

  private final StoreConfig config;
  private final SchemaSpec spec;
  private final Schema datasetSchema;
  private final StoreFiles files;
  private final BufferAllocator allocator;
  private final int shards;
  private final BucketWriter[] writers;
  private final Dataset writerBase;
  private final Snapshots reads;
  private final RecordCodec codec;
  private final ExecutorService putPool;
  private final Maintenance maintenance;
  private final String name;
  private volatile boolean closed;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Object drained = new Object();
  private final AtomicLong adds = new AtomicLong();
  private final AtomicLong rowsAdded = new AtomicLong();

  ResidentStore(StoreConfig config) {
    this.config = config;
    this.files = StoreFiles.forUri(config.uri());
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
    this.datasetSchema = writerBase.getSchema();
    if (!datasetSchema.getFields().equals(spec.toArrowSchema().getFields())) {
      throw new SchemaException("the dataset schema at " + config.uri() + " does not match its stored spec");
    }
    this.name = shortName(config.uri());
    this.codec = new RecordCodec(spec);
    this.writers = new BucketWriter[shards];
    for (int i = 0; i < shards; i++) {
      writers[i] = new BucketWriter(this, i, Maintenance.SEAL_ENTRIES, config.get(StoreOptions.BATCH_BYTES));
    }
    this.reads = new Snapshots(config, spec, files, allocator, ShardIds.all(shards),
        key -> ShardIds.forBucket(bucketOf(key)));
    this.putPool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "lancecontext-add-" + name);
      t.setDaemon(true);
      return t;
    });
    this.maintenance = new Maintenance(this);
    LOG.info("Opened store {}{} ({} shards, {} columns, key '{}')", config.uri(), opened.created() ? " (new)" : "",
        shards, spec.columns().size(), spec.key());
  }

  private static String shortName(String uri) {
    String s = uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
    return s.substring(s.lastIndexOf('/') + 1);
  }

  // ---------------------------------------------------------------- Host (writers and maintenance)

  @Override
  public Dataset baseDataset() {
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

  Schema datasetSchema() {
    return datasetSchema;
  }

  public RecordCodec codec() {
    return codec;
  }

  public Maintenance maintenance() {
    return maintenance;
  }

  // ---------------------------------------------------------------- write path

  /** The shard (bucket) of a key. */
  public int bucketOf(String key) {
    return Buckets.of(key, shards);
  }

  @Override
  public long tailSequence(String shardId) {
    try (LsmSnapshot snap = snapshot(java.util.Set.of(shardId))) {
      long max = -1;
      for (var source : snap.shard(shardId).sources()) {
        if (source instanceof io.lancecontext.core.internal.read.WalSource w) {
          max = Math.max(max, w.maxSequence());
        }
      }
      return max;
    }
  }

  @Override
  public long maxFreshSequence(int bucket) {
    try (LsmSnapshot snap = snapshot(new java.util.HashSet<>(ShardIds.forBucket(bucket)))) {
      long max = 0;
      for (FreshShard s : snap.shards().values()) {
        max = Math.max(max, s.maxSequence());
      }
      return max;
    }
  }

  @Override
  public long maxBaseSequence(long floor) {
    BaseTable b = base();
    ScanOptions options = new ScanOptions.Builder().columns(List.of(SystemColumns.SEQUENCE))
        .filter(SystemColumns.SEQUENCE + " > " + floor).build();
    long max = floor;
    try (ScanHandle scan = ScanHandle.open(b.dataset(), options)) {
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

  /**
   * Writes a validated batch in the dataset schema: dedupe by key (last row wins), route each row to
   * its shard, put every shard's rows durably (in parallel), verify each writer still owned its shard.
   * Does not close {@code batch}.
   *
   * @return rows written (after dedupe)
   */
  public int add(VectorSchemaRoot batch, boolean tombstones) {
    return add(batch, tombstones, false);
  }

  /**
   * As {@link #add(VectorSchemaRoot, boolean)}; {@code owned}: the batch is a temporary of the caller
   * that may be emptied (its vectors are moved instead of copied when all its rows go to one bucket).
   */
  public int add(VectorSchemaRoot batch, boolean tombstones, boolean owned) {
    return operation("add rows", () -> write(batch, tombstones, owned));
  }

  private int write(VectorSchemaRoot batch, boolean tombstones, boolean owned) {
    ensureOpen();
    BatchValidator.validate(spec, batch);
    int n = batch.getRowCount();
    if (n == 0) {
      return 0;
    }
    VarCharVector keys = (VarCharVector) batch.getVector(spec.key());
    Map<String, Integer> last = new LinkedHashMap<>();
    for (int r = 0; r < n; r++) {
      last.put(new String(keys.get(r), StandardCharsets.UTF_8), r);
    }
    Map<Integer, List<Integer>> rowsByBucket = new HashMap<>();
    Map<Integer, List<String>> keysByBucket = new HashMap<>();
    for (int r = 0; r < n; r++) {
      String k = new String(keys.get(r), StandardCharsets.UTF_8);
      if (last.get(k) != r) {
        continue;  // a later row of this batch has the same key
      }
      int b = bucketOf(k);
      rowsByBucket.computeIfAbsent(b, x -> new ArrayList<>()).add(r);
      keysByBucket.computeIfAbsent(b, x -> new ArrayList<>()).add(k);
    }
    boolean unique = spec.has(Capability.UNIQUE_IDS) && !tombstones;
    if (unique) {
      // fail fast, with nothing written, when the keys exist already; the binding check runs per bucket
      // under its writer's lock, right before the put
      rejectExisting(batch, last);
    }
    List<Integer> buckets = new ArrayList<>(new TreeSet<>(rowsByBucket.keySet()));
    List<VectorSchemaRoot> parts = new ArrayList<>();
    try {
      List<String> columns = spec.toArrowSchema().getFields().stream().map(f -> f.getName()).toList();
      for (int b : buckets) {
        List<Integer> rows = rowsByBucket.get(b);
        VectorSchemaRoot copy;
        if (owned && buckets.size() == 1 && rows.size() == n) {
          copy = RowCopier.transfer(batch, columns, allocator);
        } else {
          int[] idx = rows.stream().mapToInt(Integer::intValue).toArray();
          copy = RowCopier.copy(batch, columns, idx, idx.length, allocator);
        }
        emptyBlobsToNull(copy);
        parts.add(new VectorSchemaRoot(datasetSchema, copy.getFieldVectors(), copy.getRowCount()));
      }
    } catch (RuntimeException e) {
      parts.forEach(VectorSchemaRoot::close);
      throw e;
    }
    putAll(buckets, parts, keysByBucket, unique ? (part, partKeys) -> rejectExisting(part, partKeys, buckets.size() > 1) : null);
    adds.incrementAndGet();
    rowsAdded.addAndGet(last.size());
    maintenance.onWrite();
    return last.size();
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
  private void putAll(List<Integer> buckets, List<VectorSchemaRoot> parts, Map<Integer, List<String>> keysByBucket,
      BucketWriter.KeyCheck check) {
    if (buckets.size() == 1) {
      int b = buckets.get(0);
      writers[b].put(parts.get(0), keysByBucket.get(b), check);
      return;
    }
    // shards are put in parallel; the first on the calling thread
    List<Future<?>> futures = new ArrayList<>();
    for (int i = 1; i < buckets.size(); i++) {
      int b = buckets.get(i);
      VectorSchemaRoot part = parts.get(i);
      try {
        futures.add(putPool.submit(() -> writers[b].put(part, keysByBucket.get(b), check)));
      } catch (RejectedExecutionException e) {
        // only after close gave up waiting for this add (see close()); the parts not handed over are freed
        parts.get(0).close();
        parts.subList(i, parts.size()).forEach(VectorSchemaRoot::close);
        throw new StoreClosedException("the store " + config.uri() + " was closed in this JVM while this add was in "
            + "flight; it was not acknowledged (rows of some shards may be durable). Open the store again and retry",
            true, e);
      }
    }
    RuntimeException first = null;
    try {
      writers[buckets.get(0)].put(parts.get(0), keysByBucket.get(buckets.get(0)), check);
    } catch (RuntimeException e) {
      first = e;
    }
    for (Future<?> f : futures) {
      try {
        f.get();
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
  }

  /** {@link #rejectExisting(VectorSchemaRoot, Collection, boolean)} for the rows {@code lastRow} maps keys to. */
  private void rejectExisting(VectorSchemaRoot batch, Map<String, Integer> lastRow) {
    List<String> keys = new ArrayList<>(lastRow.keySet());
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
   * add, retried after it failed unacknowledged.
   */
  private void rejectExisting(VectorSchemaRoot batch, Collection<String> keys, boolean otherBuckets) {
    Map<String, Map<String, Object>> existing = existing(keys);
    if (existing.isEmpty()) {
      return;
    }
    List<Map<String, Object>> rows = codec.decode(batch);
    List<String> clashing = new ArrayList<>();
    for (Map<String, Object> row : rows) {
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
        + " key(s) already exist in " + config.uri() + " with other content: " + clashing.stream().limit(10).toList()
        + (clashing.size() > 10 ? " ..." : "") + "; " + (otherBuckets
        ? "their rows were not written (rows of this call in other shards may have been)" : "nothing was written"),
        clashing);
  }

  /** The stored records of those {@code keys} that exist (deleted keys do not; expired ones do). */
  private Map<String, Map<String, Object>> existing(Collection<String> keys) {
    Map<String, Map<String, Object>> out = new HashMap<>();
    for (Map<String, Object> r : lookup(new ArrayList<>(keys), spec.columnNames(), true, Instant.now())) {
      out.put((String) r.get(spec.key()), r);
    }
    return out;
  }

  /** Whether two decoded records hold the same values (arrays and nested values compared by content). */
  static boolean sameRecord(Object a, Object b) {
    if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
      java.util.Set<Object> names = new java.util.HashSet<>(ma.keySet());
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

  // ---------------------------------------------------------------- read path (see Snapshots)

  /** The latest base table, retained for the caller. */
  @Override
  public BaseTable base() {
    ensureOpen();
    return reads.base();
  }

  /** A snapshot over the given shards (all when null). */
  public LsmSnapshot snapshot(Set<String> shardIds) {
    return operation("take a snapshot", () -> reads.snapshot(shardIds));
  }

  /** The snapshot a read split pinned, holding what the split reads (see {@link Snapshots#pinned}). */
  public LsmSnapshot pinnedSnapshot(ReadSplit split) {
    return operation("open a read split's snapshot", () -> reads.pinned(split));
  }

  /** Plans a read of the current snapshot (see {@link ReadPlanner}). */
  public ReadPlan planRead(ScanSpec scan, int maxSplits) {
    return operation("plan a read", () -> {
      List<List<String>> buckets = new ArrayList<>();
      for (int b = 0; b < shards; b++) {
        buckets.add(ShardIds.forBucket(b));
      }
      try (LsmSnapshot snapshot = reads.snapshot(null)) {
        return ReadPlanner.plan(config, snapshot, scan, maxSplits, buckets);
      }
    });
  }

  public List<Map<String, Object>> lookup(List<String> keys, List<String> columns, boolean includeExpired, Instant now) {
    return operation("look keys up", () -> reads.lookup(keys, columns, includeExpired, now, codec));
  }

  // ---------------------------------------------------------------- stats

  public StoreStats stats(int residentStores, int openWriters) {
    return operation("collect stats", () -> statsNow(residentStores, openWriters));
  }

  private StoreStats statsNow(int residentStores, int openWriters) {
    try (LsmSnapshot snap = snapshot(null)) {
      Dataset ds = snap.base().dataset();
      List<StoreStats.Shard> perShard = new ArrayList<>();
      int unmerged = 0;
      for (BucketWriter w : writers) {
        for (BucketWriter.LaneStats s : w.stats()) {
          FreshShard view = snap.shard(s.shardId());
          int gens = 0;
          int wal = 0;
          for (var source : view.sources()) {
            if (source instanceof io.lancecontext.core.internal.read.GenerationSource) {
              gens++;
            } else {
              wal++;
            }
          }
          unmerged += gens;
          perShard.add(new StoreStats.Shard(s.bucket(), s.lane(), s.shardId(), snap.base().watermark(s.shardId()), gens,
              wal, s.open(), s.epoch(), s.puts(), s.seals(), s.abandoned()));
        }
      }
      long bytes = bytesOnDisk();
      FreshCache.Footprint cache = reads.freshCache().footprint();
      return new StoreStats(config.uri(), ds.version(), ds.countRows(), ds.getFragments().size(), snap.freshRows(),
          unmerged, perShard, bytes, maintenance.counters(), LanceRuntime.get().sessionSizeBytesRecent(), residentStores,
          openWriters, new StoreStats.FreshCache(cache.bytes(), config.get(StoreOptions.FRESH_CACHE_BYTES), cache.entries(),
          cache.evictions()));
    } catch (IOException e) {
      throw LanceErrors.translate("collect stats", e);
    }
  }

  private static final long BYTES_REFRESH_NANOS = 10_000_000_000L;
  private volatile long bytesOnDisk = -1;
  private volatile long bytesMeasuredAt;
  private final java.util.concurrent.atomic.AtomicBoolean measuringBytes = new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Bytes under the store directory; walking the tree is not free, so it is re-measured every 10 s, by one
   * caller at a time and under no lock: the others get the previous measure (or wait for the first one).
   */
  private long bytesOnDisk() throws IOException {
    while (true) {
      long known = bytesOnDisk;
      boolean due = known < 0 || System.nanoTime() - bytesMeasuredAt > BYTES_REFRESH_NANOS;
      if (!due) {
        return known;
      }
      if (measuringBytes.compareAndSet(false, true)) {
        try {
          bytesOnDisk = files.totalBytes("");
          bytesMeasuredAt = System.nanoTime();
          return bytesOnDisk;
        } finally {
          measuringBytes.set(false);
        }
      }
      return known >= 0 ? known : files.totalBytes("");
    }
  }

  @Override
  public String summary() {
    return stats(-1, openWriters()).summary();
  }

  public int openWriters() {
    int n = 0;
    for (BucketWriter w : writers) {
      for (BucketWriter.LaneStats s : w.stats()) {
        if (s.open()) {
          n++;
        }
      }
    }
    return n;
  }

  // ---------------------------------------------------------------- lifecycle

  public void ensureOpen() {
    if (closed) {
      throw closedUnderneath(null);
    }
  }

  private StoreClosedException closedUnderneath(Throwable cause) {
    return new StoreClosedException("the store " + config.uri() + " was closed in this JVM (closeAllResident, eviction or "
        + "shutdown) under an open handle; nothing of this call was written. Open the store again and retry", true, cause);
  }

  /**
   * Runs one operation of the store: {@link #close()} waits for the operations in flight, and an
   * operation that starts after close began fails with a retryable {@link StoreClosedException}. Failures
   * leave as the taxonomy's exceptions ({@link LanceErrors#translate}, the cause kept).
   */
  public <T> T operation(String action, Supplier<T> body) {
    inFlight.incrementAndGet();
    try {
      ensureOpen();
      return body.get();
    } catch (LanceContextException e) {
      throw e;
    } catch (RejectedExecutionException e) {
      throw closed ? closedUnderneath(e) : LanceErrors.translate(name + ": " + action, e);
    } catch (RuntimeException e) {
      throw LanceErrors.translate(name + ": " + action, e);
    } finally {
      if (inFlight.decrementAndGet() == 0 && closed) {
        synchronized (drained) {
          drained.notifyAll();
        }
      }
    }
  }

  /** Waits until no operation is in flight, at most {@code timeoutNanos}; false if some still are. */
  private boolean awaitDrained(long timeoutNanos) {
    long end = System.nanoTime() + timeoutNanos;
    boolean interrupted = false;
    try {
      synchronized (drained) {
        while (inFlight.get() > 0) {
          long left = end - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          try {
            drained.wait(Math.max(1, left / 1_000_000));
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
        return true;
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  public boolean isClosed() {
    return closed;
  }

  long adds() {
    return adds.get();
  }

  long rowsAdded() {
    return rowsAdded.get();
  }

  FreshCache freshCache() {
    return reads.freshCache();
  }

  /** Seals and closes every writer, stops maintenance and frees the caches. */
  void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    // operations that started before close complete first (an add is bounded by about two put timeouts:
    // its shard's put plus the group ahead of it); later ones fail with StoreClosedException
    Duration wait = config.putTimeout().multipliedBy(2).plusSeconds(5);
    if (!awaitDrained(wait.toNanos())) {
      LOG.warn("{}: {} operations still in flight after {}; closing anyway (they fail as closed)", name, inFlight.get(),
          wait);
    }
    maintenance.close();
    for (BucketWriter w : writers) {
      try {
        w.close();
      } catch (RuntimeException e) {
        LOG.warn("{}: closing bucket {} failed: {}", name, w.bucket(), e.getMessage());
      }
    }
    putPool.shutdown();
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
