package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.BlobMaterializer;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.MergeCommits;
import io.lancecontext.core.internal.lance.MergedWatermarks;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.txn.PublishedPart;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.KeyIndexType;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
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
 * not fit is taken as a prefix in write-sequence order ({@link #sequencePrefix}, at least one input) when
 * nothing was taken before it, and the rest is left for the next merge. A prefix, not any subset: the
 * fresh tier wins over the base, so a key merged from one input while an older row of it stayed unmerged in
 * another would read as the older row.
 *
 * <p>Safe while writers keep writing; callers hold the {@link MaintenanceLock}, so the watermark read here
 * cannot be stale.
 */
final class Merger {
  private static final Logger LOG = LoggerFactory.getLogger(Merger.class);

  private Merger() {}

  /** A generation, or a published transaction part ({@code sequence} >= 0: every row reads as it). */
  private record Input(String shardId, long generation, String path, LanceDataset dataset, long sequence) {
    Input(String shardId, long generation, String path, LanceDataset dataset) {
      this(shardId, generation, path, dataset, -1);
    }
  }

  /** A generation ({@code sequence} -1) or a published part (its publish sequence) a merge may take. */
  private record Candidate(String shardId, long generation, String path, long bytes, long sequence) {}

  /**
   * The inputs of one bucket a merge under {@code maxBytes} and {@code maxInputs} takes when the whole
   * bucket does not fit: a prefix in write-sequence order, at least one input, closed so that every input
   * left behind holds only rows newer than every row taken (the fresh tier wins over the base, so an older
   * row of a key must never stay unmerged above a newer one merged), which also keeps each lane's merged
   * generations a prefix of its generations and a transaction's parts of one bucket together.
   */
  private static List<Candidate> sequencePrefix(StoreConfig config, BufferAllocator allocator,
      List<Candidate> candidates, long maxBytes, int maxInputs) throws IOException {
    record Ranged(Candidate c, long min, long max) {}
    List<Ranged> ranged = new ArrayList<>();
    for (Candidate c : candidates) {
      if (c.sequence() >= 0) {
        ranged.add(new Ranged(c, c.sequence(), c.sequence()));
      } else {
        long[] range = sequenceRange(config, allocator, c);
        ranged.add(new Ranged(c, range[0], range[1]));
      }
    }
    ranged.sort(java.util.Comparator.comparingLong(Ranged::min).thenComparingLong(Ranged::max)
        .thenComparing(r -> r.c().shardId()).thenComparingLong(r -> r.c().generation()));
    List<Ranged> taken = new ArrayList<>();
    long bytes = 0;
    int i = 0;
    for (; i < ranged.size(); i++) {
      Ranged r = ranged.get(i);
      if (!taken.isEmpty() && (bytes + r.c().bytes() > maxBytes || taken.size() >= maxInputs)) {
        break;
      }
      taken.add(r);
      bytes += r.c().bytes();
    }
    List<Ranged> left = new ArrayList<>(ranged.subList(i, ranged.size()));
    boolean grew = true;
    while (grew) {
      grew = false;
      long highest = taken.stream().mapToLong(Ranged::max).max().orElse(Long.MIN_VALUE);
      Map<String, Long> laneTop = new HashMap<>();
      for (Ranged r : taken) {
        if (r.c().sequence() < 0) {
          laneTop.merge(r.c().shardId(), r.c().generation(), Math::max);
        }
      }
      for (var it = left.iterator(); it.hasNext(); ) {
        Ranged r = it.next();
        Long top = r.c().sequence() < 0 ? laneTop.get(r.c().shardId()) : null;
        if (r.min() <= highest || (top != null && r.c().generation() < top)) {
          taken.add(r);
          it.remove();
          grew = true;
        }
      }
    }
    return taken.stream().map(Ranged::c).toList();
  }

  /** The lowest and highest write sequence of a generation's rows (a missing stamp reads as 0). */
  private static long[] sequenceRange(StoreConfig config, BufferAllocator allocator, Candidate c) {
    String uri = config.uri() + "/" + ShardLayout.generationDir(c.shardId(), c.path());
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    try (LanceDataset ds = StoreDatasets.open(uri, config, allocator);
        ScanHandle scan = ds.scan(ScanRequest.of(List.of(SystemColumns.SEQUENCE)))) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        BigIntVector seq = (BigIntVector) reader.getVectorSchemaRoot().getVector(SystemColumns.SEQUENCE);
        for (int r = 0; r < seq.getValueCount(); r++) {
          long q = seq.isNull(r) ? 0L : seq.get(r);
          min = Math.min(min, q);
          max = Math.max(max, q);
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("read the write sequences of generation " + c.path(), e);
    }
    return min == Long.MAX_VALUE ? new long[] {0, 0} : new long[] {min, max};
  }

  static MergeResult merge(StoreConfig config, SchemaSpec spec, int shards, StoreFiles files, BufferAllocator allocator,
      MaintenanceLock lease) throws IOException {
    return merge(config, spec, shards, files, allocator, lease, null);
  }

  /**
   * As {@link #merge(StoreConfig, SchemaSpec, int, StoreFiles, BufferAllocator, MaintenanceLock)}, folding in
   * the published, unmerged parts of {@code transactions} with their bucket's generations: their rows read
   * as their publish sequence (and are stored with it), and the bucket's transaction watermark (the merged
   * watermark of its transaction shard, {@link TxnIds#txnShardId}) moves to the highest merged publish
   * sequence in the same commit. A bucket whose WAL tail holds a row stamped below a part's publish
   * sequence is left for a later merge: merging the part first would leave an older row of a key in the
   * fresh tier above a newer one in the base.
   */
  static MergeResult merge(StoreConfig config, SchemaSpec spec, int shards, StoreFiles files, BufferAllocator allocator,
      MaintenanceLock lease, Transactions transactions) throws IOException {
    // listed before the shard manifests are read: a part's publish sequence is above every row acknowledged
    // before its publish, and those rows are in the manifests' generations or tails read below
    Map<Integer, List<PublishedPart>> published = transactions == null ? Map.of() : transactions.publishedParts();
    long started = System.nanoTime();
    long maxBytes = config.get(StoreOptions.MERGE_MAX_BYTES);
    int maxInputs = config.get(StoreOptions.MERGE_MAX_INPUTS);
    List<Input> inputs = new ArrayList<>();
    try (LanceDataset base = StoreDatasets.open(config.uri(), config, allocator)) {
      Map<String, Long> watermarks = MergedWatermarks.read(base);
      Map<String, Integer> perShard = new LinkedHashMap<>();
      long bytes = 0;
      int remaining = 0;
      boolean full = false;
      // the first bucket turns with the base version, so that one bucket with more than a merge's bounds
      // of unmerged data does not hold the others back
      int first = (int) Math.floorMod(base.version(), (long) shards);
      for (int k = 0; k < shards; k++) {
        int bucket = (first + k) % shards;
        List<Candidate> candidates = new ArrayList<>();
        long txnWatermark = watermarks.getOrDefault(TxnIds.txnShardId(bucket), 0L);
        List<PublishedPart> parts = published.getOrDefault(bucket, List.of()).stream()
            .filter(p -> p.sequence() > txnWatermark).toList();
        long lowestTail = Long.MAX_VALUE;
        for (String shardId : ShardIds.forBucket(bucket)) {
          long w = watermarks.getOrDefault(shardId, 0L);
          ShardManifest manifest = ShardManifests.latest(files, shardId);
          for (ShardManifest.FlushedGeneration g : manifest.flushed()) {
            if (g.generation() > w) {
              candidates.add(new Candidate(shardId, g.generation(), g.path(),
                  files.totalBytes(ShardLayout.generationDir(shardId, g.path())), -1));
            }
          }
          if (!parts.isEmpty()) {
            lowestTail = Math.min(lowestTail, lowestTailSequence(files, shardId, manifest.replayAfter(), allocator));
          }
        }
        String txnShard = TxnIds.txnShardId(bucket);
        for (PublishedPart p : parts) {
          candidates.add(new Candidate(txnShard, p.sequence(), p.path(), files.totalBytes(p.path()), p.sequence()));
        }
        if (candidates.isEmpty()) {
          continue;
        }
        if (full) {
          remaining += candidates.size();
          continue;
        }
        long bucketBytes = candidates.stream().mapToLong(Candidate::bytes).sum();
        List<Candidate> taken = candidates;
        if (bytes + bucketBytes > maxBytes || inputs.size() + candidates.size() > maxInputs) {
          if (!inputs.isEmpty()) {
            remaining += candidates.size();
            continue;
          }
          taken = sequencePrefix(config, allocator, candidates, maxBytes, maxInputs);
          full = true;
        }
        long highestPart = taken.stream().mapToLong(Candidate::sequence).max().orElse(-1);
        if (highestPart >= 0 && lowestTail < highestPart) {
          remaining += candidates.size();  // sealed later (age, idle, flush), then merged
          continue;
        }
        remaining += candidates.size() - taken.size();
        java.util.Set<Candidate> chosen = new java.util.HashSet<>(taken);
        List<Candidate> ordered = new ArrayList<>(candidates.stream().filter(chosen::contains).toList());
        ordered.sort(java.util.Comparator.comparing((Candidate c) -> c.sequence() >= 0)
            .thenComparing(c -> c.sequence() >= 0 ? "" : c.shardId())
            .thenComparingLong(c -> c.sequence() >= 0 ? 0 : c.generation()));  // stable: parts keep their order
        for (Candidate c : ordered) {
          bytes += c.bytes();
          if (c.sequence() >= 0) {
            continue;
          }
          String uri = config.uri() + "/" + ShardLayout.generationDir(c.shardId(), c.path());
          inputs.add(new Input(c.shardId(), c.generation(), c.path(), StoreDatasets.open(uri, config, allocator)));
          perShard.merge(c.shardId(), 1, Integer::sum);
        }
        for (Candidate c : ordered) {
          if (c.sequence() >= 0) {
            inputs.add(new Input(c.shardId(), c.sequence(), c.path(),
                StoreDatasets.open(config.uri() + "/" + c.path(), config, allocator), c.sequence()));
            perShard.merge(c.shardId(), 1, Integer::sum);
          }
        }
      }
      if (inputs.isEmpty()) {
        return MergeResult.skipped(remaining > 0 ? "the buckets with unmerged transactions wait for their WAL tails "
            + "to be sealed" : "no unmerged generations", base.version());
      }
      Newest newest = newestRows(spec, inputs);
      Map<String, Long> winners = newest.winners();
      List<MergeCommits.Mark> marked = new ArrayList<>();
      Map<String, Long> txnMarks = new LinkedHashMap<>();
      for (Input in : inputs) {
        if (in.sequence() >= 0) {
          txnMarks.merge(in.shardId(), in.sequence(), Math::max);
        } else {
          marked.add(new MergeCommits.Mark(in.shardId(), in.generation()));
        }
      }
      txnMarks.forEach((shard, seq) -> marked.add(new MergeCommits.Mark(shard, seq)));
      MergeSource source = new MergeSource(spec, base.schema(), inputs, winners, allocator);
      long version;
      long tombstones = 0;
      // deletions on a store without tombstones delete base rows by key, which only the two-commit path does
      boolean deletes = !spec.has(Capability.TOMBSTONES)
          && java.util.Arrays.stream(newest.tombstones()).anyMatch(t -> t > 0);
      if (deletes || config.get(StoreOptions.INDEX_KEY) != KeyIndexType.NONE
          && winners.keySet().stream().allMatch(LanceSql::passable)) {
        List<Integer> whole = wholeParts(base, inputs, newest, config.get(StoreOptions.MERGE_APPEND_MIN_ROWS));
        source.skip(whole);
        for (int i : whole) {
          tombstones += newest.tombstones()[i];
        }
        version = MergeCommits.replaceAndMark(config, spec, base, source.hasInputs() ? source : null,
            winners.keySet(), marked, appendedFragments(files, inputs, whole), allocator, lease::ensureHeld);
      } else {
        version = MergeCommits.mergeInsert(config, spec, base, source, marked, inputs.size(), allocator,
            lease::ensureHeld);
      }
      return new MergeResult(true, "merged", perShard, winners.size(), source.tombstones + tombstones, version,
          (System.nanoTime() - started) / 1_000_000, remaining);
    } finally {
      inputs.forEach(i -> i.dataset().close());
    }
  }

  /**
   * The published parts among {@code inputs} of at least {@code minRows} rows ({@code merge.append-min-rows})
   * whose every row wins the merge (no newer row of any of their keys in another input; a part holds one row
   * per key) and whose one data file the base table can take as it is: same Lance schema (field ids
   * included) and file format, no deletions ({@link MergeCommits#appendable}). Their rows reach the base as
   * their own fragments (see {@link #appendedFragments}) instead of being read and written again: a Spark job's or a Flink
   * checkpoint's transaction costs a merge its key look-up and its commits, not a rewrite. Smaller parts are
   * rewritten with the other rows, so that small transactions do not leave a fragment each. The appended
   * rows keep the stamps they were staged with (none); the bucket's merged publish sequence (the transaction
   * watermark) is what writers seed above (StoreWrites.maxBaseSequence).
   */
  private static List<Integer> wholeParts(LanceDataset base, List<Input> inputs, Newest newest, int minRows) {
    long[] wins = new long[inputs.size()];
    for (long w : newest.winners().values()) {
      wins[(int) (w >>> 32)]++;
    }
    List<Integer> whole = new ArrayList<>();
    for (int i = 0; i < inputs.size(); i++) {
      if (inputs.get(i).sequence() >= 0 && wins[i] == newest.rows()[i] && wins[i] >= minRows
          && MergeCommits.appendable(inputs.get(i).dataset(), base)) {
        whole.add(i);
      }
    }
    return whole;
  }

  /**
   * The fragments of the {@code whole} parts, their data files placed in the base table's data directory
   * ({@link MergeCommits#appended}).
   */
  private static List<LanceFragment> appendedFragments(StoreFiles files, List<Input> inputs, List<Integer> whole)
      throws IOException {
    List<LanceFragment> out = new ArrayList<>();
    for (int i : whole) {
      Input in = inputs.get(i);
      out.add(MergeCommits.appended(files, in.path(), in.dataset()));
    }
    return out;
  }

  /** Sets every row's write sequence to {@code sequence} (a transaction part's publish sequence), unless -1. */
  private static VectorSchemaRoot stamped(VectorSchemaRoot rows, long sequence) {
    if (sequence >= 0) {
      BigIntVector seq = (BigIntVector) rows.getVector(SystemColumns.SEQUENCE);
      for (int i = 0; i < rows.getRowCount(); i++) {
        seq.setSafe(i, sequence);
      }
      seq.setValueCount(rows.getRowCount());
    }
    return rows;
  }

  /**
   * The lowest write sequence of a row in a shard's WAL entries above {@code replayAfter} (its unsealed
   * tail); {@code Long.MAX_VALUE} if there is none. An incomplete entry was never acknowledged and counts
   * for nothing.
   */
  private static long lowestTailSequence(StoreFiles files, String shardId, long replayAfter, BufferAllocator allocator)
      throws IOException {
    long lowest = Long.MAX_VALUE;
    for (long p : WalEntry.positions(files, shardId)) {
      if (p <= replayAfter) {
        continue;
      }
      try (WalEntry e = WalEntry.read(files, shardId, p, allocator)) {
        for (VectorSchemaRoot b : e.batches()) {
          BigIntVector seq = (BigIntVector) b.getVector(SystemColumns.SEQUENCE);
          for (int i = 0; seq != null && i < b.getRowCount(); i++) {
            if (!seq.isNull(i)) {
              lowest = Math.min(lowest, seq.get(i));
            }
          }
        }
      } catch (WalEntry.Incomplete | io.lancecontext.core.internal.io.StoreFiles.NotFound e) {
        // never acknowledged, or sealed and collected since the listing
      }
    }
    return lowest;
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

  /**
   * key → (input index << 32 | row offset) of its newest row: the highest write sequence (the two lanes
   * of a bucket interleave in time); within one generation, the first row of a key (lance-core writes a
   * memtable out newest-first; lancecontext never writes a key twice into one generation).
   */
  private static Newest newestRows(SchemaSpec spec, List<Input> inputs) throws IOException {
    Map<String, Long> winners = new HashMap<>();
    Map<String, Long> sequences = new HashMap<>();
    long[] rows = new long[inputs.size()];
    long[] tombstones = new long[inputs.size()];
    for (int i = 0; i < inputs.size(); i++) {
      boolean tombs = hasTombstones(inputs.get(i).dataset());
      Map<String, Long> local = new HashMap<>();
      Map<String, Long> localSeq = new HashMap<>();
      List<String> columns = tombs ? List.of(spec.key(), SystemColumns.SEQUENCE, SystemColumns.TOMBSTONE)
          : List.of(spec.key(), SystemColumns.SEQUENCE);
      try (ScanHandle scan = inputs.get(i).dataset().scan(ScanRequest.of(columns))) {
        ArrowReader reader = scan.reader();
        long offset = 0;
        while (reader.loadNextBatch()) {
          VectorSchemaRoot b = reader.getVectorSchemaRoot();
          VarCharVector key = (VarCharVector) b.getVector(spec.key());
          BigIntVector seq = (BigIntVector) b.getVector(SystemColumns.SEQUENCE);
          BitVector tomb = tombs ? (BitVector) b.getVector(SystemColumns.TOMBSTONE) : null;
          for (int r = 0; r < key.getValueCount(); r++, offset++) {
            String k = new String(key.get(r), StandardCharsets.UTF_8);
            if (local.putIfAbsent(k, ((long) i << 32) | offset) == null) {
              long fixed = inputs.get(i).sequence();
              localSeq.put(k, fixed >= 0 ? fixed : seq.isNull(r) ? 0L : seq.get(r));
              if (tomb != null && !tomb.isNull(r) && tomb.get(r) != 0) {
                tombstones[i]++;
              }
            }
          }
          rows[i] += key.getValueCount();
        }
      } catch (Exception e) {
        throw LanceErrors.translate("read generation " + inputs.get(i).path(), e);
      }
      for (Map.Entry<String, Long> e : local.entrySet()) {
        long q = localSeq.get(e.getKey());
        Long best = sequences.get(e.getKey());
        if (best == null || q >= best) {
          winners.put(e.getKey(), e.getValue());
          sequences.put(e.getKey(), q);
        }
      }
    }
    return new Newest(winners, rows, tombstones);
  }

  /**
   * Whether a generation or part has the tombstone column: every one of a store with capability
   * {@code tombstones}, and the deletion parts of a replace on any store ({@code internal.write.DeletionParts}).
   */
  private static boolean hasTombstones(LanceDataset input) {
    return input.hasColumn(SystemColumns.TOMBSTONE);
  }

  /**
   * What {@link #newestRows} found: key → (input index << 32 | row offset) of its newest row, and per input
   * its rows and its tombstones (a key's first row in the input counted).
   */
  private record Newest(Map<String, Long> winners, long[] rows, long[] tombstones) {}

  /** Streams the winning rows of every input, in input order, in the dataset schema (blobs as bytes). */
  private static final class MergeSource extends ArrowReader {
    private final SchemaSpec spec;
    private final Schema schema;
    private final List<Input> inputs;
    private final Map<String, Long> winners;
    private final BufferAllocator allocator;
    private final List<String> columns;
    private int input = -1;
    private ScanHandle scan;
    private java.util.Set<Integer> skipped = java.util.Set.of();
    /** Whether the base keeps tombstone rows (capability tombstones); else they are left out of the rows written. */
    private final boolean keepTombstones;
    /** Whether the current input has the tombstone column. */
    private boolean flagged;
    long tombstones;

    MergeSource(SchemaSpec spec, Schema schema, List<Input> inputs, Map<String, Long> winners, BufferAllocator allocator) {
      super(allocator);
      this.spec = spec;
      this.schema = schema;
      this.inputs = inputs;
      this.winners = winners;
      this.allocator = allocator;
      this.columns = schema.getFields().stream().map(f -> f.getName()).toList();
      this.keepTombstones = spec.has(Capability.TOMBSTONES);
    }

    /** Leaves these inputs out (their rows reach the base another way). Before the first batch. */
    void skip(List<Integer> inputIndexes) {
      skipped = java.util.Set.copyOf(inputIndexes);
    }

    /** Whether any input is left to read. */
    boolean hasInputs() {
      return skipped.size() < inputs.size();
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      try {
        while (true) {
          if (scan == null) {
            do {
              if (++input >= inputs.size()) {
                return false;
              }
            } while (skipped.contains(input));
            flagged = hasTombstones(inputs.get(input).dataset());
            List<String> read = columns;
            if (flagged && !columns.contains(SystemColumns.TOMBSTONE)) {
              read = new ArrayList<>(columns);
              read.add(SystemColumns.TOMBSTONE);
            }
            scan = inputs.get(input).dataset().scan(ScanRequest.of(read).withRowId(true));
          }
          if (!scan.reader().loadNextBatch()) {
            closeInput();
            continue;
          }
          VectorSchemaRoot in = scan.reader().getVectorSchemaRoot();
          VarCharVector key = (VarCharVector) in.getVector(spec.key());
          var rowIds = in.getVector(RowIds.ROW_ID);
          BitVector tomb = flagged ? (BitVector) in.getVector(SystemColumns.TOMBSTONE) : null;
          int[] rows = new int[in.getRowCount()];
          int count = 0;
          for (int r = 0; r < in.getRowCount(); r++) {
            long offset = RowIds.get(rowIds, r);
            Long w = winners.get(new String(key.get(r), StandardCharsets.UTF_8));
            if (w != null && w == (((long) input << 32) | offset)) {
              if (tomb != null && !tomb.isNull(r) && tomb.get(r) != 0) {
                tombstones++;
                if (!keepTombstones) {
                  continue;  // a base without the tombstone column loses the key's row (deleted by key) instead
                }
              }
              rows[count++] = r;
            }
          }
          if (count == 0) {
            continue;
          }
          List<String> withIds = new ArrayList<>(columns);
          withIds.add(RowIds.ROW_ID);
          LanceDataset ds = inputs.get(input).dataset();
          try (VectorSchemaRoot picked = stamped(RowCopier.copy(in, withIds, rows, count, allocator),
              inputs.get(input).sequence());
              VectorSchemaRoot out = BlobMaterializer.materialize(ds, spec, picked, columns, allocator);
              ArrowRecordBatch batch = new VectorUnloader(out).getRecordBatch()) {
            loadRecordBatch(batch);
          }
          return true;
        }
      } catch (IOException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException(e);
      }
    }

    private void closeInput() {
      ScanHandle s = scan;
      scan = null;
      if (s != null) {
        s.close();
      }
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() throws IOException {
      closeInput();
    }

    @Override
    protected Schema readSchema() {
      return schema;
    }
  }
}
