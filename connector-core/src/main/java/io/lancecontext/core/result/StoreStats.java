package io.lancecontext.core.result;

import java.util.List;

/**
 * A store's state as seen from this JVM.
 *
 * @param uri the store's location
 * @param baseVersion latest base-table version
 * @param baseRows physical rows in the base table (superseded, expired and not yet purged deleted rows
 *     included; use {@code count()} for the visible count)
 * @param fragments base-table fragments
 * @param freshRows keys whose newest row is still in the fresh tier (unmerged generations and WAL tail)
 * @param unmergedGenerations flushed generations not yet merged, all shards
 * @param shards per-shard state (each bucket writes two MemWAL shards in turn, its lanes)
 * @param bytesOnDisk bytes under the store's directory (base, generations, WAL, manifests), measured at most
 *     every 10 s
 * @param maintenance background and on-demand maintenance counters of this JVM
 * @param sessionBytes bytes held by this JVM's shared Lance session (all stores)
 * @param residentStores stores resident in this JVM
 * @param openWriters shard writers open in this JVM (all stores)
 * @param freshCache this JVM's cache of the store's fresh tier
 * @param keyHashes this JVM's hashes of the base table's keys, with which lookups by key skip fragments
 */
public record StoreStats(String uri, long baseVersion, long baseRows, int fragments, long freshRows,
    int unmergedGenerations, List<Shard> shards, long bytesOnDisk, MaintenanceCounters maintenance, long sessionBytes,
    int residentStores, int openWriters, FreshCache freshCache, KeyHashes keyHashes) {

  /**
   * The resident store's hashes of base-table keys, one set per fragment (bounded by an eighth of
   * {@code read.fresh-cache-bytes}).
   *
   * @param bytes bytes held
   * @param boundBytes the bound
   * @param fragments fragments (of any version read in this JVM) whose hashes are held
   */
  public record KeyHashes(long bytes, long boundBytes, long fragments) {}

  /**
   * The resident store's cache of decoded fresh-tier data (option {@code read.fresh-cache-bytes}). Data an
   * open read still uses after the cache dropped it is not counted.
   *
   * @param bytes bytes the cache holds (never above {@code boundBytes} once an insertion completes)
   * @param boundBytes the bound
   * @param entries WAL entries and generations held
   * @param evictions entries dropped to stay within the bound, since the store became resident
   */
  public record FreshCache(long bytes, long boundBytes, long entries, long evictions) {}

  /**
   * One MemWAL shard (one lane of a bucket).
   *
   * @param bucket bucket number
   * @param lane lane of the bucket (0 or 1)
   * @param shardId MemWAL shard id
   * @param mergedWatermark highest generation merged into the base table
   * @param unmergedGenerations flushed generations above the watermark
   * @param walTailEntries WAL entries not yet sealed into a generation
   * @param writerOpen whether this JVM holds the shard's writer
   * @param writerEpoch epoch of this JVM's writer, or -1
   * @param puts puts by this JVM
   * @param seals generations sealed by this JVM
   * @param abandonedWriters writers this JVM abandoned after fencing or timeouts
   */
  public record Shard(int bucket, int lane, String shardId, long mergedWatermark, int unmergedGenerations, int walTailEntries,
      boolean writerOpen, long writerEpoch, long puts, long seals, long abandonedWriters) {}

  /**
   * Maintenance this JVM ran on the store (background and on demand).
   *
   * @param merges merges that committed
   * @param mergedGenerations generations those merges folded into the base table
   * @param gcRuns garbage collections that ran
   * @param compactions compactions that committed
   * @param failures maintenance runs that failed
   * @param lastMerge the last merge, or null
   * @param searchIndexBuilds vector indexes built or rebuilt (background and {@code buildSearchIndexes})
   */
  public record MaintenanceCounters(long merges, long mergedGenerations, long gcRuns, long compactions, long failures,
      MergeResult lastMerge, long searchIndexBuilds) {}

  /** One line for logs. */
  public String summary() {
    return String.format("base v%d: %d rows in %d fragments; fresh: %d keys, %d unmerged generations; %d MiB on disk; "
        + "%d merges; session %d MiB; fresh cache %d MiB in %d entries; key hashes %d MiB for %d fragments; "
        + "%d resident stores, %d open writers", baseVersion, baseRows, fragments, freshRows, unmergedGenerations,
        bytesOnDisk >> 20, maintenance.merges(), sessionBytes >> 20, freshCache.bytes() >> 20, freshCache.entries(),
        keyHashes.bytes() >> 20, keyHashes.fragments(), residentStores, openWriters);
  }
}
