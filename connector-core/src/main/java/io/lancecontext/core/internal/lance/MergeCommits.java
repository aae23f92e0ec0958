package io.lancecontext.core.internal.lance;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.memwal.MergedGeneration;
import org.lance.merge.MergeInsertParams;
import org.lance.merge.MergeInsertResult;
import org.lance.operation.Update;
import org.lance.schema.LanceField;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commits a merge ({@code Merger}) makes to the base table, and what decides whether a staged part can
 * become a base fragment as it is. The only Java call of lance-core 7.0.0 that moves the MemWAL merged
 * watermark is {@code mergeInsert(...markGenerationsAsMerged(...))}, so every merge ends with one (lance-core-7.md).
 * {@code beforeCommit} runs before each commit (the caller checks it still holds the maintenance lock).
 */
public final class MergeCommits {
  private static final Logger LOG = LoggerFactory.getLogger(MergeCommits.class);
  /** Where a Lance dataset keeps its data files, relative to its root. */
  private static final String DATA_DIR = "data/";

  private MergeCommits() {}

  /** A generation of a shard (or a bucket's transaction watermark, see {@code TxnIds.txnShardId}) to mark merged. */
  public record Mark(String shardId, long generation) {}

  /**
   * The merge as one lance-core merge-insert of {@code rows} on the key that also marks the generations merged
   * (one commit). Its cost per matched key grows with the base (lance-core-7.md); used when the key index
   * cannot find the matched rows ({@code index.key} = none, or a key that filter text cannot carry).
   *
   * @return the version after the merge, once the key index is refreshed if it went stale
   */
  public static long mergeInsert(StoreConfig config, SchemaSpec spec, LanceDataset base, ArrowReader rows,
      List<Mark> marked, int inputCount, BufferAllocator allocator, Runnable beforeCommit) {
    // update unconditionally: generations reach the base in write order (a bucket's seals run one
    // after another, a recovering writer seals the older lane first). A conditional update
    // ("source._lc_seq > target._lc_seq") would be the safer rule, but lance-core 7.0.0 aborts the
    // JVM evaluating it on a table with a blob column (it reads the target's blob descriptors)
    MergeInsertParams params = markParams(spec, marked);
    beforeCommit.run();
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, rows, stream);
      MergeInsertResult result = LanceErrors.call("merge " + inputCount + " generations into the base table",
          () -> base.lance().mergeInsert(params, stream));
      return refreshed(result, spec, config);
    }
  }

  /**
   * The merge in two commits whose cost follows the rows merged, not the base (lance-core-7.md, "merges in
   * two commits"): (1) one {@code Update} that deletes, by deletion vector, the base rows of every merged
   * key (found through the key index) and adds the winning rows as new fragments; (2) an empty
   * merge-insert that only marks the generations merged. Between the two the generations are still in
   * the fresh tier, and reads exclude base rows of fresh keys, so a reader sees exactly what it saw before
   * commit (1); after (2) it sees the same rows from the base. A crash between them leaves the generations
   * unmerged: the next merge deletes the rows commit (1) added and adds the same rows again.
   *
   * @param rows the winning rows to write as new fragments, or null when none are (all appended whole)
   * @param keys the merged keys (rows and appended parts) the base may hold: their base rows are deleted
   * @param keysPassable whether every key is {@link LanceSql#passable}
   * @param appended fragments added as they are ({@link #appendable})
   * @return the version after the mark
   */
  public static long replaceAndMark(StoreConfig config, SchemaSpec spec, LanceDataset base, ArrowReader rows,
      Set<String> keys, boolean keysPassable, List<Mark> marked, List<LanceFragment> appended,
      BufferAllocator allocator, Runnable beforeCommit) throws IOException {
    Dataset ds = base.lance();
    long readVersion = ds.version();
    long t0 = System.nanoTime();
    Map<Integer, List<Integer>> doomed = KeyIndex.rowOffsets(base, spec, keys, keysPassable);
    long t1 = System.nanoTime();
    List<FragmentMetadata> written = new ArrayList<>();
    if (rows != null) {
      try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
        Data.exportArrayStream(allocator, rows, stream);
        written.addAll(LanceErrors.call("write the merged rows as fragments",
            () -> Fragment.write().datasetUri(config.uri()).allocator(allocator).data(stream)
                .storageOptions(config.storageOptions()).execute()));
      }
    }
    appended.forEach(f -> written.add(f.metadata()));
    long t2 = System.nanoTime();
    List<Long> removed = new ArrayList<>();
    List<FragmentMetadata> updated = new ArrayList<>();
    for (Map.Entry<Integer, List<Integer>> e : doomed.entrySet()) {
      FragmentMetadata after = LanceErrors.call("delete the replaced rows of fragment " + e.getKey(),
          () -> new Fragment(ds, e.getKey()).deleteRows(e.getValue()));
      if (after == null) {
        removed.add((long) e.getKey());
      } else {
        updated.add(after);
      }
    }
    long t3 = System.nanoTime();
    Update update = Update.builder().removedFragmentIds(removed).updatedFragments(updated).newFragments(written)
        .fieldsModified(new long[0]).build();
    MergeInsertParams mark = markParams(spec, marked);
    beforeCommit.run();
    try (Transaction txn = new Transaction(readVersion, update);
        Dataset replaced = LanceErrors.call("commit the merged rows", () -> ds.commitTransaction(txn))) {
      long t4 = System.nanoTime();
      // before the mark: its merge-insert reads the keys of every fragment the index does not cover (the parts
      // appended whole: 0.16-0.27 s for 240,000-480,000 such rows in a Flink run), where the indexed ones cost nothing
      if (KeyIndex.refreshIfStale(LanceDataset.wrap(replaced), spec, config)) {
        replaced.checkoutLatest();
      }
      long t4b = System.nanoTime();
      beforeCommit.run();
      try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
        // no rows, in the base schema: the merge-insert only marks the generations merged
        Data.exportArrayStream(allocator, BatchesReader.none(ds.getSchema(), allocator), stream);
        MergeInsertResult result = LanceErrors.call("mark the merged generations", () -> replaced.mergeInsert(mark, stream));
        long t5 = System.nanoTime();
        // the mark writes no rows, so the key index refreshed before it is still current
        long version;
        try (Dataset after = result.dataset()) {
          version = after.version();
        }
        if (LOG.isDebugEnabled()) {
          LOG.debug("merge looking up {} keys in the base ({} parts and generations appended whole): {} base rows found in {} ms, "
              + "write the rows {} ms, delete {} ms, commit {} ms, key index {} ms, mark merged {} ms", keys.size(),
              appended.size(),
              doomed.values().stream().mapToInt(List::size).sum(),
              (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (t3 - t2) / 1_000_000, (t4 - t3) / 1_000_000,
              (t4b - t4) / 1_000_000, (t5 - t4b) / 1_000_000);
        }
        return version;
      }
    }
  }

  /** A merge-insert on the key that updates every matched row, inserts the others and marks {@code marked}. */
  private static MergeInsertParams markParams(SchemaSpec spec, List<Mark> marked) {
    List<MergedGeneration> generations = marked.stream().map(m -> new MergedGeneration(m.shardId(), m.generation()))
        .toList();
    return new MergeInsertParams(List.of(spec.key())).withMatchedUpdateAll()
        .withNotMatched(MergeInsertParams.WhenNotMatched.InsertAll).withConflictRetries(10)
        .markGenerationsAsMerged(generations);
  }

  /** The version after a merge's last commit, once the key index is refreshed if it went stale. */
  private static long refreshed(MergeInsertResult result, SchemaSpec spec, StoreConfig config) {
    try (Dataset merged = result.dataset()) {
      if (KeyIndex.refreshIfStale(LanceDataset.wrap(merged), spec, config)) {
        merged.checkoutLatest();
      }
      return merged.version();
    }
  }

  /**
   * Whether {@code part}'s one fragment can become a fragment of {@code base} as it is: one fragment, no
   * deletions, no data file in another base path, the same file format and the same Lance schema (field ids
   * included; parts are created from the same dataset schema, generations by lance-core from the base's).
   */
  public static boolean appendable(LanceDataset part, LanceDataset base) {
    Dataset p = part.lance();
    Dataset b = base.lance();
    List<Fragment> fragments = p.getFragments();
    if (fragments.size() != 1) {
      return false;
    }
    FragmentMetadata f = fragments.get(0).metadata();
    if (f.getDeletionFile() != null || f.getNumDeletions() > 0
        || f.getFiles().stream().anyMatch(d -> d.getBaseId().isPresent())) {
      return false;
    }
    return p.getLanceFileFormatVersion().equals(b.getLanceFileFormatVersion())
        && sameFields(p.getLanceSchema().fields(), b.getLanceSchema().fields());
  }

  private static boolean sameFields(List<LanceField> a, List<LanceField> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      LanceField x = a.get(i);
      LanceField y = b.get(i);
      if (x.getId() != y.getId() || x.getParentId() != y.getParentId() || !x.getName().equals(y.getName())
          || x.isNullable() != y.isNullable() || !x.getType().equals(y.getType())
          || !x.getMetadata().equals(y.getMetadata()) || !sameFields(x.getChildren(), y.getChildren())) {
        return false;
      }
    }
    return true;
  }

  /**
   * The one fragment of an {@link #appendable} part or generation in directory {@code dir} (relative to the store
   * root), its data files placed in the base table's {@code data/} directory by {@link StoreFiles#copy} (a hard link
   * locally, a server-side copy on S3; the part or generation keeps its own until garbage collection removes it).
   * Id 0: the commit numbers new fragments.
   */
  public static LanceFragment appended(StoreFiles files, String dir, LanceDataset part) throws IOException {
    FragmentMetadata f = part.lance().getFragments().get(0).metadata();
    for (org.lance.fragment.DataFile d : f.getFiles()) {
      files.copy(dir + "/" + DATA_DIR + d.getPath(), DATA_DIR + d.getPath());
    }
    return new LanceFragment(new FragmentMetadata(0, f.getFiles(), f.getPhysicalRows(), null, null));
  }
}
