package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.codec.Text;
import io.lancecontext.core.internal.lance.BlobMaterializer;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.StructNulls;
import io.lancecontext.core.internal.txn.StagedRows;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Looks keys up in an {@link LsmSnapshot}: the fresh tier first (an in-memory index of every key's
 * newest row), then the base table through its key index for the keys the fresh tier does not hold.
 * Never stale: a key the fresh tier holds is never read from the base. Tombstoned keys are absent;
 * retired/expired records too unless {@code includeExpired}. Supersession does not apply to lookups by
 * key.
 */
public final class PointLookup {
  private PointLookup() {}

  /** Largest IN list sent to Lance in one base query. */
  static final int MAX_KEYS_PER_QUERY = 1_000;

  /**
   * Returns one batch per source holding the found rows ({@code columns}, in order). The caller closes
   * the batches.
     */
  static List<VectorSchemaRoot> lookup(SchemaSpec spec, LsmSnapshot snapshot, List<String> keys,
      List<String> columns, boolean includeExpired, Instant now, BufferAllocator allocator) {
    checkColumns(spec, columns);
    Predicate visible = spec.has(Capability.LIFECYCLE) && !includeExpired
        ? Predicates.lifecycleVisible(spec, now) : Predicate.alwaysTrue();
    List<VectorSchemaRoot> out = new ArrayList<>();
    Set<String> fromBase = new LinkedHashSet<>();
    try {
      List<LsmSnapshot.Winner> inFresh = new ArrayList<>();
      for (String key : new LinkedHashSet<>(keys)) {
        if (!Text.isText(key)) {
          continue;  // no stored key holds an unpaired surrogate (refused at add)
        }
        LsmSnapshot.Winner w = snapshot.winner(key);
        if (w == null) {
          fromBase.add(key);
        } else if (!w.ref().tombstone()) {
          inFresh.add(w);
        }
      }
      out.addAll(fresh(spec, inFresh, columns, visible, allocator));
      List<String> pending = new ArrayList<>(fromBase);
      for (int i = 0; i < pending.size(); i += MAX_KEYS_PER_QUERY) {
        List<String> chunk = pending.subList(i, Math.min(pending.size(), i + MAX_KEYS_PER_QUERY));
        base(spec, snapshot, chunk, columns, visible, allocator, out);
      }
      return out;
    } catch (Exception e) {
      out.forEach(VectorSchemaRoot::close);
      throw LanceErrors.translate("look up keys", e);
    }
  }

  /**
   * Rejects a column list a lookup cannot return: unknown or nested names, duplicates. (lance-core 7.0.0 aborts
   * the JVM when {@code take} is asked for an unknown column.)
   */
  public static void checkColumns(SchemaSpec spec, List<String> columns) {
    Set<String> seen = new java.util.HashSet<>();
    for (String c : columns) {
      if (c == null || spec.column(c) == null) {
        throw new SchemaException(String.valueOf(c), "no such column; the store's columns are " + spec.columnNames());
      }
      if (!seen.add(c)) {
        throw new SchemaException(c, "the column is named twice");
      }
    }
  }

  /**
   * The fresh rows {@code winners} (not tombstones) that match {@code visible}, as batches of {@code columns}
   * (blobs as bytes) in no particular order: one batch per WAL batch, per batch of a part's rows this JVM kept when
   * it staged it, and per other generation or staged part holding any of them, read with one {@code take} of all its
   * rows (a take per row costs a native call and a
   * file read each: a lookup of 200 keys that a checkpoint just published took 200 of them). The caller
   * closes the batches.
   */
  static List<VectorSchemaRoot> fresh(SchemaSpec spec, List<LsmSnapshot.Winner> winners, List<String> columns,
      Predicate visible, BufferAllocator allocator) throws Exception {
    // (shard, source, batch) -> rows, in the order sources were first met
    Map<FreshShard, Map<Long, List<Integer>>> bySource = new java.util.IdentityHashMap<>();
    List<FreshShard> shards = new ArrayList<>();
    for (LsmSnapshot.Winner w : winners) {
      Map<Long, List<Integer>> m = bySource.get(w.shard());
      if (m == null) {
        m = new java.util.LinkedHashMap<>();
        bySource.put(w.shard(), m);
        shards.add(w.shard());
      }
      m.computeIfAbsent(((long) w.ref().source() << 32) | w.ref().batch(), k -> new ArrayList<>()).add(w.ref().row());
    }
    Set<String> cols = new LinkedHashSet<>(columns);
    cols.addAll(Predicates.topLevelColumns(visible));
    List<VectorSchemaRoot> out = new ArrayList<>();
    try {
      for (FreshShard shard : shards) {
        for (Map.Entry<Long, List<Integer>> e : bySource.get(shard).entrySet()) {
          FreshSource source = shard.sources().get((int) (e.getKey() >>> 32));
          int[] rows = e.getValue().stream().mapToInt(Integer::intValue).sorted().toArray();
          StagedRows staged = source instanceof GenerationSource g ? staged(spec, g, cols) : null;
          if (source instanceof WalSource w) {
            addIfAny(out, rowsInMemory(w.entry().batches().get((int) (e.getKey() & 0xffffffffL)), rows, columns,
                visible, allocator));
          } else if (staged != null) {
            staged.forEachBatch(rows, (b, local) -> addIfAny(out, rowsInMemory(b, local, columns, visible, allocator)));
          } else {
            addIfAny(out, generationRows(spec, (GenerationSource) source, rows, columns, new ArrayList<>(cols), visible,
                allocator));
          }
        }
      }
      return out;
    } catch (Exception | Error e) {
      out.forEach(VectorSchemaRoot::close);
      throw e;
    }
  }

  /** The rows of {@code g} this JVM kept when it staged it, if they hold {@code cols} and no blob is asked for. */
  private static StagedRows staged(SchemaSpec spec, GenerationSource g, Set<String> cols) {
    StagedRows staged = g.stagedRows();
    return staged != null && staged.has(cols) && cols.stream().noneMatch(c -> spec.column(c).blob()) ? staged : null;
  }

  private static void addIfAny(List<VectorSchemaRoot> out, VectorSchemaRoot batch) {
    if (batch != null) {
      out.add(batch);
    }
  }

  /** Rows {@code rows} of a batch in memory (a WAL batch, or rows this JVM staged) that match {@code visible}. */
  private static VectorSchemaRoot rowsInMemory(VectorSchemaRoot batch, int[] rows, List<String> columns,
      Predicate visible, BufferAllocator allocator) {
    PredicateEvaluator eval = new PredicateEvaluator(visible, batch);
    int[] kept = new int[rows.length];
    int count = 0;
    for (int r : rows) {
      if (eval.matches(r)) {
        kept[count++] = r;
      }
    }
    return count == 0 ? null : RowCopier.copy(batch, columns, kept, count, allocator);
  }

  /**
   * Rows {@code rows} (ascending offsets) of a generation or part, read with one take of {@code cols} ({@code columns}
   * and those {@code visible} reads).
   */
  private static VectorSchemaRoot generationRows(SchemaSpec spec, GenerationSource g, int[] rows, List<String> columns,
      List<String> cols, Predicate visible, BufferAllocator allocator) throws Exception {
    List<Long> offsets = new ArrayList<>(rows.length);
    for (int r : rows) {
      offsets.add((long) r);
    }
    List<VectorSchemaRoot> parts = new ArrayList<>();
    List<int[]> partRows = new ArrayList<>();
    try (ArrowReader reader = g.dataset().take(offsets, cols)) {
      int seen = 0;
      while (reader.loadNextBatch()) {
        VectorSchemaRoot in = reader.getVectorSchemaRoot();
        PredicateEvaluator eval = new PredicateEvaluator(visible, in);
        int[] kept = new int[in.getRowCount()];
        int[] offsetsKept = new int[in.getRowCount()];
        int count = 0;
        for (int r = 0; r < in.getRowCount(); r++) {
          if (eval.matches(r)) {
            offsetsKept[count] = rows[seen + r];
            kept[count++] = r;
          }
        }
        seen += in.getRowCount();
        if (count > 0) {
          parts.add(RowCopier.copy(in, columns, kept, count, allocator));
          partRows.add(java.util.Arrays.copyOf(offsetsKept, count));
        }
      }
      if (seen != rows.length) {
        throw new IllegalStateException("generation " + g.path() + " returned " + seen + " of " + rows.length + " rows");
      }
    } catch (Exception | Error e) {
      parts.forEach(VectorSchemaRoot::close);
      throw e;
    }
    if (parts.isEmpty()) {
      return null;
    }
    VectorSchemaRoot picked;
    int[] pickedRows;
    if (parts.size() == 1) {
      picked = parts.get(0);
      pickedRows = partRows.get(0);
    } else {
      try {
        picked = RowCopier.concat(parts, allocator);
      } finally {
        parts.forEach(VectorSchemaRoot::close);
      }
      pickedRows = partRows.stream().flatMapToInt(java.util.Arrays::stream).toArray();
    }
    try (picked) {
      return BlobMaterializer.materialize(g.dataset(), spec, picked, columns, i -> pickedRows[i], allocator);
    }
  }

  /**
   * The base rows of {@code keys}, in two steps: find their row ids, then one {@code takeRows} of every column
   * asked for. Where this JVM holds every base fragment's key hashes with their rows ({@link BaseKeyHashes}), the
   * ids are the rows holding a key's hash, and the filter is checked on the rows taken (a collision adds a row it
   * drops); else a filtered scan that reads only the key and the row ids finds them, reading only the fragments
   * that may hold one of the keys, none when no fragment can. A filtered scan plans its projection when it is
   * created, and with every column of a wide spec that alone cost about 3 ms (36-column rollout store:
   * one key 6.4 ms in one scan, 4.1 ms in two steps; 100 keys 17.0 and 14.7 ms). Both steps read the same
   * version of the base, so the row ids found (live rows only) are the rows taken.
   */
  private static void base(SchemaSpec spec, LsmSnapshot snapshot, List<String> keys, List<String> columns,
      Predicate visible, BufferAllocator allocator, List<VectorSchemaRoot> out) throws Exception {
    Predicate filter = Predicate.and(Predicate.in(spec.key(), new ArrayList<>(keys)), Predicates.notTombstone(spec), visible);
    LanceDataset dataset = snapshot.base().dataset();
    long[] addresses = snapshot.base().addressesHolding(spec, keys);
    List<Long> rowIds = new ArrayList<>();
    List<String> rowKeys;  // the key of each row id, where a scan found them
    boolean recheck;       // whether the rows taken may not all match the filter
    if (addresses != null) {
      for (long a : addresses) {
        rowIds.add(a);  // without stable row ids (addressesHolding checks), a row's id is its address
      }
      rowKeys = null;
      recheck = true;
    } else {
      LanceSql.Rendered sql = LanceSql.renderSuperset(filter);
      rowKeys = new ArrayList<>();
      if (!find(spec, snapshot, keys, sql, rowIds, rowKeys)) {
        return;
      }
      // keys Lance cannot be sent: the scan found a superset (key ranges), the filter is re-checked here
      recheck = !sql.exact();
    }
    if (rowIds.isEmpty()) {
      return;
    }
    boolean blobs = columns.stream().anyMatch(c -> spec.column(c).blob());
    Set<String> read = new LinkedHashSet<>(columns);
    if (recheck) {
      read.addAll(Predicates.topLevelColumns(filter));
    }
    read.add(spec.key());
    int taken = 0;
    try (ArrowReader reader = dataset.takeRows(rowIds, new ArrayList<>(read))) {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot in = reader.getVectorSchemaRoot();
        StructNulls.repair(spec, dataset, in);
        VarCharVector key = (VarCharVector) in.getVector(spec.key());
        int first = taken;
        for (int r = 0; rowKeys != null && r < in.getRowCount(); r++) {
          if (taken + r >= rowKeys.size()
              || !rowKeys.get(taken + r).equals(new String(key.get(r), StandardCharsets.UTF_8))) {
            throw new StorageException(dataset.uri() + ": lance-core's "
                + "takeRows returned rows other than, or in another order than, the row ids asked for", null);
          }
        }
        taken += in.getRowCount();
        int[] rows = new int[in.getRowCount()];
        int count = 0;
        PredicateEvaluator eval = recheck ? new PredicateEvaluator(filter, in) : null;
        for (int r = 0; r < in.getRowCount(); r++) {
          if (eval == null || eval.matches(r)) {
            rows[count++] = r;
          }
        }
        if (count == 0) {
          continue;
        }
        VectorSchemaRoot selected = count == in.getRowCount() ? RowCopier.transfer(in, columns, allocator)
            : RowCopier.copy(in, columns, rows, count, allocator);
        if (!blobs) {
          out.add(selected);
        } else {
          int[] kept = Arrays.copyOf(rows, count);
          try (selected) {
            out.add(BlobMaterializer.materialize(dataset, spec, selected, columns, i -> rowIds.get(first + kept[i]),
                allocator));
          }
        }
      }
    }
    if (taken != rowIds.size()) {
      throw new StorageException(dataset.uri() + ": lance-core's takeRows returned " + taken
          + " rows for " + rowIds.size() + " row ids", null);
    }
  }

  /**
   * Finds the row ids and keys of the base rows matching {@code sql} with a filtered scan of the fragments that may
   * hold one of {@code keys}; false when none can.
   */
  private static boolean find(SchemaSpec spec, LsmSnapshot snapshot, List<String> keys, LanceSql.Rendered sql,
      List<Long> rowIds, List<String> rowKeys) throws Exception {
    List<Integer> fragments = snapshot.base().fragmentsHolding(spec, keys);
    if (fragments != null && fragments.isEmpty()) {
      return false;
    }
    ScanRequest find = ScanRequest.of(List.of(spec.key())).filter(sql.sql()).withRowId(true);
    if (fragments != null) {
      find.fragments(fragments);
    }
    try (ScanHandle scan = snapshot.base().dataset().scan(find)) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot in = reader.getVectorSchemaRoot();
        FieldVector ids = in.getVector(RowIds.ROW_ID);
        VarCharVector key = (VarCharVector) in.getVector(spec.key());
        for (int r = 0; r < in.getRowCount(); r++) {
          rowIds.add(RowIds.get(ids, r));
          rowKeys.add(new String(key.get(r), StandardCharsets.UTF_8));
        }
      }
    }
    return true;
  }

}
