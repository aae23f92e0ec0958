package io.lancecontext.core.result;

import java.util.List;

/**
 * What a compaction did.
 *
 * @param ran false if another process held the maintenance lease
 * @param fragmentsBefore base fragments before
 * @param fragmentsAfter base fragments after
 * @param baseVersion base-table version after
 * @param millis duration
 * @param skippedFragments fragments the plan chose but that were left as they are (see {@link #reason()})
 * @param reason why fragments were skipped or the compaction did not run; empty when neither
 */
public record CompactionResult(boolean ran, int fragmentsBefore, int fragmentsAfter, long baseVersion, long millis,
    List<Integer> skippedFragments, String reason) {

  public CompactionResult {
    skippedFragments = List.copyOf(skippedFragments);
  }

  public static CompactionResult skipped(String reason) {
    return new CompactionResult(false, 0, 0, -1, 0, List.of(), reason);
  }
}
