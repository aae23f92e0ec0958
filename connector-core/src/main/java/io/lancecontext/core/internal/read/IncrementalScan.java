package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.StructNulls;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What changed between two snapshots ({@link ScanSpec#between}): every key whose newest row at {@code to} is
 * not the version it had at {@code from}, as it is at {@code to}, and, with capability {@code tombstones}, every
 * key visible at {@code from} and deleted (or gone) at {@code to}, as a row whose {@link ScanSpec#DELETED} column
 * is true.
 *
 * <p>Versions are compared by identity, never by a cut of write sequences (a whole-appended transaction part's
 * rows carry no sequence, and the two lanes of a bucket may be stamped by different processes): a row of
 * {@code to}'s fresh tier is unchanged when {@code from}'s fresh winner of its key has the same sequence (a
 * fresh row of {@code to} is above every watermark of {@code to}'s base, so it is in {@code from}'s base only as the
 * merged copy of a row {@code from} also held fresh: {@code from} was taken between a merge's two commits); a base
 * row of {@code to} is compared with {@link PriorVersions}. Base fragments both snapshots hold (same data file,
 * which Lance never rewrites) are not read on either side, whether or not rows of them were deleted in between: a
 * row live in both is the same live row, and a row deleted in between was replaced by a newer version (in
 * {@code to}'s fresh tier or in a fragment {@code to} added, both read) or by a tombstone merged into an added
 * fragment (whose key is looked up in {@code from}); rows move to other fragments only by compaction, which
 * replaces whole fragments. A key
 * {@code from} held fresh and {@code to} holds in its base only is in a fragment this scan reads, or, when
 * {@code from} was taken between a merge's two commits, in one both share (the merged copy of that same row): such a
 * key is looked up in {@code to}'s base before it is reported deleted.
 *
 * <p>Order: changed fresh rows by key, changed base rows in fragment order, then deleted keys in key order; every
 * read of the same interval returns the same rows in the same order (a restored Flink split skips what it emitted
 * by count). Offset and limit count all three. Owns
 * {@code from} (closed with the scan), not {@code to}. Not thread-safe.
 */
public final class IncrementalScan implements RowScan {
  /** Changed fresh rows read per round. */
  private static final int FRESH_PER_READ = 1_024;
  /** Deleted keys per output batch. */
  private static final int DELETED_PER_BATCH = 4_096;

  private final ScanRules rules;
  private final ScanOutput output;
  private final LsmSnapshot from;
  private final LsmSnapshot to;
  private final BufferAllocator allocator;
  private final boolean tombstones;
  private final List<String> columns;
  private final PriorVersions prior;
  private final Set<String> laterFresh;
  private final List<Integer> changedFragments;
  private final List<LsmSnapshot.Winner> changedFresh = new ArrayList<>();
  /** Keys {@code to}'s fresh tier deletes (reported if {@code from} showed them). */
  private final List<String> deletedInFresh = new ArrayList<>();
  /** Keys with a live row in the base fragments of {@code to} this scan read, of those {@code from} held elsewhere. */
  private final Set<String> laterBaseLive = new HashSet<>();
  /** Keys with a tombstone row in the base fragments of {@code to} this scan read. */
  private final Set<String> laterBaseDeleted = new HashSet<>();
  private final ArrayDeque<VectorSchemaRoot> pending = new ArrayDeque<>();
  private final long fragmentsRead;
  private int freshIndex;
  private ScanHandle baseScan;
  private boolean baseDone;
  private List<String> deleted;
  private int deletedIndex;
  private VectorSchemaRoot current;
  /** Whether the batches {@link #nextOutput} returns are deleted keys (they come last). */
  private boolean emittingDeleted;

  /**
   * @param from the earlier snapshot, every shard (owned: closed with the scan, or if this fails)
   * @param to the later snapshot, every shard
   * @param scan its {@code now} set (expiry is judged at {@code to})
   */
  public IncrementalScan(SchemaSpec spec, LsmSnapshot from, LsmSnapshot to, ScanSpec scan, BufferAllocator allocator) {
    this.from = from;
    this.to = to;
    this.allocator = allocator;
    try {
      this.rules = new ScanRules(spec, to, scan, allocator);
      this.output = new ScanOutput(rules, allocator, scan.offset());
      this.tombstones = spec.has(Capability.TOMBSTONES);
      List<String> cols = new ArrayList<>(rules.columns);
      if (tombstones) {
        cols.add(ScanSpec.DELETED);
      }
      this.columns = List.copyOf(cols);
      List<LanceFragment> earlier = from.base().dataset().fragments();
      List<LanceFragment> later = to.base().dataset().fragments();
      this.changedFragments = unshared(later, earlier);
      this.laterFresh = to.freshKeys();
      this.prior = PriorVersions.read(spec, from, laterFresh, unshared(earlier, later), allocator);
      this.fragmentsRead = prior.fragmentsRead + changedFragments.size();
      List<Map.Entry<String, LsmSnapshot.Winner>> changed = new ArrayList<>();
      for (Map.Entry<String, LsmSnapshot.Winner> e : to.winners().entrySet()) {
        FreshShard.RowRef ref = e.getValue().ref();
        if (ref.tombstone()) {
          deletedInFresh.add(e.getKey());
          continue;
        }
        LsmSnapshot.Winner before = prior.fresh.get(e.getKey());
        boolean same = before != null && !before.ref().tombstone() && before.ref().sequence() == ref.sequence();
        if (!same && !rules.superseded.contains(e.getKey())) {
          changed.add(e);
        }
      }
      changed.sort(Map.Entry.comparingByKey());  // the same rows in the same order on every read of this interval
      changed.forEach(e -> changedFresh.add(e.getValue()));
    } catch (Exception e) {
      from.close();
      throw LanceErrors.translate("read what changed between two snapshots", e);
    }
  }

  /** The ids of the fragments of {@code in} that {@code other} does not hold (by data file). */
  private static List<Integer> unshared(List<LanceFragment> in, List<LanceFragment> other) {
    Set<String> theirs = new HashSet<>();
    for (LanceFragment f : other) {
      theirs.add(f.dataFile());
    }
    return in.stream().filter(f -> !theirs.contains(f.dataFile())).map(LanceFragment::id).toList();
  }

  @Override
  public List<String> columns() {
    return columns;
  }

  /** Base fragments read, of both snapshots: none when the base did not change between them. */
  @Override
  public long baseFragmentsRead() {
    return fragmentsRead;
  }

  @Override
  public boolean next() {
    closeCurrent();
    try {
      while (!output.exhausted()) {
        VectorSchemaRoot out = nextOutput();
        if (out == null) {
          return false;
        }
        if (out.getRowCount() == 0) {
          out.close();
          continue;
        }
        current = tombstones ? DeletedKeys.flagged(out, emittingDeleted, allocator) : out;
        output.returned(out.getRowCount());
        return true;
      }
      return false;
    } catch (Exception e) {
      throw LanceErrors.translate("read what changed between two snapshots", e);
    }
  }

  /** The next output batch (possibly empty), or null at the end; {@link #emittingDeleted} once it holds deleted keys. */
  private VectorSchemaRoot nextOutput() throws Exception {
    while (true) {
      if (!pending.isEmpty()) {
        try (VectorSchemaRoot rows = pending.poll()) {
          VectorSchemaRoot out = output.emit(rows, identity(rows.getRowCount()), rows.getRowCount(), null, true);
          if (out != null) {
            return out;
          }
        }
        continue;
      }
      if (freshIndex < changedFresh.size()) {
        List<LsmSnapshot.Winner> round = changedFresh.subList(freshIndex,
            Math.min(changedFresh.size(), freshIndex + FRESH_PER_READ));
        freshIndex += round.size();
        pending.addAll(PointLookup.fresh(rules.spec, round, rules.columns, rules.freshFilter, allocator));
        continue;
      }
      if (!baseDone) {
        VectorSchemaRoot out = nextBase();
        if (out != null) {
          return out;
        }
        baseDone = true;
        closeBase();
        continue;
      }
      if (!tombstones) {
        return null;
      }
      if (deleted == null) {
        deleted = deletedKeys();
      }
      if (deletedIndex >= deleted.size()) {
        return null;
      }
      List<String> keys = deleted.subList(deletedIndex, Math.min(deleted.size(), deletedIndex + DELETED_PER_BATCH));
      deletedIndex += keys.size();
      try (VectorSchemaRoot rows = DeletedKeys.rows(rules.spec, rules.columns, keys, allocator)) {
        VectorSchemaRoot out = output.emit(rows, identity(keys.size()), keys.size(), null, true);
        if (out != null) {
          emittingDeleted = true;
          return out;
        }
      }
    }
  }

  /** The next batch of changed live rows of {@code to}'s base fragments that {@code from} does not share. */
  private VectorSchemaRoot nextBase() throws Exception {
    if (changedFragments.isEmpty()) {
      return null;
    }
    LanceDataset dataset = to.base().dataset();
    if (baseScan == null) {
      Set<String> cols = new LinkedHashSet<>(rules.columns);
      cols.add(rules.spec.key());
      if (prior.digests) {
        cols.addAll(PriorVersions.digestColumns(rules.spec));  // a wide read, needed only to compare such versions
      }
      cols.addAll(Predicates.topLevelColumns(rules.baseFilter));
      cols.add(SystemColumns.SEQUENCE);
      cols.remove(SystemColumns.TOMBSTONE);
      if (dataset.hasColumn(SystemColumns.TOMBSTONE)) {
        cols.add(SystemColumns.TOMBSTONE);
      }
      baseScan = dataset.scan(ScanRequest.of(new ArrayList<>(cols)).fragments(changedFragments)
          .withRowAddress(true).withRowId(rules.hasBlobs()));
    }
    while (baseScan.reader().loadNextBatch()) {
      VectorSchemaRoot in = baseScan.reader().getVectorSchemaRoot();
      StructNulls.repair(rules.spec, dataset, in);
      VarCharVector key = (VarCharVector) in.getVector(rules.spec.key());
      BigIntVector seq = (BigIntVector) in.getVector(SystemColumns.SEQUENCE);
      FieldVector tomb = in.getVector(SystemColumns.TOMBSTONE);
      FieldVector address = in.getVector(RowIds.ROW_ADDRESS);
      RowDigest digest = prior.digests ? new RowDigest(in, PriorVersions.digestColumns(rules.spec)) : null;
      PredicateEvaluator eval = new PredicateEvaluator(rules.baseFilter, in);
      int[] rows = new int[in.getRowCount()];
      int count = 0;
      // a live row's key is decoded only where a set or an earlier version may know it (often none does: the
      // earlier snapshot's fresh tier was empty, the later one's too, nothing superseded)
      boolean byKey = !laterFresh.isEmpty() || !rules.superseded.isEmpty() || prior.knowsBaseKeys();
      for (int r = 0; r < in.getRowCount(); r++) {
        boolean deleted = tomb instanceof BitVector t && !t.isNull(r) && t.get(r) != 0;
        String k = byKey || deleted ? new String(key.get(r), StandardCharsets.UTF_8) : null;
        if (k != null && laterFresh.contains(k)) {
          continue;  // not the newest row of its key at to
        }
        if (deleted) {
          laterBaseDeleted.add(k);
          continue;
        }
        if (k != null && (unchanged(k, r, seq, address, digest) || rules.superseded.contains(k))) {
          continue;
        }
        if (eval.matches(r)) {
          rows[count++] = r;
        }
      }
      VectorSchemaRoot out = output.emit(in, rows, count, dataset, true);
      if (out != null) {
        return out;
      }
    }
    return null;
  }

  /**
   * Whether the live base row {@code r} of key {@code k} (of {@code to}) is the version {@code from} showed;
   * records the key's live row where {@link #deletedKeys} will ask (keys {@code from} held outside {@code to}'s
   * fresh tier).
   */
  private boolean unchanged(String k, int r, BigIntVector seq, FieldVector address, RowDigest digest) {
    PriorVersions.Version before = prior.outsideLaterFresh(k);
    if (before == null) {
      return false;
    }
    laterBaseLive.add(k);
    Long sequence = seq.isNull(r) ? null : seq.get(r);
    return PriorVersions.same(before, sequence, RowIds.get(address, r), () -> digest.of(r));
  }

  /**
   * Keys visible at {@code from} and not at {@code to}: those {@code to}'s fresh tier deletes, and those whose
   * version {@code from} held outside {@code to}'s fresh tier has no live base row in {@code to}. Called once the
   * base fragments of {@code to} were read.
   */
  private List<String> deletedKeys() {
    List<String> out = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    for (String k : deletedInFresh) {
      LsmSnapshot.Winner before = prior.fresh.get(k);
      PriorVersions.Version inBase = before == null ? prior.base.get(k) : null;
      if (before != null ? !before.ref().tombstone() : inBase != null ? !inBase.tombstone() : false) {
        out.add(k);
      } else if (before == null && inBase == null) {
        unknown.add(k);  // from held it, if at all, in a base fragment both share
      }
    }
    for (Map.Entry<String, PriorVersions.Version> e : prior.base.entrySet()) {
      if (!e.getValue().tombstone() && !laterFresh.contains(e.getKey()) && !laterBaseLive.contains(e.getKey())) {
        out.add(e.getKey());
      }
    }
    // a fresh row of from that to holds in its base only: merged since, into a fragment this scan read, or, when from
    // was taken between a merge's two commits (its rows already in the base, the generation not yet marked merged),
    // into a fragment both share; only to's base can tell whether such a key is gone
    List<String> movedAway = new ArrayList<>();
    for (Map.Entry<String, PriorVersions.Version> e : prior.moved.entrySet()) {
      String k = e.getKey();
      if (!e.getValue().tombstone() && !laterBaseLive.contains(k)) {
        if (laterBaseDeleted.contains(k)) {
          out.add(k);
        } else {
          movedAway.add(k);
        }
      }
    }
    Instant now = rules.scan.now() == null ? Instant.now() : rules.scan.now();
    if (!movedAway.isEmpty()) {
      Set<String> live = new HashSet<>(found(to, movedAway, now));
      movedAway.stream().filter(k -> !live.contains(k)).forEach(out::add);
    }
    // tombstones merged into a fragment to added, for keys from held in a fragment both hold
    for (String k : laterBaseDeleted) {
      if (!prior.fresh.containsKey(k) && !prior.base.containsKey(k)) {
        unknown.add(k);
      }
    }
    if (!unknown.isEmpty()) {
      out.addAll(found(from, unknown, now));
    }
    out.sort(null);
    return out;
  }

  /** Those of {@code keys} {@code snapshot} shows (expired ones too), looked up by key. */
  private List<String> found(LsmSnapshot snapshot, List<String> keys, Instant now) {
    List<String> out = new ArrayList<>();
    List<VectorSchemaRoot> found = PointLookup.lookup(rules.spec, snapshot, keys, List.of(rules.spec.key()), true, now,
        allocator);
    try {
      for (VectorSchemaRoot b : found) {
        VarCharVector key = (VarCharVector) b.getVector(rules.spec.key());
        for (int r = 0; r < b.getRowCount(); r++) {
          out.add(new String(key.get(r), StandardCharsets.UTF_8));
        }
      }
    } finally {
      found.forEach(VectorSchemaRoot::close);
    }
    return out;
  }

  private static int[] identity(int n) {
    int[] rows = new int[n];
    for (int i = 0; i < n; i++) {
      rows[i] = i;
    }
    return rows;
  }

  @Override
  public VectorSchemaRoot batch() {
    return current;
  }

  private void closeCurrent() {
    if (current != null) {
      current.close();
      current = null;
    }
  }

  private void closeBase() {
    ScanHandle s = baseScan;
    baseScan = null;
    if (s != null) {
      s.close();
    }
  }

  @Override
  public void close() {
    closeCurrent();
    closeBase();
    while (!pending.isEmpty()) {
      pending.poll().close();
    }
    from.close();
  }
}
