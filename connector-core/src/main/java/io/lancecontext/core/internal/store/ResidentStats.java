package io.lancecontext.core.internal.store;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.maintenance.Maintenance;
import io.lancecontext.core.internal.read.FreshCache;
import io.lancecontext.core.internal.read.FreshShard;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.Snapshots;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.StoreStats;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Collects a resident store's {@link StoreStats} from one snapshot: the base table, each lane's fresh tier
 * and writer, maintenance counters, the fresh-tier cache and the bytes under the store (re-measured at most
 * every 10 s). Thread-safe.
 */
final class ResidentStats {
  private static final long BYTES_REFRESH_NANOS = 10_000_000_000L;

  private final StoreConfig config;
  private final StoreFiles files;
  private final BucketWriter[] writers;
  private final Snapshots reads;
  private final Maintenance maintenance;
  /** A snapshot of every shard, taken as one operation of the store. */
  private final Supplier<LsmSnapshot> snapshot;
  private volatile long bytesOnDisk = -1;
  private volatile long bytesMeasuredAt;
  private final AtomicBoolean measuringBytes = new AtomicBoolean();

  ResidentStats(StoreConfig config, StoreFiles files, BucketWriter[] writers, Snapshots reads, Maintenance maintenance,
      Supplier<LsmSnapshot> snapshot) {
    this.config = config;
    this.files = files;
    this.writers = writers;
    this.reads = reads;
    this.maintenance = maintenance;
    this.snapshot = snapshot;
  }

  /** The stats now, the counts of resident stores and open writers passed through. */
  StoreStats collect(int residentStores, int openWriters) {
    try (LsmSnapshot snap = snapshot.get()) {
      LanceDataset ds = snap.base().dataset();
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
      return new StoreStats(config.uri(), ds.version(), ds.countRows(), ds.fragments().size(), snap.freshRows(),
          unmerged, perShard, bytes, maintenance.counters(), LanceRuntime.get().sessionSizeBytesRecent(), residentStores,
          openWriters, new StoreStats.FreshCache(cache.bytes(), config.get(StoreOptions.FRESH_CACHE_BYTES), cache.entries(),
          cache.evictions()), reads.keyHashes());
    } catch (IOException e) {
      throw LanceErrors.translate("collect stats", e);
    }
  }

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

  /** Lane writers open now. */
  int openWriters() {
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
}
