package io.lancecontext.core.maintenance;

import io.lancecontext.core.error.LanceErrors;
import io.lancecontext.core.io.StoreFiles;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.store.StoreDatasets;
import io.lancecontext.core.wal.LogNames;
import io.lancecontext.core.wal.MergedWatermarks;
import io.lancecontext.core.wal.ShardIds;
import io.lancecontext.core.wal.ShardLayout;
import io.lancecontext.core.wal.ShardManifest;
import io.lancecontext.core.wal.ShardManifests;
import io.lancecontext.core.wal.WalEntry;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.cleanup.CleanupPolicy;
import org.lance.index.Index;
import org.lance.cleanup.RemovalStats;

/**
 * Deletes what no reader needs any more, once it is older than {@code gc.grace} (so that a read that
 * started before it became unneeded can finish): generation directories at or below the merged
 * watermark (and orphans no manifest lists, once a newer generation is listed), WAL entries at or below the replay position (their rows
 * are in generations), old shard-manifest versions, and old base-table versions (Lance's cleanup,
 * which never touches {@code _mem_wal}), but never a version an index still refers to. Callers hold the
 * {@link MaintenanceLock}.
 */
final class GarbageCollector {
  private GarbageCollector() {}

  private static final Pattern GENERATION_DIR = Pattern.compile("[0-9a-f]+_gen_(\\d+)");
  /** Newest manifest versions always kept, whatever their age. */
  static final int KEEP_MANIFESTS = 8;

  static GcResult collect(StoreConfig config, int shards, StoreFiles files, BufferAllocator allocator, Duration grace)
      throws IOException {
    Instant cutoff = Instant.now().minus(grace);
    int gens = 0;
    int wal = 0;
    int manifests = 0;
    long bytes = 0;
    long versions;
    try (Dataset base = StoreDatasets.open(config.uri(), config, allocator)) {
      Map<String, Long> watermarks = MergedWatermarks.read(base);
      for (String shard : ShardIds.all(shards)) {
        ShardManifest manifest = ShardManifests.latest(files, shard);
        long watermark = watermarks.getOrDefault(shard, 0L);
        Set<String> listed = new HashSet<>();
        long newestListed = 0;
        for (ShardManifest.FlushedGeneration g : manifest.flushed()) {
          listed.add(g.path());
          newestListed = Math.max(newestListed, g.generation());
        }
        for (String name : files.list(ShardLayout.shardDir(shard))) {
          Matcher m = GENERATION_DIR.matcher(name);
          if (!m.matches()) {
            continue;
          }
          long generation = Long.parseLong(m.group(1));
          String dir = ShardLayout.generationDir(shard, name);
          // an unlisted generation above every listed one may be a flush in progress (its writer
          // commits the manifest after the data); below a listed one it is a fenced writer's orphan
          boolean unneeded = generation <= watermark || !listed.contains(name) && generation < newestListed;
          if (unneeded && older(files, dir, cutoff)) {
            bytes += files.totalBytes(dir);
            files.deleteRecursively(dir);
            gens++;
          }
        }
        for (long p : WalEntry.positions(files, shard)) {
          String path = WalEntry.path(shard, p);
          if (p <= manifest.replayAfter() && older(files, path, cutoff)) {
            bytes += Math.max(0, files.size(path));
            files.deleteRecursively(path);
            wal++;
          }
        }
        List<Long> versionsOnDisk = ShardManifests.versions(files, shard);
        for (int i = 0; i < versionsOnDisk.size() - KEEP_MANIFESTS; i++) {
          String path = ShardLayout.manifestDir(shard) + "/" + LogNames.name(versionsOnDisk.get(i), LogNames.MANIFEST_SUFFIX);
          if (older(files, path, cutoff)) {
            bytes += Math.max(0, files.size(path));
            files.deleteRecursively(path);
            manifests++;
          }
        }
      }
      // lance-core 7.0.0 reads an index's metadata at the version the index was last written
      // (Index.datasetVersion()); cleanup does not protect that version, and removing it makes every
      // later compaction fail with "_versions/<v>.manifest was not found". Keep it.
      long oldestIndexed = base.version();
      for (Index index : base.getIndexes()) {
        oldestIndexed = Math.min(oldestIndexed, index.datasetVersion());
      }
      CleanupPolicy policy = CleanupPolicy.builder().withBeforeTimestampMillis(cutoff.toEpochMilli())
          .withBeforeVersion(oldestIndexed).build();
      RemovalStats removed = LanceErrors.call("clean up old base-table versions", () -> base.cleanupWithPolicy(policy));
      versions = removed.getOldVersions();
      bytes += removed.getBytesRemoved();
    }
    return new GcResult(true, gens, wal, manifests, versions, bytes);
  }

  private static boolean older(StoreFiles files, String path, Instant cutoff) throws IOException {
    Instant m = files.modified(path);
    return m != null && m.isBefore(cutoff);
  }
}
