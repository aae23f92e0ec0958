package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.internal.codec.Text;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.StructNulls;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.MetadataColumns;
import org.lance.ipc.ScanOptions;

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
  public static List<VectorSchemaRoot> lookup(SchemaSpec spec, LsmSnapshot snapshot, List<String> keys,
      List<String> columns, boolean includeExpired, Instant now, BufferAllocator allocator) {
    checkColumns(spec, columns);
    Predicate visible = spec.has(Capability.LIFECYCLE) && !includeExpired
        ? Predicates.lifecycleVisible(spec, now) : Predicate.alwaysTrue();
    List<VectorSchemaRoot> out = new ArrayList<>();
    Set<String> fromBase = new LinkedHashSet<>();
    try {
      for (String key : new LinkedHashSet<>(keys)) {
        if (!Text.isText(key)) {
          continue;  // no stored key holds an unpaired surrogate (refused at add)
        }
        LsmSnapshot.Winner w = snapshot.winner(key);
        if (w == null) {
          fromBase.add(key);
        } else if (!w.ref().tombstone()) {
          VectorSchemaRoot row = fresh(spec, w.shard(), w.ref(), columns, visible, allocator);
          if (row != null) {
            out.add(row);
          }
        }
      }
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
   * The fresh row {@code ref} of {@code shard} as a one-row batch of {@code columns} (blobs as bytes), or
   * null if it does not match {@code visible}.
   */
  static VectorSchemaRoot fresh(SchemaSpec spec, FreshShard shard, FreshShard.RowRef ref, List<String> columns,
      Predicate visible, BufferAllocator allocator) throws Exception {
    FreshSource source = shard.sources().get(ref.source());
    if (source instanceof WalSource w) {
      VectorSchemaRoot batch = w.entry().batches().get(ref.batch());
      if (!new PredicateEvaluator(visible, batch).matches(ref.row())) {
        return null;
      }
      return RowCopier.copy(batch, columns, new int[] {ref.row()}, 1, allocator);
    }
    GenerationSource g = (GenerationSource) source;
    Set<String> cols = new LinkedHashSet<>(columns);
    cols.addAll(Predicates.topLevelColumns(visible));
    try (ArrowReader reader = g.dataset().take(List.of((long) ref.row()), new ArrayList<>(cols))) {
      if (!reader.loadNextBatch() || reader.getVectorSchemaRoot().getRowCount() == 0) {
        throw new IllegalStateException("generation " + g.path() + " has no row " + ref.row());
      }
      VectorSchemaRoot in = reader.getVectorSchemaRoot();
      if (!new PredicateEvaluator(visible, in).matches(0)) {
        return null;
      }
      try (VectorSchemaRoot picked = RowCopier.copy(in, columns, new int[] {0}, 1, allocator)) {
        return BlobMaterializer.materialize(g.dataset(), spec, picked, columns, i -> ref.row(), allocator);
      }
    }
  }

  private static void base(SchemaSpec spec, LsmSnapshot snapshot, List<String> keys, List<String> columns,
      Predicate visible, BufferAllocator allocator, List<VectorSchemaRoot> out) throws Exception {
    Predicate filter = Predicate.and(Predicate.in(spec.key(), new ArrayList<>(keys)), Predicates.notTombstone(spec), visible);
    LanceSql.Rendered sql = LanceSql.renderSuperset(filter);
    boolean blobs = columns.stream().anyMatch(c -> spec.column(c).blob());
    Set<String> read = new LinkedHashSet<>(columns);
    if (!sql.exact()) {
      // keys Lance cannot be sent: it returns a superset (key ranges), the filter is re-checked here
      read.addAll(Predicates.topLevelColumns(filter));
    }
    read.add(spec.key());
    ScanOptions options = new ScanOptions.Builder().columns(new ArrayList<>(read)).filter(sql.sql()).withRowId(blobs).build();
    List<String> picked = new ArrayList<>(columns);
    if (blobs) {
      picked.add(MetadataColumns.ROWID);
    }
    try (ScanHandle scan = ScanHandle.open(snapshot.base().dataset(), options)) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot in = reader.getVectorSchemaRoot();
        StructNulls.repair(spec, snapshot.base().dataset(), in);
        int[] rows = new int[in.getRowCount()];
        int count = 0;
        PredicateEvaluator eval = sql.exact() ? null : new PredicateEvaluator(filter, in);
        for (int r = 0; r < in.getRowCount(); r++) {
          if (eval == null || eval.matches(r)) {
            rows[count++] = r;
          }
        }
        if (count == 0) {
          continue;
        }
        VectorSchemaRoot selected = count == in.getRowCount() ? RowCopier.transfer(in, picked, allocator)
            : RowCopier.copy(in, picked, rows, count, allocator);
        if (!blobs) {
          out.add(selected);
        } else {
          try (selected) {
            out.add(BlobMaterializer.materialize(snapshot.base().dataset(), spec, selected, columns, allocator));
          }
        }
      }
    }
  }

}
