package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.TextIndex;
import io.lancecontext.core.internal.lance.VectorIndex;
import io.lancecontext.core.internal.read.BaseTable;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.result.FlushResult;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>This class is the schedule and the one turn at a time: each task runs in {@link MaintenanceTasks}
 * (under the lease), the merge triggers are {@link MergeTriggers}, a flush is {@link StoreFlush}.
 */
public final class Maintenance implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Maintenance.class);

  /** A shard seals its generation once it holds this many WAL entries (far below lance's 8,000-batch memtable). */
  public static final long SEAL_ENTRIES = 1_024;
  /** The least seal size of {@link #sealBytes(StoreConfig, int)}, before a bucket's stagger. */
  static final long SEAL_BYTES_MIN = 1L << 20;

  /**
   * Bytes at which a bucket seals its open generation: {@code write.batch-bytes}, or its share of half of
   * {@code read.fresh-cache-bytes} when that is less, so that a reader's cache holds the open generation of every
   * bucket (its WAL entries, decoded in full) with room for the rest of the fresh tier; at least
   * {@value #SEAL_BYTES_MIN}. With the defaults (64 MiB, 256 MiB) a store of more than two shards seals below
   * 64 MiB. Sealing at 64 MiB, an at-least-once Flink sink of 50,000 rows/s into 4 shards filled a reader's cache
   * (246 MB) within 20 s; 138 WAL entries were dropped and read again, by lookups that took up to 1.5 s. Sealing at
   * 32 MiB, the cache held 98 MB and dropped nothing (docs/performance.md).
   */
  public static long sealBytes(StoreConfig config, int shards) {
    long share = config.get(StoreOptions.FRESH_CACHE_BYTES) / (2L * Math.max(1, shards));
    return Math.max(SEAL_BYTES_MIN, Math.min(config.get(StoreOptions.BATCH_BYTES), share));
  }

  /**
   * {@link #sealBytes} for one bucket, less by a sixteenth for each step of {@code bucket % 8}: buckets that fill at
   * the same pace (keys spread evenly) then seal one after the other, not together, so that a reader indexes one new
   * generation at a time rather than one per bucket at once (four at once made lookups wait 150–400 ms on 2 cores).
   */
  public static long sealBytes(StoreConfig config, int shards, int bucket) {
    long bound = sealBytes(config, shards);
    return bound - bound * (bucket % 8) / 16;
  }

  static final Duration TICK = Duration.ofSeconds(1);
  /** How often a tick checks that the store was not dropped elsewhere (one small read). */
  static final Duration LOCATION_CHECK_EVERY = Duration.ofSeconds(10);
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

    /** The snapshot of every tag: garbage collection keeps what they read. */
    java.util.List<io.lancecontext.core.read.ReadSplit.Snapshot> taggedSnapshots();
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
  private long lastIndexCheckNanos = System.nanoTime();
  /** Base rows below which the background does not look for a due vector index again. */
  private long indexRetryRows;
  /** When this maintenance last built a vector index (valid once {@link #indexBuilt}). */
  private long lastIndexBuildNanos;
  private boolean indexBuilt;
  /** Since when the merges have a backlog (the last merge left generations for the next), or -1. */
  private long mergeBacklogSinceNanos = -1;
  private final MaintenanceTasks tasks;
  private final MergeTriggers triggers;
  private final StoreFlush flush;

  public Maintenance(Host host) {
    this.host = host;
    this.tasks = new MaintenanceTasks(host);
    this.triggers = new MergeTriggers(host);
    this.flush = new StoreFlush(host, this::merge, this::purgeTombstones);
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
      MergeResult merged = triggers.due(config) ? tasks.merge() : null;
      long now = System.nanoTime();
      if (merged == null || merged.remaining() <= 0) {
        mergeBacklogSinceNanos = -1;
      } else if (mergeBacklogSinceNanos < 0) {
        mergeBacklogSinceNanos = now;
      }
      if (now - lastGcNanos >= GC_EVERY.toNanos()) {
        lastGcNanos = now;
        tasks.gc();
      }
      if (config.get(StoreOptions.COMPACTION_BACKGROUND) && now - lastCompactNanos >= COMPACT_EVERY.toNanos()) {
        lastCompactNanos = now;
        BaseTable base = host.base();
        try {
          if (base.dataset().fragments().size() >= COMPACT_FRAGMENTS) {
            tasks.compact();
          }
        } finally {
          base.release();
        }
      }
      if (now - lastIndexCheckNanos >= config.get(StoreOptions.SEARCH_INDEX_CHECK_INTERVAL).toNanos()
          && !(VectorIndex.columns(host.spec()).isEmpty() && TextIndex.columns(host.spec(), config).isEmpty())
          && !indexWaitsForMerges(mergeBacklogSinceNanos, now, config.get(StoreOptions.SEARCH_INDEX_REBUILD_INTERVAL))) {
        lastIndexCheckNanos = now;
        long minRows = config.get(StoreOptions.SEARCH_INDEX_MIN_ROWS);
        BaseTable base = host.base();
        boolean due;
        long rows;
        try {
          rows = base.dataset().countRows();
          due = rows >= indexRetryRows && (VectorIndex.stale(base.dataset(), host.spec(), minRows)
              || TextIndex.stale(base.dataset(), TextIndex.columns(host.spec(), config), minRows));
        } finally {
          base.release();
        }
        // a build costs tens of seconds of both cores and merges wait for it: one at most every rebuild-interval
        boolean throttled = indexBuilt
            && now - lastIndexBuildNanos < config.get(StoreOptions.SEARCH_INDEX_REBUILD_INTERVAL).toNanos();
        if (due && !throttled) {
          if (tasks.index(minRows).isEmpty()) {
            // too few vectors (records without embeddings): counted again once the base has grown by minRows
            indexRetryRows = rows + minRows;
          } else {
            indexBuilt = true;
            lastIndexBuildNanos = System.nanoTime();
          }
        }
      }
      if (now - lastStatsLogNanos >= STATS_LOG_EVERY.toNanos()) {
        lastStatsLogNanos = now;
        LOG.info("{}: {}", host.name(), host.summary());
      }
    } catch (StoreClosedException e) {
      // the store began closing during this tick (its gate closes before maintenance stops): nothing failed
      LOG.debug("{}: background maintenance stopped by the store's close: {}", host.name(), e.toString());
    } catch (RuntimeException e) {
      tasks.failed();
      LOG.warn("{}: background maintenance failed: {}", host.name(), e.toString());
    } finally {
      running.unlock();
    }
  }

  /**
   * Whether the search-index check waits for the merges: while merges have a backlog (the last one left
   * generations for the next: {@code merge.max-bytes}, {@code merge.max-inputs}) since {@code backlogSinceNanos}
   * (negative: none), for at most {@code rebuildInterval}. A build takes every core for tens of seconds and merges
   * wait for it, so one started after the first merge of a bulk load (a quarter of it) would hold the rest of the
   * load in the fresh tier meanwhile, and index rows the next build, within the rebuild interval, indexes again.
   */
  static boolean indexWaitsForMerges(long backlogSinceNanos, long nowNanos, Duration rebuildInterval) {
    return backlogSinceNanos >= 0 && nowNanos - backlogSinceNanos < rebuildInterval.toNanos();
  }

  /** Merges every unmerged generation now. */
  public MergeResult merge() {
    running.lock();
    try {
      return tasks.merge();
    } finally {
      running.unlock();
    }
  }

  /**
   * Folds every row acknowledged before the call into the base table: claims and seals every shard's WAL
   * tail (see {@link BucketWriter#claimAndSeal}), then merges until each shard's merged watermark reaches the
   * generations sealed by then, then removes tombstone rows from the base. Waits for the maintenance lease
   * while another process holds it; retries failures; gives up at {@code timeout}, returning incomplete.
   */
  public FlushResult flush(Duration timeout) {
    return flush.run(timeout);
  }

  /** Removes tombstone rows from the base table in this store's turn; null when another process holds the lease. */
  private Long purgeTombstones() {
    running.lock();
    try {
      return tasks.purgeTombstones();
    } finally {
      running.unlock();
    }
  }

  /**
   * Builds the vector index of each vector column now where the base holds rows and the index is missing or
   * stale, whatever {@code search.index.min-rows} says; the columns built.
   */
  public List<String> buildSearchIndexes() {
    running.lock();
    try {
      return tasks.index(1);
    } finally {
      running.unlock();
    }
  }

  /** Compacts the base table now. */
  public CompactionResult compact() {
    running.lock();
    try {
      return tasks.compact();
    } finally {
      running.unlock();
    }
  }

  /** Collects garbage now (only what is older than {@code gc.grace}). */
  public GcResult gc() {
    running.lock();
    try {
      return tasks.gc();
    } finally {
      running.unlock();
    }
  }

  public StoreStats.MaintenanceCounters counters() {
    return tasks.counters();
  }

  @Override
  public void close() {
    closed = true;
    task.cancel(false);
    running.lock();  // wait for a running tick
    running.unlock();
  }
}
