package io.lancecontext.core.result;

import java.util.Map;

/**
 * What a merge did.
 *
 * @param merged false if nothing was merged (nothing to merge, or another process held the lease)
 * @param reason why nothing was merged, or "merged"
 * @param generations merged generations per shard id
 * @param rows rows written into the base table (newest per key, tombstones included)
 * @param tombstones tombstones among them: they replace their key's row in the base table in the same
 *     commit, which hides the key from every lancecontext read; {@code ContextStore.flush()} also removes
 *     them, for other Lance readers
 * @param baseVersion base-table version after the merge
 * @param millis duration
 * @param remaining unmerged generations and transaction parts this merge left for a later one (options
 *     {@code merge.max-bytes} and {@code merge.max-inputs}, or a bucket a transaction was being published into)
 */
public record MergeResult(boolean merged, String reason, Map<String, Integer> generations, long rows, long tombstones,
    long baseVersion, long millis, int remaining) {

  public static MergeResult skipped(String reason, long baseVersion) {
    return new MergeResult(false, reason, Map.of(), 0, 0, baseVersion, 0, 0);
  }

  public int generationCount() {
    return generations.values().stream().mapToInt(Integer::intValue).sum();
  }
}
