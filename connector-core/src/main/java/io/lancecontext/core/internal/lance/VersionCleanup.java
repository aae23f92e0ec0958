package io.lancecontext.core.internal.lance;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.lance.Dataset;
import org.lance.Tag;
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

  /** The lance-core tags this store's garbage collection puts on the base versions its tags read. */
  static final String KEEP_TAG_PREFIX = "lc-keep-";

  /**
   * Removes the versions below {@code keepFrom}, but never one an index still refers to, nor one of {@code tagged}
   * (or a version an index of one of those refers to). lance-core 7.0.0 reads an index's metadata at the version
   * the index was last written ({@code Index.datasetVersion()}); cleanup does not protect that version, and
   * removing it makes every later compaction fail with "_versions/&lt;v&gt;.manifest was not found". Versions below
   * {@code keepFrom} that must stay are kept by lance-core tags ({@value #KEEP_TAG_PREFIX}{@code <version>}), which
   * its cleanup skips: they are put on exactly those versions first, and taken off every other version.
   * Nothing is removed unless the first version kept is above the oldest of {@code history} ({@link #history}).
   * {@code beforeCommit} runs before each change.
   */
  public static Removed removeBefore(LanceDataset dataset, long keepFrom, List<TableVersion> history,
      Set<Long> tagged, Runnable beforeCommit) {
    Dataset base = dataset.lance();
    long keep = keepFrom;
    for (Index index : base.getIndexes()) {
      keep = Math.min(keep, index.datasetVersion());
    }
    long first = keep;
    Set<Long> present = new HashSet<>();
    history.forEach(v -> present.add(v.id()));
    Set<Long> kept = new TreeSet<>();
    for (long v : tagged) {
      if (v < first && present.contains(v)) {
        kept.add(v);
        kept.addAll(indexVersions(base, v));
      }
    }
    kept.retainAll(present);
    kept.removeIf(v -> v >= first);  // cleanup leaves those anyway
    keepTagged(base, kept, beforeCommit);
    if (history.isEmpty() || keep <= history.get(0).id()) {
      return Removed.NOTHING;
    }
    CleanupPolicy policy = CleanupPolicy.builder().withBeforeVersion(keep).withErrorIfTaggedOldVersions(false).build();
    beforeCommit.run();
    RemovalStats removed = LanceErrors.call("clean up old base-table versions", () -> base.cleanupWithPolicy(policy));
    return new Removed(removed.getOldVersions(), removed.getBytesRemoved());
  }

  /** The versions the indexes of version {@code version} were last written at. */
  private static Set<Long> indexVersions(Dataset base, long version) {
    Set<Long> out = new HashSet<>();
    try (Dataset old = LanceErrors.call("open base version " + version, () -> base.checkoutVersion(version))) {
      for (Index index : old.getIndexes()) {
        out.add(index.datasetVersion());
      }
    }
    return out;
  }

  /** Puts a keep tag on each of {@code versions} that has none and takes it off every other version. */
  private static void keepTagged(Dataset base, Set<Long> versions, Runnable beforeCommit) {
    Dataset.Tags tags = base.tags();
    Set<Long> present = new HashSet<>();
    for (Tag t : LanceErrors.call("list the base-table tags", tags::list)) {
      if (!t.getName().startsWith(KEEP_TAG_PREFIX)) {
        continue;
      }
      if (versions.contains(t.getVersion()) && t.getName().equals(KEEP_TAG_PREFIX + t.getVersion())) {
        present.add(t.getVersion());
      } else {
        beforeCommit.run();
        LanceErrors.run("untag base version " + t.getVersion(), () -> tags.delete(t.getName()));
      }
    }
    for (long v : versions) {
      if (!present.contains(v)) {
        beforeCommit.run();
        LanceErrors.run("tag base version " + v, () -> tags.create(KEEP_TAG_PREFIX + v, v));
      }
    }
  }
}
