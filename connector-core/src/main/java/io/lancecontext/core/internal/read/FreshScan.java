package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntUnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The fresh-tier part of a scan over the shard views a snapshot holds: every row that is the newest of
 * its key (across the lanes of its bucket), not a tombstone, not superseded, matching the filter. When the
 * filter names few keys, those are read by key instead (no scan of the fresh tier).
 */
final class FreshScan implements AutoCloseable {
  /**
   * Where the visible rows of each fresh batch go: {@link ScanOutput#emit} copies them into the scan's output; a
   * search ranks them where they are and returns null (nothing to hand out: the scan goes on).
   */
  @FunctionalInterface
  interface Emitter {
    /** The rows {@code rows[0..count)} of {@code in} are visible; returns an output batch or null. */
    VectorSchemaRoot emit(VectorSchemaRoot in, int[] rows, int count, LanceDataset blobSource, boolean transferable);
  }

  private final ScanRules rules;
  private final ScanOutput output;
  private final Emitter emitter;
  private final LsmSnapshot snapshot;
  private final BufferAllocator allocator;
  /** Keys the filter confines the read to (read by key), or null. */
  private final List<String> keysToRead;
  private int keyIndex;
  /** Keys read by key per round. */
  static final int KEYS_PER_READ = 1_024;
  /** Rows read by key and not yet emitted. */
  private final List<VectorSchemaRoot> byKey = new ArrayList<>();

  private Iterator<FreshShard> shardIt;
  private FreshShard shard;
  /** Whether a count-only read returned the fresh tier's count. */
  private boolean counted;
  private int sourceIndex = -1;
  private int batchIndex;
  private ScanHandle genScan;
  /** Whether generations' rows are read once and kept with them ({@link GenerationSource#kept}), for searches. */
  private final boolean keepGenerations;
  /** Whether the current generation was read from what it keeps. */
  private boolean generationDone;

  FreshScan(ScanRules rules, ScanOutput output, LsmSnapshot snapshot, BufferAllocator allocator) {
    this(rules, output, output::emit, snapshot, allocator, false);
  }

  /**
   * A scan that hands each batch's visible rows to {@code emitter} instead of the scan's output, reading the
   * scan's columns of each generation once and keeping them with it (a search repeats the same read of the same
   * generations: 4 generation scans were 20-29 ms of a search's 35 ms over 20,000 fresh rows).
   */
  FreshScan(ScanRules rules, LsmSnapshot snapshot, BufferAllocator allocator, Emitter emitter) {
    this(rules, null, emitter, snapshot, allocator, true);
  }

  private FreshScan(ScanRules rules, ScanOutput output, Emitter emitter, LsmSnapshot snapshot, BufferAllocator allocator,
      boolean keepGenerations) {
    this.keepGenerations = keepGenerations;
    this.rules = rules;
    this.output = output;
    this.emitter = emitter;
    this.snapshot = snapshot;
    this.allocator = allocator;
    Set<String> keys = Predicates.keysReadByKey(rules.spec, rules.filter);
    this.keysToRead = keys == null ? null : List.copyOf(keys);
  }

  /** The next non-null output batch (possibly empty), or null at the end. */
  VectorSchemaRoot next() {
    if (keysToRead != null) {
      return nextByKey();
    }
    if (rules.countOnly) {
      return counted ? null : countWinners();
    }
    try {
      while (true) {
        if (shard == null) {
          if (shardIt == null) {
            // every row's winner is looked up: one map of the whole fresh tier's winners costs a pass over its
            // keys, where a look-up per row across every shard's segments cost several (most of a search's time)
            snapshot.winners();
            shardIt = snapshot.shards().values().iterator();
          }
          if (!shardIt.hasNext()) {
            return null;
          }
          shard = shardIt.next();
          // a scan resolves the winner of every row of the shard: one map of its newest rows makes that one
          // look-up per shard instead of one per source of each (a shard of 18 sources: 18 look-ups per row, most
          // of a full scan's Java time on a store of a million fresh keys)
          shard.newest();
          sourceIndex = -1;
        }
        if (sourceIndex >= 0 && sourceIndex < shard.sources().size()) {
          VectorSchemaRoot out = nextFromSource(shard.sources().get(sourceIndex));
          if (out != null) {
            return out;
          }
        }
        closeGeneration();
        sourceIndex++;
        batchIndex = 0;
        generationDone = false;
        if (sourceIndex >= shard.sources().size()) {
          shard = null;
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("scan the fresh tier", e);
    }
  }

  /**
   * The fresh rows of the keys the filter names, looked up by key: {@value #KEYS_PER_READ} keys at a time, each
   * source's rows of them read in one call.
   */
  private VectorSchemaRoot nextByKey() {
    try {
      while (true) {
        while (!byKey.isEmpty()) {
          try (VectorSchemaRoot rows = byKey.remove(0)) {
            int[] all = new int[rows.getRowCount()];
            for (int r = 0; r < all.length; r++) {
              all[r] = r;
            }
            VectorSchemaRoot out = emitter.emit(rows, all, all.length, null, true);
            if (out != null) {
              return out;
            }
          }
        }
        if (keyIndex >= keysToRead.size()) {
          return null;
        }
        List<LsmSnapshot.Winner> winners = new ArrayList<>();
        for (int end = Math.min(keysToRead.size(), keyIndex + KEYS_PER_READ); keyIndex < end; keyIndex++) {
          String k = keysToRead.get(keyIndex);
          LsmSnapshot.Winner win = snapshot.winner(k);
          if (win != null && !win.ref().tombstone() && !rules.superseded.contains(k)) {
            winners.add(win);
          }
        }
        byKey.addAll(PointLookup.fresh(rules.spec, winners, rules.columns, rules.freshFilter, allocator));
      }
    } catch (Exception e) {
      throw LanceErrors.translate("read the fresh tier by key", e);
    }
  }

  private VectorSchemaRoot nextFromSource(FreshSource source) throws Exception {
    if (source instanceof WalSource w) {
      List<VectorSchemaRoot> batches = w.entry().batches();
      while (batchIndex < batches.size()) {
        int b = batchIndex++;
        VectorSchemaRoot in = batches.get(b);
        int[] rows = new int[in.getRowCount()];
        VarCharVector key = FreshShard.keyVector(in);
        int count = selectVisible(in, r -> new String(key.get(r), StandardCharsets.UTF_8), b, r -> r, rows);
        VectorSchemaRoot out = emitter.emit(in, rows, count, null, false);
        if (out != null) {
          return out;
        }
      }
      return null;
    }
    GenerationSource g = (GenerationSource) source;
    if (keepGenerations && genScan == null) {
      if (generationDone) {
        return null;  // read from what the generation keeps
      }
      generationDone = true;
      VectorSchemaRoot kept = g.kept(generationColumns(), allocator);
      if (kept != null) {
        return select(g, kept, false);  // the kept batch is shared: copied from, never moved
      }
      // not kept (over the JVM's bound): scanned below, as without keeping
    }
    if (genScan == null) {
      genScan = g.dataset().scan(ScanRequest.of(generationColumns()).withRowId(true));
    }
    while (genScan.reader().loadNextBatch()) {
      VectorSchemaRoot out = select(g, genScan.reader().getVectorSchemaRoot(), true);
      if (out != null) {
        return out;
      }
    }
    return null;
  }

  /** What a generation is read for: the output columns, the key and the filter's columns. */
  private List<String> generationColumns() {
    Set<String> cols = new LinkedHashSet<>(rules.columns);
    cols.add(rules.spec.key());
    cols.addAll(Predicates.topLevelColumns(rules.freshFilter));
    return new ArrayList<>(cols);
  }

  /** Hands the visible rows of a batch of generation {@code g} (with row ids) to the emitter. */
  private VectorSchemaRoot select(GenerationSource g, VectorSchemaRoot in, boolean transferable) {
    var rowIds = in.getVector(RowIds.ROW_ID);
    int[] rows = new int[in.getRowCount()];
    // a generation is one batch; a row's place in it is its row id's offset, and its key the one loaded
    // for that offset (no decoding, its hash already computed)
    String[] keys = g.keys();
    IntUnaryOperator offset = r -> (int) RowIds.get(rowIds, r);
    int count = selectVisible(in, r -> keys[offset.applyAsInt(r)], 0, offset, rows);
    return emitter.emit(in, rows, count, g.dataset(), transferable);
  }

  /**
   * The fresh tier's count: its keys whose newest row (across the snapshot's views: {@link
   * LsmSnapshot#liveFreshCount}) is not a tombstone. No row is read.
   */
  private VectorSchemaRoot countWinners() {
    counted = true;
    return output.emitCount((int) snapshot.liveFreshCount());
  }

  /**
   * Selects into {@code rows} the rows of a fresh batch that are the LSM winners of their keys (the row at
   * {@code rowInSource.applyAsInt(r)} of {@code batch} in the current source of the current shard), not
   * tombstones, not superseded, matching the filter; returns how many.
   */
  private int selectVisible(VectorSchemaRoot in, java.util.function.IntFunction<String> keyOf, int batch,
      IntUnaryOperator rowInSource, int[] rows) {
    java.util.BitSet live = snapshot.liveWinners(shard, sourceIndex, batch);
    if (live == null) {
      return 0;  // every row of the batch is older than its key's newest row, or a tombstone
    }
    PredicateEvaluator eval = new PredicateEvaluator(rules.freshFilter, in);
    boolean superseding = !rules.superseded.isEmpty();
    int count = 0;
    for (int r = 0; r < in.getRowCount(); r++) {
      if (live.get(rowInSource.applyAsInt(r)) && !(superseding && rules.superseded.contains(keyOf.apply(r)))
          && eval.matches(r)) {
        rows[count++] = r;
      }
    }
    return count;
  }

  private void closeGeneration() {
    ScanHandle s = genScan;
    genScan = null;
    if (s != null) {
      s.close();
    }
  }

  @Override
  public void close() {
    closeGeneration();
    byKey.forEach(VectorSchemaRoot::close);
    byKey.clear();
  }
}
