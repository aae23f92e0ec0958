package io.lancecontext.core.maintenance;

/**
 * What a compaction did.
 *
 * @param ran false if another process held the maintenance lease
 * @param fragmentsBefore base fragments before
 * @param fragmentsAfter base fragments after
 * @param baseVersion base-table version after
 * @param millis duration
 */
public record CompactionResult(boolean ran, int fragmentsBefore, int fragmentsAfter, long baseVersion, long millis) {}
