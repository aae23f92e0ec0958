package io.lancecontext.core.result;

/**
 * What a garbage collection removed.
 *
 * @param ran false if another process held the maintenance lease
 * @param generationDirs merged (or orphaned) generation directories deleted
 * @param walEntries WAL entries deleted (all already contained in generations)
 * @param manifests old shard-manifest versions deleted
 * @param baseVersionsRemoved old base-table versions removed by Lance's cleanup
 * @param bytesRemoved bytes freed (Lance's cleanup plus the files above)
 */
public record GcResult(boolean ran, int generationDirs, int walEntries, int manifests, long baseVersionsRemoved,
    long bytesRemoved) {

  public static GcResult skipped() {
    return new GcResult(false, 0, 0, 0, 0, 0);
  }
}
