package io.lancecontext.core.internal.lance;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.lance.Dataset;
import org.lance.Version;
import org.lance.cleanup.CleanupPolicy;
import org.lance.cleanup.RemovalStats;
import org.lance.index.Index;

/** A table's version history, and the removal of its old versions with lance-core's cleanup. */
public final class VersionCleanup {
  private VersionCleanup() {}

  /**
   * One version of a table.
   *
   * @param id the version number
   * @param committedAtMillis when it was committed (the time lance-core wrote into its manifest)
   */
  public record TableVersion(long id, long committedAtMillis) {}

  /**
   * What a cleanup removed.
   *
   * @param versions old versions removed
   * @param bytes bytes freed
   */
  public record Removed(long versions, long bytes) {
    static final Removed NOTHING = new Removed(0, 0);
  }

  /** Every version of the table {@code dataset} is a handle of, oldest first. */
  public static List<TableVersion> history(LanceDataset dataset) {
    List<Version> versions = LanceErrors.call("list the base-table versions", dataset.lance()::listVersions);
    List<TableVersion> out = new ArrayList<>(versions.size());
    for (Version v : versions) {
      out.add(new TableVersion(v.getId(), v.getDataTime().toInstant().toEpochMilli()));
    }
    out.sort(Comparator.comparingLong(TableVersion::id));
    return out;
  }

  /**
   * Removes the versions below {@code keepFrom}, but never one an index still refers to: lance-core 7.0.0 reads
   * an index's metadata at the version the index was last written ({@code Index.datasetVersion()}); cleanup
   * does not protect that version, and removing it makes every later compaction fail with
   * "_versions/&lt;v&gt;.manifest was not found". Nothing is removed unless the first version kept is above the
   * oldest of {@code history} ({@link #history}). {@code beforeCommit} runs before the cleanup.
   */
  public static Removed removeBefore(LanceDataset dataset, long keepFrom, List<TableVersion> history,
      Runnable beforeCommit) {
    Dataset base = dataset.lance();
    long keep = keepFrom;
    for (Index index : base.getIndexes()) {
      keep = Math.min(keep, index.datasetVersion());
    }
    if (history.isEmpty() || keep <= history.get(0).id()) {
      return Removed.NOTHING;
    }
    CleanupPolicy policy = CleanupPolicy.builder().withBeforeVersion(keep).build();
    beforeCommit.run();
    RemovalStats removed = LanceErrors.call("clean up old base-table versions", () -> base.cleanupWithPolicy(policy));
    return new Removed(removed.getOldVersions(), removed.getBytesRemoved());
  }
}
