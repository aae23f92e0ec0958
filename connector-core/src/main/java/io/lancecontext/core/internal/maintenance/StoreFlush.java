package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.read.BaseTable;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.result.FlushResult;
import io.lancecontext.core.result.MergeResult;
import java.io.IOException;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One flush of a store ({@link Maintenance#flush}): claims and seals every shard's WAL tail, merges until
 * each shard's merged watermark reaches what was sealed by then, then removes tombstone rows; retries and
 * waits for the maintenance lease until its timeout, then returns incomplete. Runs each merge and the
 * removal through the given calls, which take the store's turn to run maintenance.
 */
final class StoreFlush {
  private static final Logger LOG = LoggerFactory.getLogger(Maintenance.class);

  /** How often a flush logs its progress at INFO. */
  static final Duration FLUSH_PROGRESS_EVERY = Duration.ofSeconds(5);

  private final Maintenance.Host host;
  /** Runs one merge (see {@link MaintenanceTasks#merge}). */
  private final Supplier<MergeResult> merge;
  /** Removes tombstone rows; null when another process holds the lease (see {@link MaintenanceTasks#purgeTombstones}). */
  private final Supplier<Long> purge;

  StoreFlush(Maintenance.Host host, Supplier<MergeResult> merge, Supplier<Long> purge) {
    this.host = host;
    this.merge = merge;
    this.purge = purge;
  }

  /** Flushes within {@code timeout}; see {@link Maintenance#flush}. */
  FlushResult run(Duration timeout) {
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
      try {
        r = merge.get();
      } catch (io.lancecontext.core.error.LanceContextException e) {
        lastFailure = e;
        r = null;
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
      try {
        Long n = purge.get();
        if (n != null) {
          purged = n;
          break;
        }
      } catch (io.lancecontext.core.error.LanceContextException e) {
        lastFailure = e;
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
}
