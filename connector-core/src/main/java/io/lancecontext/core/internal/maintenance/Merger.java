package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.MergeCommits;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.txn.PublishedPart;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.options.KeyIndexType;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Folds flushed generations into the base table: the generations above each shard's merged watermark,
 * deduplicated across all of them (the newest row of each key wins). With the key index, in two commits
 * whose cost follows the rows merged ({@link MergeCommits#replaceAndMark}): the merged keys' base rows are
 * deleted and the winning rows added in one commit, then the generations are marked merged; otherwise in one
 * merge-insert on the key that also marks them ({@link MergeCommits#mergeInsert}). A tombstone replaces its key's row
 * (reads hide base rows that are tombstones), so no reader ever sees a deleted key again; tombstone rows
 * are removed from the base later ({@link #purgeTombstones}), which hides nothing more. On a store without
 * capability {@code tombstones} the only tombstones are those of a replace's deletion parts: their keys' base
 * rows are deleted and no row is written for them, so its base never holds one.
 *
 * <p>Cost: the inputs are read twice (keys and write sequences, then the winning rows, streamed into
 * lance-core's merge-insert); memory holds one entry per merged key. {@code merge.max-bytes} and
 * {@code merge.max-inputs} bound one merge (lance-core 7.0.0's merge-insert fails with "Resources exhausted
 * ... HashJoinInput" above about 100 MB of input): whole buckets (both lanes and their transaction parts) are
 * taken while they fit, in bucket order from a bucket that turns with the base version; a bucket that does
 * not fit is taken as a prefix in write-sequence order (at least one input, {@link MergeSelection}) when
 * nothing was taken before it, and the rest is left for the next merge. A prefix, not any subset: the
 * fresh tier wins over the base, so a key merged from one input while an older row of it stayed unmerged in
 * another would read as the older row.
 *
 * <p>What a merge takes is chosen by {@link MergeSelection}, its keys deduplicated by {@link NewestRows}, and
 * the winning rows streamed by {@link MergeSource}; this class commits them.
 *
 * <p>Safe while writers keep writing; callers hold the {@link MaintenanceLock}, so the watermark read here
 * cannot be stale.
 */
final class Merger {
  private static final Logger LOG = LoggerFactory.getLogger(Merger.class);

  private Merger() {}

  /**
   * Merges the generations above the watermarks, folding in the published, unmerged parts of
   * {@code transactions} (null for none) with their bucket's generations: their rows read
   * as their publish sequence (and are stored with it), and the bucket's transaction watermark (the merged
   * watermark of its transaction shard, {@link TxnIds#txnShardId}) moves to the highest merged publish
   * sequence in the same commit. A bucket whose WAL tail holds a row stamped below a part's publish
   * sequence is left for a later merge: merging the part first would leave an older row of a key in the
   * fresh tier above a newer one in the base. Only the keys {@code baseKeys} says the base may hold are looked
   * up in the base.
   */
  static MergeResult merge(StoreConfig config, SchemaSpec spec, int shards, StoreFiles files, BufferAllocator allocator,
      MaintenanceLock lease, Transactions transactions, BaseKeys baseKeys) throws IOException {
    // listed before the shard manifests are read: a part's publish sequence is above every row acknowledged
    // before its publish, and those rows are in the manifests' generations or tails read below
    Map<Integer, List<PublishedPart>> published = transactions == null ? Map.of() : transactions.publishedParts();
    // then the publishes in flight: their buckets wait, so that no watermark passes a record written after the
    // listing above (PublishIntents)
    Set<Integer> busy = transactions == null ? Set.of() : transactions.publishing(published);
    long started = System.nanoTime();
    long maxBytes = config.get(StoreOptions.MERGE_MAX_BYTES);
    int maxInputs = config.get(StoreOptions.MERGE_MAX_INPUTS);
    List<MergeInput> inputs = new ArrayList<>();
    try (LanceDataset base = StoreDatasets.open(config.uri(), config, allocator)) {
      MergeSelection.Chosen chosen = MergeSelection.choose(config, shards, files, allocator, base, published, busy,
          maxBytes, maxInputs, inputs);
      Map<String, Integer> perShard = chosen.perShard();
      int remaining = chosen.remaining();
      if (inputs.isEmpty()) {
        return MergeResult.skipped(remaining == 0 ? "no unmerged generations" : !busy.isEmpty()
            ? "transactions are being published into buckets " + busy + "; they are merged once their records exist"
            : "the buckets with unmerged transactions wait for their WAL tails to be sealed", base.version());
      }
      NewestRows newest = NewestRows.of(spec, inputs);
      List<MergeCommits.Mark> marked = new ArrayList<>();
      Map<String, Long> txnMarks = new LinkedHashMap<>();
      for (MergeInput in : inputs) {
        if (in.isPart()) {
          txnMarks.merge(in.shardId(), in.sequence(), Math::max);
        } else {
          marked.add(new MergeCommits.Mark(in.shardId(), in.generation()));
        }
      }
      txnMarks.forEach((shard, seq) -> marked.add(new MergeCommits.Mark(shard, seq)));
      MergeSource source = new MergeSource(spec, base.schema(), inputs, newest, allocator);
      long version;
      long tombstones = 0;
      // deletions on a store without tombstones delete base rows by key, which only the two-commit path does
      boolean deletes = !spec.has(Capability.TOMBSTONES)
          && java.util.Arrays.stream(newest.tombstones()).anyMatch(t -> t > 0);
      if (deletes || config.get(StoreOptions.INDEX_KEY) != KeyIndexType.NONE
          && newest.passable()) {
        List<Integer> whole = wholeInputs(base, inputs, newest, config.get(StoreOptions.MERGE_APPEND_MIN_ROWS));
        source.skip(whole);
        for (int i : whole) {
          tombstones += newest.tombstones()[i];
        }
        Set<String> inBase = baseKeys.mayHold(base, spec, newest.keys());
        version = MergeCommits.replaceAndMark(config, spec, base, source.hasInputs() ? source : null,
            inBase, newest.passable(), marked, appendedFragments(files, inputs, whole), allocator,
            lease::ensureHeld);
      } else {
        version = MergeCommits.mergeInsert(config, spec, base, source, marked, inputs.size(), allocator,
            lease::ensureHeld);
      }
      return new MergeResult(true, "merged", perShard, newest.keys().size(), source.tombstones + tombstones, version,
          (System.nanoTime() - started) / 1_000_000, remaining);
    } finally {
      inputs.forEach(i -> i.dataset().close());
    }
  }

  /**
   * The inputs among {@code inputs} of at least {@code minRows} rows ({@code merge.append-min-rows}) whose every row
   * wins the merge (no newer row of any of their keys in another input; a part or a generation holds one row per
   * key) and whose one data file the base table can take as it is: same Lance schema (field ids included) and file
   * format, no deletions ({@link MergeCommits#appendable}): published parts, and flushed generations without
   * tombstones. Their rows reach the base as their own fragments (see {@link #appendedFragments}) instead of being
   * read and written again: a Spark job's or a Flink checkpoint's transaction, or a generation of an at-least-once
   * stream, costs a merge its key look-up and its commits, not a rewrite. Smaller inputs are rewritten with the
   * other rows, so that small transactions and generations do not leave a fragment each. An appended part's rows
   * keep the stamps they were staged with (none), and the bucket's merged publish sequence (the transaction
   * watermark) is what writers seed above (StoreWrites.maxBaseSequence); a generation's rows keep their write
   * sequences, as a rewrite keeps them.
   */
  private static List<Integer> wholeInputs(LanceDataset base, List<MergeInput> inputs, NewestRows newest, int minRows) {
    long[] wins = newest.winsPerInput();
    List<Integer> whole = new ArrayList<>();
    for (int i = 0; i < inputs.size(); i++) {
      if ((inputs.get(i).isPart() || newest.tombstones()[i] == 0) && wins[i] == newest.rows()[i] && wins[i] >= minRows
          && MergeCommits.appendable(inputs.get(i).dataset(), base)) {
        whole.add(i);
      }
    }
    return whole;
  }

  /**
   * The fragments of the {@code whole} inputs, their data files placed in the base table's data directory
   * ({@link MergeCommits#appended}).
   */
  private static List<LanceFragment> appendedFragments(StoreFiles files, List<MergeInput> inputs, List<Integer> whole)
      throws IOException {
    List<LanceFragment> out = new ArrayList<>();
    for (int i : whole) {
      MergeInput in = inputs.get(i);
      out.add(MergeCommits.appended(files, in.dir(), in.dataset()));
    }
    return out;
  }

  /**
   * Removes tombstone rows from the base table (one delete commit; it scans the tombstone column of the
   * whole base). Reads already hide them, so this changes no lancecontext read; other Lance readers then
   * see only live rows.
   *
   * @return tombstone rows removed
   */
  static long purgeTombstones(StoreConfig config, SchemaSpec spec, BufferAllocator allocator, MaintenanceLock lease) {
    if (!spec.has(Capability.TOMBSTONES)) {
      return 0;
    }
    try (LanceDataset base = StoreDatasets.open(config.uri(), config, allocator)) {
      String filter = SystemColumns.TOMBSTONE + " = true";
      long n = LanceErrors.call("count tombstone rows", () -> base.countRows(filter));
      if (n > 0) {
        lease.ensureHeld();
        LanceErrors.run("delete tombstone rows", () -> base.delete(filter));
      }
      return n;
    }
  }
}
