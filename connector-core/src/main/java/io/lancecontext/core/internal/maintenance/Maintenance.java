package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.read.BaseTable;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.result.FlushResult;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.schema.SchemaSpec;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A store's maintenance: on demand ({@link #merge()}, {@link #compact()}, {@link #gc()}) and in the
 * background of a JVM that writes to the store. Every second it seals shard generations that are big
 * or old enough and closes idle writers; it merges when {@code merge.trigger.generations} generations
 * are unmerged or the oldest is older than {@code merge.trigger.interval}, collects garbage after
 * merges, and compacts when {@code compaction.background} is on. Across processes, merge, compaction
 * and garbage collection are serialized by the store's {@link MaintenanceLock}.
 */
public final class Maintenance implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Maintenance.class);

  /** A shard seals its generation once it holds this many WAL entries (far below lance's 8,000-batch memtable). */
  public static final long SEAL_ENTRIES = 1_024;
  static final Duration TICK = Duration.ofSeconds(1);
  /** How often a tick checks that the store was not dropped elsewhere (one small read). */
  static final Duration LOCATION_CHECK_EVERY = Duration.ofSeconds(10);
  /** Maintenance lease duration; the holder renews it every third of it, so only a dead holder's lease expires. */
  static final Duration LEASE = Duration.ofMinutes(2);
  static final Duration GC_EVERY = Duration.ofMinutes(1);
  static final Duration COMPACT_EVERY = Duration.ofMinutes(5);
  static final Duration STATS_LOG_EVERY = Duration.ofMinutes(5);
  /** Background compaction runs once the base has at least this many fragments. */
  static final int COMPACT_FRAGMENTS = 16;

  /** What maintenance needs from its store. */
  public interface Host {
    StoreConfig config();

    SchemaSpec spec();

    int shards();

    BucketWriter[] writers();

    StoreFiles files();

    BufferAllocator allocator();

    String name();

    /** The latest base table, retained for the caller. */
    BaseTable base();

    /** One line of stats for the periodic log. */
    String summary();

    /** The store's transactions, whose published parts merges fold in and garbage collection removes. */
    io.lancecontext.core.internal.txn.Transactions transactions();

    /** Whether the store at its location is still this one, not dropped (and maybe created again) elsewhere. */
    boolean isStillAtItsLocation();
  }

  private final Host host;
  private final ReentrantLock running = new ReentrantLock();
  private final ScheduledFuture<?> task;
  private volatile boolean writing;
  private volatile boolean closed;
  private long lastGcNanos = System.nanoTime();
  private long lastLocationCheckNanos = System.nanoTime();
  private long lastCompactNanos = System.nanoTime();
  private long lastStatsLogNanos = System.nanoTime();
  private final AtomicLong merges = new AtomicLong();
  private final AtomicLong mergedGenerations = new AtomicLong();
  private final AtomicLong gcRuns = new AtomicLong();
  private final AtomicLong compactions = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicReference<MergeResult> lastMerge = new AtomicReference<>();
  /** Commit times of unmerged flushed generations, by "shard path"; see {@link #generationMade}. */
  private final Map<String, Instant> generationMade = new ConcurrentHashMap<>();
  /** The newest manifest seen of each shard; see {@link #manifest}. */
  private final Map<String, ShardManifest> manifests = new ConcurrentHashMap<>();

  public Maintenance(Host host) {
    this.host = host;
    this.task = LanceRuntime.get().scheduler().scheduleWithFixedDelay(this::tick, TICK.toMillis(), TICK.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Called on every add: this JVM writes to the store, so it also maintains it. */
  public void onWrite() {
    writing = true;
  }

  private void tick() {
    if (closed || !running.tryLock()) {
      return;
    }
    try {
      if (System.nanoTime() - lastLocationCheckNanos >= LOCATION_CHECK_EVERY.toNanos()) {
        lastLocationCheckNanos = System.nanoTime();
        if (!host.isStillAtItsLocation()) {
          // sealing, merging or collecting now would write this store's rows into the one now there
          closed = true;
          task.cancel(false);
          LOG.warn("{}: the store was dropped elsewhere; background maintenance stops", host.name());
          return;
        }
      }
      StoreConfig config = host.config();
      Duration interval = config.get(StoreOptions.MERGE_INTERVAL);
      for (BucketWriter writer : host.writers()) {
        writer.maintain(interval.dividedBy(2), config.idleTimeout());
      }
      if (!writing) {
        return;
      }
      if (mergeDue(config)) {
        mergeLocked();
      }
      long now = System.nanoTime();
      if (now - lastGcNanos >= GC_EVERY.toNanos()) {
        lastGcNanos = now;
        gcLocked();
      }
      if (config.get(StoreOptions.COMPACTION_BACKGROUND) && now - lastCompactNanos >= COMPACT_EVERY.toNanos()) {
        lastCompactNanos = now;
        BaseTable base = host.base();
        try {
          if (base.dataset().fragments().size() >= COMPACT_FRAGMENTS) {
            compactLocked();
          }
        } finally {
          base.release();
        }
      }
      if (now - lastStatsLogNanos >= STATS_LOG_EVERY.toNanos()) {
        lastStatsLogNanos = now;
        LOG.info("{}: {}", host.name(), host.summary());
      }
    } catch (RuntimeException e) {
      failures.incrementAndGet();
      LOG.warn("{}: background maintenance failed: {}", host.name(), e.toString());
    } finally {
      running.unlock();
    }
  }

  private boolean mergeDue(StoreConfig config) {
    int trigger = config.get(StoreOptions.MERGE_GENERATIONS);
    Instant ageCutoff = Instant.now().minus(config.get(StoreOptions.MERGE_INTERVAL));
    BaseTable base = host.base();
    try {
      int unmerged = 0;
      for (String shard : ShardIds.all(host.shards())) {
        long w = base.watermark(shard);
        for (ShardManifest.FlushedGeneration g : manifest(shard).flushed()) {
          if (g.generation() > w) {
            unmerged++;
            Instant made = generationMade(config, shard, g.path());
            if (made != null && made.isBefore(ageCutoff)) {
              return true;
            }
          } else {
            generationMade.remove(shard + " " + g.path());
          }
        }
      }
      for (var e : host.transactions().publishedParts().entrySet()) {
        long w = base.watermark(io.lancecontext.core.internal.txn.TxnIds.txnShardId(e.getKey()));
        for (var p : e.getValue()) {
          if (p.sequence() > w) {
            unmerged++;
            var record = host.transactions().record(p.txid());
            if (record.isPresent() && record.get().atMillis() < ageCutoff.toEpochMilli()) {
              return true;
            }
          }
        }
      }
      return unmerged >= trigger;
    } catch (IOException e) {
      throw LanceErrors.translate("check the merge triggers", e);
    } finally {
      base.release();
    }
  }

  /**
   * The newest manifest of a shard, kept between ticks: versions are written once, consecutively, and
   * garbage collection removes only old ones, so one existence check of the next version (one request on
   * an object store) finds out whether it changed; only a changed one is read.
   */
  private ShardManifest manifest(String shard) throws IOException {
    ShardManifest known = manifests.get(shard);
    if (known == null || known.version() == 0) {
      known = ShardManifests.latest(host.files(), shard);
    } else {
      long v = known.version();
      while (ShardManifests.exists(host.files(), shard, v + 1)) {
        v++;
      }
      if (v != known.version()) {
        known = ShardManifests.read(host.files(), shard, v);
      }
    }
    manifests.put(shard, known);
    return known;
  }

  /**
   * When a flushed generation was made: the commit time lance-core wrote into the generation's own manifest
   * when it flushed it (never a file or directory time). A generation never changes, so this is read once
   * (one dataset open) and kept until the generation is merged; null if it cannot be read now (gone, or the
   * store unreachable: the age trigger then waits for the next tick).
   */
  private Instant generationMade(StoreConfig config, String shard, String path) {
    String key = shard + " " + path;
    Instant known = generationMade.get(key);
    if (known != null) {
      return known;
    }
    String uri = config.uri() + "/" + ShardLayout.generationDir(shard, path);
    try (LanceDataset generation = StoreDatasets.open(uri, config, host.allocator())) {
      Instant made = generation.committedAt();
      generationMade.put(key, made);
      return made;
    } catch (RuntimeException e) {
      LOG.debug("{}: no commit time for generation {} of shard {} yet: {}", host.name(), path, shard, e.toString());
      return null;
    }
  }

  /** Merges every unmerged generation now. */
  public MergeResult merge() {
    running.lock();
    try {
      return mergeLocked();
    } finally {
      running.unlock();
    }
  }

  /** How often {@link #flush} logs its progress at INFO. */
  static final Duration FLUSH_PROGRESS_EVERY = Duration.ofSeconds(5);

  /**
   * Folds every row acknowledged before the call into the base table: claims and seals every shard's WAL
   * tail (see {@link BucketWriter#claimAndSeal}), then merges until each shard's merged watermark reaches the
   * generations sealed by then, then removes tombstone rows from the base. Waits for the maintenance lease
   * while another process holds it; retries failures; gives up at {@code timeout}, returning incomplete.
   */
  public FlushResult flush(Duration timeout) {
    long started = System.nanoTime();
    long deadline = started + timeout.toNanos();
    long nextLog = started + FLUSH_PROGRESS_EVERY.toNanos();
    int claimed = 0;
    int mergesRun = 0;
    int generations = 0;
    long rows = 0;
    RuntimeException lastFailure = null;
    BucketWriter[] writers = host.writers();
    boolean[] sealed = new boolean[writers.length];
    int sealedCount = 0;
    while (sealedCount < writers.length) {
      for (int b = 0; b < writers.length; b++) {
        if (!sealed[b]) {
          try {
            claimed += writers[b].claimAndSeal("flush");
            sealed[b] = true;
            sealedCount++;
          } catch (io.lancecontext.core.error.LanceContextException e) {
            lastFailure = e;  // typically another writer claiming the shard at the same moment: try again
          }
        }
      }
      if (sealedCount < writers.length) {
        if (System.nanoTime() >= deadline) {
          return incomplete(started, claimed, mergesRun, generations, rows, (writers.length - sealedCount)
              + " buckets could not be sealed: " + lastFailure);
        }
        sleepQuietly(Duration.ofMillis(200));
      }
    }
    java.util.Map<String, Long> targets = new java.util.HashMap<>();
    try {
      for (String shard : ShardIds.all(host.shards())) {
        long top = 0;
        for (ShardManifest.FlushedGeneration g : ShardManifests.latest(host.files(), shard).flushed()) {
          top = Math.max(top, g.generation());
        }
        targets.put(shard, top);
      }
      // every transaction published by now: its bucket's transaction watermark reaches its publish sequence
      for (var e : host.transactions().publishedParts().entrySet()) {
        long top = 0;
        for (var p : e.getValue()) {
          top = Math.max(top, p.sequence());
        }
        targets.put(io.lancecontext.core.internal.txn.TxnIds.txnShardId(e.getKey()), top);
      }
    } catch (IOException e) {
      throw LanceErrors.translate("read the shard manifests", e);
    }
    while (true) {
      String behind = behind(targets);
      if (behind == null) {
        break;
      }
      long now = System.nanoTime();
      if (now >= deadline) {
        return incomplete(started, claimed, mergesRun, generations, rows, "still unmerged after " + timeout + ": "
            + behind + (lastFailure == null ? "" : "; last failure: " + lastFailure));
      }
      if (now >= nextLog) {
        nextLog = now + FLUSH_PROGRESS_EVERY.toNanos();
        LOG.info("{}: flush: {} merges ({} generations, {} rows) so far; still unmerged: {}", host.name(), mergesRun,
            generations, rows, behind);
      }
      MergeResult r;
      running.lock();
      try {
        r = mergeLocked();
      } catch (io.lancecontext.core.error.LanceContextException e) {
        lastFailure = e;
        r = null;
      } finally {
        running.unlock();
      }
      if (r != null && r.merged()) {
        mergesRun++;
        generations += r.generationCount();
        rows += r.rows();
      } else {
        sleepQuietly(Duration.ofMillis(500));  // another process holds the lease (and may be merging these)
      }
    }
    long purged;
    while (true) {
      running.lock();
      try {
        Long n = withLease("remove tombstone rows", null,
            lease -> Merger.purgeTombstones(host.config(), host.spec(), host.allocator(), lease));
        if (n != null) {
          purged = n;
          break;
        }
      } catch (io.lancecontext.core.error.LanceContextException e) {
        lastFailure = e;
      } finally {
        running.unlock();
      }
      if (System.nanoTime() >= deadline) {
        return incomplete(started, claimed, mergesRun, generations, rows, "every row is merged, but tombstone rows "
            + "are left in the base table: " + (lastFailure == null ? "the maintenance lease stayed taken" : lastFailure));
      }
      sleepQuietly(Duration.ofMillis(500));
    }
    long millis = (System.nanoTime() - started) / 1_000_000;
    long version = baseVersion();
    if (millis > FLUSH_PROGRESS_EVERY.toMillis()) {
      LOG.info("{}: flushed in {} ms: {} merges ({} generations, {} rows), {} shards claimed, {} tombstone rows "
          + "removed; base version {}", host.name(), millis, mergesRun, generations, rows, claimed, purged, version);
    }
    return new FlushResult(true, "flushed", claimed, mergesRun, generations, rows, purged, version, millis);
  }

  /** A shard whose merged watermark is below its target, as text; null when none is. */
  private String behind(java.util.Map<String, Long> targets) {
    BaseTable base = host.base();
    try {
      int shards = 0;
      StringBuilder first = new StringBuilder();
      for (var e : targets.entrySet()) {
        long w = base.watermark(e.getKey());
        if (w < e.getValue()) {
          if (shards++ == 0) {
            first.append("shard ").append(e.getKey()).append(" merged up to generation ").append(w).append(" of ")
                .append(e.getValue());
          }
        }
      }
      return shards == 0 ? null : shards + " shards (" + first + ")";
    } finally {
      base.release();
    }
  }

  private long baseVersion() {
    BaseTable base = host.base();
    try {
      return base.version();
    } finally {
      base.release();
    }
  }

  private FlushResult incomplete(long started, int claimed, int merges, int generations, long rows, String reason) {
    long millis = (System.nanoTime() - started) / 1_000_000;
    LOG.warn("{}: flush incomplete after {} ms: {}", host.name(), millis, reason);
    return new FlushResult(false, reason, claimed, merges, generations, rows, 0, baseVersion(), millis);
  }

  private static void sleepQuietly(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new io.lancecontext.core.error.OperationInterruptedException("interrupted while flushing", e);
    }
  }

  /** Compacts the base table now. */
  public CompactionResult compact() {
    running.lock();
    try {
      return compactLocked();
    } finally {
      running.unlock();
    }
  }

  /** Collects garbage now (only what is older than {@code gc.grace}). */
  public GcResult gc() {
    running.lock();
    try {
      return gcLocked();
    } finally {
      running.unlock();
    }
  }

  /** Work that needs the store's maintenance lease. */
  @FunctionalInterface
  private interface LeasedWork<T> {
    T run(MaintenanceLock lease) throws IOException;
  }

  /** Runs {@code work} holding the maintenance lease, or returns {@code skipped} if another process has it. */
  private <T> T withLease(String what, T skipped, LeasedWork<T> work) {
    try {
      Optional<MaintenanceLock> lease = MaintenanceLock.tryAcquire(host.files(), LEASE);
      if (lease.isEmpty()) {
        return skipped;
      }
      try (MaintenanceLock held = lease.get()) {
        return work.run(held);
      }
    } catch (IOException e) {
      throw LanceErrors.translate(what, e);
    }
  }

  private MergeResult mergeLocked() {
    return withLease("merge", MergeResult.skipped("another process holds the maintenance lease", -1), lease -> {
      MergeResult r = Merger.merge(host.config(), host.spec(), host.shards(), host.files(), host.allocator(), lease,
          host.transactions());
      if (r.merged()) {
        merges.incrementAndGet();
        mergedGenerations.addAndGet(r.generationCount());
        lastMerge.set(r);
        LOG.info("{}: merged {} generations ({} rows, {} deletions) into base version {} in {} ms{}", host.name(),
            r.generationCount(), r.rows(), r.tombstones(), r.baseVersion(), r.millis(),
            r.remaining() > 0 ? "; " + r.remaining() + " generations left for the next merge (merge.max-bytes, merge.max-inputs)" : "");
      }
      return r;
    });
  }

  private CompactionResult compactLocked() {
    return withLease("compact", CompactionResult.skipped("another process holds the maintenance lease"), lease -> {
      CompactionResult r = Compactor.compact(host.config(), host.spec(), host.allocator(), lease);
      compactions.incrementAndGet();
      LOG.info("{}: compacted {} fragments into {} (base version {}) in {} ms{}", host.name(), r.fragmentsBefore(),
          r.fragmentsAfter(), r.baseVersion(), r.millis(), r.reason().isEmpty() ? "" : "; " + r.reason());
      return r;
    });
  }

  private GcResult gcLocked() {
    return withLease("garbage-collect", GcResult.skipped(), lease -> {
      GcResult r = GarbageCollector.collect(host.config(), host.shards(), host.files(), host.allocator(),
          host.config().get(StoreOptions.GC_GRACE), lease, host.transactions());
      gcRuns.incrementAndGet();
      if (r.generationDirs() + r.walEntries() + r.manifests() + r.baseVersionsRemoved() > 0) {
        LOG.info("{}: garbage collected {} generations, {} WAL entries, {} manifests, {} base versions ({} bytes)",
            host.name(), r.generationDirs(), r.walEntries(), r.manifests(), r.baseVersionsRemoved(), r.bytesRemoved());
      }
      return r;
    });
  }

  public StoreStats.MaintenanceCounters counters() {
    return new StoreStats.MaintenanceCounters(merges.get(), mergedGenerations.get(), gcRuns.get(), compactions.get(), failures.get(),
        lastMerge.get());
  }

  @Override
  public void close() {
    closed = true;
    task.cancel(false);
    running.lock();  // wait for a running tick
    running.unlock();
  }
}
