package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.TextIndex;
import io.lancecontext.core.internal.lance.VectorIndex;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.StoreStats;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs each maintenance task once (merge, compaction, garbage collection, tombstone removal) under the
 * store's {@link MaintenanceLock}, returning the task's skipped result when another process holds it, and
 * counts and logs what ran. Callers run one task at a time.
 */
final class MaintenanceTasks {
  private static final Logger LOG = LoggerFactory.getLogger(Maintenance.class);

  /** Maintenance lease duration; the holder renews it every third of it, so only a dead holder's lease expires. */
  static final Duration LEASE = Duration.ofMinutes(2);

  private final Maintenance.Host host;
  private final AtomicLong merges = new AtomicLong();
  private final AtomicLong mergedGenerations = new AtomicLong();
  private final AtomicLong gcRuns = new AtomicLong();
  private final AtomicLong compactions = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong indexBuilds = new AtomicLong();
  private final AtomicReference<MergeResult> lastMerge = new AtomicReference<>();
  private final BaseKeys baseKeys = new BaseKeys();

  MaintenanceTasks(Maintenance.Host host) {
    this.host = host;
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

  /** Merges what {@link MergeSelection} chooses (see {@link Merger}). */
  MergeResult merge() {
    return withLease("merge", MergeResult.skipped("another process holds the maintenance lease", -1), lease -> {
      MergeResult r = Merger.merge(host.config(), host.spec(), host.shards(), host.files(), host.allocator(), lease,
          host.transactions(), baseKeys);
      if (r.merged()) {
        openNewBase();
        merges.incrementAndGet();
        mergedGenerations.addAndGet(r.generationCount());
        lastMerge.set(r);
        LOG.info("{}: merged {} generations ({} rows, {} deletions) into base version {} in {} ms{}", host.name(),
            r.generationCount(), r.rows(), r.tombstones(), r.baseVersion(), r.millis(),
            r.remaining() > 0 ? "; " + r.remaining() + " generations left for the next merge (merge.max-bytes, "
                + "merge.max-inputs, or a publish in flight)" : "");
      }
      return r;
    });
  }

  /**
   * Opens the base version just committed for this JVM's readers here, on the maintenance thread, so that the next
   * lookup or scan does not (20-70 ms under load, on the path of a checkpoint's freshness); the next tick would open
   * it anyway to check the merge triggers.
   */
  private void openNewBase() {
    host.base().release();
  }

  /** Compacts the base table (see {@link Compactor}). */
  CompactionResult compact() {
    return withLease("compact", CompactionResult.skipped("another process holds the maintenance lease"), lease -> {
      CompactionResult r = Compactor.compact(host.config(), host.spec(), host.allocator(), lease);
      openNewBase();
      compactions.incrementAndGet();
      LOG.info("{}: compacted {} fragments into {} (base version {}) in {} ms{}", host.name(), r.fragmentsBefore(),
          r.fragmentsAfter(), r.baseVersion(), r.millis(), r.reason().isEmpty() ? "" : "; " + r.reason());
      return r;
    });
  }

  /** Collects garbage older than {@code gc.grace} (see {@link GarbageCollector}). */
  GcResult gc() {
    return withLease("garbage-collect", GcResult.skipped(), lease -> {
      GcResult r = GarbageCollector.collect(host.config(), host.shards(), host.files(), host.allocator(),
          host.config().get(StoreOptions.GC_GRACE), lease, host.transactions(), host::taggedSnapshots);
      gcRuns.incrementAndGet();
      if (r.generationDirs() + r.walEntries() + r.manifests() + r.baseVersionsRemoved() > 0) {
        LOG.info("{}: garbage collected {} generations, {} WAL entries, {} manifests, {} base versions ({} bytes)",
            host.name(), r.generationDirs(), r.walEntries(), r.manifests(), r.baseVersionsRemoved(), r.bytesRemoved());
      }
      return r;
    });
  }

  /**
   * Builds the vector index of each vector column that needs one ({@link VectorIndex#refreshIfStale}) once the
   * base holds {@code minRows} rows; the columns built (none when another process holds the lease).
   */
  List<String> index(long minRows) {
    return withLease("build the search indexes", List.of(), lease -> {
      long started = System.nanoTime();
      try (LanceDataset ds = StoreDatasets.open(host.config().uri(), host.config(), host.allocator())) {
        List<String> built = new java.util.ArrayList<>(VectorIndex.refreshIfStale(ds, host.spec(), minRows));
        built.addAll(TextIndex.refreshIfStale(ds, TextIndex.columns(host.spec(), host.config()), minRows));
        indexBuilds.addAndGet(built.size());
        if (!built.isEmpty()) {
          LOG.info("{}: built the search indexes of {} ({} rows, base version {}) in {} ms", host.name(), built,
              ds.countRows(), ds.version(), (System.nanoTime() - started) / 1_000_000);
        }
        return built;
      }
    });
  }

  /** Removes tombstone rows from the base table; null when another process holds the lease. */
  Long purgeTombstones() {
    return withLease("remove tombstone rows", null,
        lease -> Merger.purgeTombstones(host.config(), host.spec(), host.allocator(), lease));
  }

  /** Counts a failed background tick. */
  void failed() {
    failures.incrementAndGet();
  }

  StoreStats.MaintenanceCounters counters() {
    return new StoreStats.MaintenanceCounters(merges.get(), mergedGenerations.get(), gcRuns.get(), compactions.get(), failures.get(),
        lastMerge.get(), indexBuilds.get());
  }
}
