package io.lancecontext.core.internal.lance;

import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.compaction.Compaction;
import org.lance.compaction.CompactionOptions;
import org.lance.compaction.CompactionPlan;
import org.lance.compaction.CompactionTask;
import org.lance.compaction.RewriteResult;
import org.lance.compaction.TaskData;

/**
 * Rewrites a table's small fragments into fewer large ones with lance-core. Always with deferred index
 * remap: lance-core 7.0.0's default remap aborts the JVM on a table with a MemWAL index. The key index is
 * then rebuilt so that it covers the new fragments ({@code optimizeIndices} after a deferred remap
 * silently loses rows in 7.0.0), after which nothing needs the fragment-reuse index the deferred
 * remap left: it is dropped, because it references the pre-compaction version, and once garbage
 * collection removed that version every later compaction would fail.
 *
 * <p>lance-core 7.0.0 cannot rewrite a fragment that holds a zero-length blob (a non-null blob
 * descriptor of size 0: an empty value of a non-nullable blob column, or a null that merge-insert
 * wrote as empty); the rewrite fails with "Expected option to have value". Such fragments are left as
 * they are: the plan's groups are split into runs of fragments without one, and the outcome names the
 * fragments skipped.
 */
public final class LanceCompaction {
  private LanceCompaction() {}

  /** The index a deferred-remap compaction leaves behind. */
  public static final String FRAG_REUSE_INDEX = "__lance_frag_reuse";

  /**
   * What a compaction did.
   *
   * @param fragmentsBefore fragments before it
   * @param fragmentsAfter fragments after it
   * @param version the table's version after it
   * @param skipped fragments left as they are (they hold zero-length blobs)
   * @param reason why they were left, or empty
   */
  public record Outcome(int fragmentsBefore, int fragmentsAfter, long version, List<Integer> skipped, String reason) {}

  /** The only compaction options lancecontext ever passes to lance-core. */
  public static CompactionOptions options(StoreConfig config) {
    return CompactionOptions.builder().withDeferIndexRemap(true)
        .withTargetRowsPerFragment(config.get(StoreOptions.COMPACTION_TARGET_ROWS)).build();
  }

  /**
   * Compacts the table {@code dataset} is a handle of, moving the handle to the latest version; rebuilds the
   * key index when fragments were rewritten. {@code beforeCommit} runs before the compaction's commit.
   */
  public static Outcome compact(LanceDataset dataset, SchemaSpec spec, StoreConfig config, Runnable beforeCommit) {
    Dataset ds = dataset.lance();
    int before = ds.getFragments().size();
    long versionBefore = ds.version();
    CompactionOptions options = options(config);
    CompactionPlan plan = LanceErrors.call("plan the compaction of the base table",
        () -> Compaction.planCompaction(ds, options));
    List<List<FragmentMetadata>> groups = new ArrayList<>();
    for (CompactionTask task : plan.getCompactionTasks()) {
      groups.add(task.getTaskData().getFragments());
    }
    Set<Integer> unrewritable = withEmptyBlobs(dataset, spec, groups);
    List<RewriteResult> rewritten = new ArrayList<>();
    for (List<FragmentMetadata> group : groups) {
      for (List<FragmentMetadata> run : runsWithout(group, unrewritable)) {
        CompactionTask task = new CompactionTask(new TaskData(run), plan.getReadVersion(), options);
        rewritten.add(LanceErrors.call("compact the base table (fragments " + ids(run) + ")", () -> task.execute(ds)));
      }
    }
    if (!rewritten.isEmpty()) {
      beforeCommit.run();
      LanceErrors.run("commit the compaction of the base table", () -> Compaction.commitCompaction(ds, rewritten, options));
    }
    ds.checkoutLatest();
    if (ds.version() != versionBefore) {
      // fragments were rewritten (possibly as many as before, e.g. to materialize deletions): the key
      // index must cover the new ones, or lookups through it miss rows and NOT IN filters return
      // rows they exclude
      KeyIndex.ensure(dataset, spec, config, true);
      ds.checkoutLatest();
      // a vector index names rows of the fragments just replaced: dropped, so searches read the new fragments
      // exactly until maintenance builds it again (search.index.min-rows)
      VectorIndex.dropAll(dataset, spec);
      TextIndex.dropAll(dataset, TextIndex.columns(spec, config));
    }
    if (ds.listIndexes().contains(FRAG_REUSE_INDEX)) {
      LanceErrors.run("drop the fragment-reuse index", () -> ds.dropIndex(FRAG_REUSE_INDEX));
      ds.checkoutLatest();
    }
    String reason = unrewritable.isEmpty() ? "" : "fragments " + unrewritable + " hold zero-length blobs, which "
        + "lance-core 7.0.0 cannot rewrite; they are compacted once a merge replaces or deletes those rows";
    return new Outcome(before, ds.getFragments().size(), ds.version(), List.copyOf(unrewritable), reason);
  }

  /**
   * Splits a planned group into runs of consecutive fragments that are not {@code excluded}, keeping the
   * runs worth a rewrite: two fragments or more, or one with deleted rows to drop.
   */
  static List<List<FragmentMetadata>> runsWithout(List<FragmentMetadata> group, Set<Integer> excluded) {
    List<List<FragmentMetadata>> runs = new ArrayList<>();
    List<FragmentMetadata> run = new ArrayList<>();
    for (FragmentMetadata f : group) {
      if (excluded.contains(f.getId())) {
        addRun(runs, run);
        run = new ArrayList<>();
      } else {
        run.add(f);
      }
    }
    addRun(runs, run);
    return runs;
  }

  private static void addRun(List<List<FragmentMetadata>> runs, List<FragmentMetadata> run) {
    if (run.size() >= 2 || run.size() == 1 && run.get(0).getNumDeletions() > 0) {
      runs.add(run);
    }
  }

  /**
   * The fragments among {@code groups} whose live rows hold a zero-length blob descriptor, read from the
   * descriptors alone (two integers per row and blob column; the blob bytes are not read).
   */
  private static Set<Integer> withEmptyBlobs(LanceDataset ds, SchemaSpec spec, List<List<FragmentMetadata>> groups) {
    Set<Integer> found = new TreeSet<>();
    List<String> blobs = spec.blobColumns().stream().map(ColumnSpec::name).toList();
    List<Integer> candidates = groups.stream().flatMap(List::stream).map(FragmentMetadata::getId).toList();
    if (blobs.isEmpty() || candidates.isEmpty()) {
      return found;
    }
    ScanRequest request = ScanRequest.of(blobs).fragments(candidates).withRowAddress(true);
    try (ScanHandle scan = ds.scan(request)) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot batch = reader.getVectorSchemaRoot();
        FieldVector addresses = batch.getVector(RowIds.ROW_ADDRESS);
        for (String column : blobs) {
          if (!(batch.getVector(column) instanceof StructVector descriptors)) {
            continue;  // not a descriptor column: nothing lance rewrites as a blob
          }
          FieldVector size = (FieldVector) descriptors.getChild("size");
          if (size == null) {
            continue;  // another descriptor layout than lance-core 7.0.0's legacy (position, size)
          }
          for (int r = 0; r < batch.getRowCount(); r++) {
            if (!descriptors.isNull(r) && !size.isNull(r) && ((Number) size.getObject(r)).longValue() == 0) {
              found.add(RowIds.fragmentOf(RowIds.get(addresses, r)));
            }
          }
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("read the blob descriptors of the fragments to compact", e);
    }
    return found;
  }

  private static List<Integer> ids(List<FragmentMetadata> fragments) {
    return fragments.stream().map(FragmentMetadata::getId).toList();
  }
}
