package io.lancecontext.core.result;

/**
 * What {@code ContextStore.flush()} did.
 *
 * @param complete true when every row acknowledged before the flush started is in the base table (and no
 *     tombstone row is left there); false when the timeout ended it first (see {@code reason})
 * @param reason "flushed", or what was still left when the timeout passed
 * @param claimedShards MemWAL shards whose unsealed WAL tail another writer (another process, or an abandoned
 *     writer) had left, claimed and sealed by the flush; those writers claim their shard back at their next add
 * @param merges merges run
 * @param generations generations merged
 * @param rows rows merged into the base table (newest per key, tombstones included)
 * @param tombstonesPurged tombstone rows removed from the base table
 * @param baseVersion base-table version afterwards
 * @param millis duration
 */
public record FlushResult(boolean complete, String reason, int claimedShards, int merges, int generations, long rows,
    long tombstonesPurged, long baseVersion, long millis) {}
