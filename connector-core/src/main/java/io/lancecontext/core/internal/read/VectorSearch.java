package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.StructNulls;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * A vector search over one {@link LsmSnapshot}: the k rows of the LSM view nearest to a query vector.
 *
 * <ol>
 *   <li>The fresh tier (WAL tail, unmerged generations, published transaction parts) is searched exactly: its
 *       visible rows (newest of their key, not deleted, not superseded, matching the filter) are read and
 *       ranked in Java.</li>
 *   <li>The base table is searched by lance-core: through the column's vector index where it covers a fragment,
 *       exactly where it does not, with the filter applied first. A base row whose key the fresh tier holds is
 *       stale (a newer version or a deletion is there) and is dropped; the search asks for more candidates
 *       until k remain or the base has no more.</li>
 *   <li>Both candidate lists are merged by the same exact distance ({@link VectorDistance}), and the k nearest
 *       rows are read by key from the same snapshot with the requested columns, plus {@value #DISTANCE}.</li>
 * </ol>
 */
public final class VectorSearch {
  /** The column holding each row's distance. */
  public static final String DISTANCE = "_distance";
  /** Fewest candidates asked of the base table first. */
  static final int MIN_CANDIDATES = 32;

  /** Threads that search fresh tiers while the caller searches the base table (daemons, idle ones end). */
  static final ExecutorService FRESH_SEARCHES = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "lancecontext-fresh-search");
    t.setDaemon(true);
    return t;
  });

  private VectorSearch() {}

  /** How the base table's index is probed. */
  public record Tuning(int nprobes, int refineFactor) {}

  /**
   * Runs {@code query} over {@code snapshot}, judging expiry at {@code now}. Returns one batch, nearest row
   * first, which the caller closes.
   */
  public static VectorSchemaRoot run(SchemaSpec spec, LsmSnapshot snapshot, VectorQuery query, Instant now,
      Tuning tuning, BufferAllocator allocator) {
    ColumnSpec column = check(spec, query);
    List<String> output = ScanRules.resolveColumns(spec, ScanSpec.all().withColumns(query.columns()));
    ScanSpec candidates = new ScanSpec(List.of(spec.key(), column.name()), query.filter(), 0, -1, false, false, now,
        null);
    VectorDistance distance = new VectorDistance(column.metric(), query.vector());
    TopK top = new TopK(query.k());
    List<String> read = new ArrayList<>(output);
    if (!read.contains(spec.key())) {
      read.add(spec.key());
    }
    // the base search returns the output columns of its candidates too (unless a blob column needs its own
    // read), so the base hits are not read again by key (7-8 ms of a search)
    try (BaseRows baseRows = read.stream().anyMatch(c -> spec.column(c).blob()) ? null : new BaseRows(read, allocator)) {
      search(spec, snapshot, query, tuning, allocator, column, candidates, distance, top, baseRows);
      return rows(spec, snapshot, top.nearestFirst(), output, read, baseRows, now, allocator, DISTANCE, false);
    }
  }

  /** Searches both tiers at once into {@code top} (the base's candidates' rows kept in {@code baseRows}). */
  private static void search(SchemaSpec spec, LsmSnapshot snapshot, VectorQuery query, Tuning tuning,
      BufferAllocator allocator, ColumnSpec column, ScanSpec candidates, VectorDistance distance, TopK top,
      BaseRows baseRows) {
    try {
      // the tiers are searched at once: the base mostly in lance-core's threads, the fresh tier in this JVM's
      CompletableFuture<TopK> fresh = CompletableFuture.supplyAsync(() -> {
        TopK t = new TopK(query.k());
        searchFresh(spec, snapshot, candidates, column.name(), new VectorDistance(column.metric(), query.vector()), t,
            allocator);
        return t;
      }, FRESH_SEARCHES);
      RuntimeException failed = null;
      try {
        searchBase(new ScanRules(spec, snapshot, candidates, allocator), snapshot, query, column, distance, tuning, top,
            baseRows);
      } catch (RuntimeException e) {
        failed = e;
      }
      // the fresh search ends before this returns, whatever happened: the caller closes the snapshot it reads
      failed = join(fresh, t -> t.nearestFirst().forEach(h -> top.offer(h.key(), h.distance())), failed);
      if (failed != null) {
        throw failed;
      }
    } catch (RuntimeException e) {
      throw LanceErrors.translate("search '" + column.name() + "'", e);
    }
  }

  /**
   * Waits for {@code task} and hands its result to {@code use}; returns {@code failed}, or the task's failure (added
   * to {@code failed} as suppressed when there is one already).
   */
  static <T> RuntimeException join(CompletableFuture<T> task, java.util.function.Consumer<T> use,
      RuntimeException failed) {
    try {
      use.accept(joined(task));
      return failed;
    } catch (RuntimeException e) {
      if (failed == null) {
        return e;
      }
      failed.addSuppressed(e);
      return failed;
    }
  }

  /** A tier's result, its failure rethrown as it was. */
  static <T> T joined(CompletableFuture<T> fresh) {
    try {
      return fresh.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }

  private static ColumnSpec check(SchemaSpec spec, VectorQuery query) {
    ColumnSpec column = SearchFilter.column(spec, query.column(), query.k());
    if (column.type() != ColumnType.VECTOR) {
      throw new SchemaException(column.name(), "is a " + column.type() + " column; a vector search needs a vector column");
    }
    if (query.vector() == null || query.vector().length != column.dim()) {
      throw new SchemaException(column.name(), "holds vectors of " + column.dim() + " values; the query vector has "
          + (query.vector() == null ? "none" : query.vector().length));
    }
    return column;
  }

  /** Ranks every visible fresh row exactly, where it is (no copy of the fresh tier). */
  private static void searchFresh(SchemaSpec spec, LsmSnapshot snapshot, ScanSpec candidates, String column,
      VectorDistance distance, TopK top, BufferAllocator allocator) {
    ScanRules rules = new ScanRules(spec, snapshot, candidates, allocator);
    FreshScan.Emitter rank = (in, rows, count, blobSource, transferable) -> {
      VarCharVector keys = (VarCharVector) in.getVector(spec.key());
      FixedSizeListVector vectors = (FixedSizeListVector) in.getVector(column);
      if (vectors == null) {
        return null;  // written before the column existed: no vector, no match
      }
      for (int i = 0; i < count; i++) {
        float d = distance.of(vectors, rows[i]);
        if (!Float.isNaN(d) && top.wants(d)) {
          top.offer(new String(keys.get(rows[i]), StandardCharsets.UTF_8), d);
        }
      }
      return null;
    };
    try (FreshScan scan = new FreshScan(rules, snapshot, allocator, rank)) {
      scan.next();  // ranks every batch; nothing is handed out
    }
  }

  /**
   * Asks lance-core for the nearest base rows matching the base filter, dropping those the fresh tier shadows
   * (and those the filter rejects where Lance got a superset of it), until {@code k} remain or the base holds no
   * more; offers them to {@code top}.
   */
  private static void searchBase(ScanRules rules, LsmSnapshot snapshot, VectorQuery query, ColumnSpec column,
      VectorDistance distance, Tuning tuning, TopK top, BaseRows baseRows) {
    LanceDataset ds = snapshot.base().dataset();
    if (ds.fragments().isEmpty()) {
      return;
    }
    SchemaSpec spec = rules.spec;
    Set<String> freshKeys = snapshot.freshKeys();
    // lance-core 7.0.0 adds the distance whether asked or not, and warns unless it is asked for
    SearchFilter filter = SearchFilter.of(rules, freshKeys, List.of(spec.key(), column.name(), DISTANCE));
    // whether Lance's filter already leaves out every shadowed base row (then k candidates are enough)
    boolean exclusionsPushed = freshKeys.isEmpty() || (filter.prefilter()
        && freshKeys.size() <= BaseScan.MAX_PUSHED_EXCLUSIONS && freshKeys.stream().allMatch(LanceSql::passable));
    Set<String> columns = new java.util.LinkedHashSet<>(filter.columns());
    if (baseRows != null) {
      columns.addAll(baseRows.columns);
    }
    int k = query.k();
    int wanted = exclusionsPushed && filter.rendered().exact() && rules.superseded.isEmpty() ? k
        : Math.max(MIN_CANDIDATES, 2 * k);
    while (true) {
      TopK round = new TopK(k);
      int returned = 0;
      if (baseRows != null) {
        baseRows.clear();  // a larger round reads its candidates again
      }
      ScanRequest request = filter.applyTo(ScanRequest.of(new ArrayList<>(columns))
          .nearest(column.name(), query.vector(), wanted, column.metric(), tuning.nprobes(), tuning.refineFactor(),
              filter.prefilter()));
      try (ScanHandle scan = ds.scan(request)) {
        while (scan.reader().loadNextBatch()) {
          VectorSchemaRoot in = scan.reader().getVectorSchemaRoot();
          StructNulls.repair(spec, ds, in);
          returned += in.getRowCount();
          VarCharVector keys = (VarCharVector) in.getVector(spec.key());
          FixedSizeListVector vectors = (FixedSizeListVector) in.getVector(column.name());
          SearchFilter.Rows visible = filter.rows(in);
          int[] offered = new int[in.getRowCount()];
          List<String> offeredKeys = new ArrayList<>();
          for (int r = 0; r < in.getRowCount(); r++) {
            String key = new String(keys.get(r), StandardCharsets.UTF_8);
            if (!visible.keeps(key, r)) {
              continue;
            }
            float d = distance.of(vectors, r);
            if (!Float.isNaN(d)) {
              round.offer(key, d);
              offered[offeredKeys.size()] = r;
              offeredKeys.add(key);
            }
          }
          if (baseRows != null) {
            baseRows.keep(in, offered, offeredKeys);
          }
        }
      } catch (Exception e) {
        throw LanceErrors.translate("search the base table's '" + column.name() + "'", e);
      }
      if (round.size() >= k || returned < wanted) {
        round.nearestFirst().forEach(h -> top.offer(h.key(), h.distance()));
        return;
      }
      wanted = (int) Math.min(Integer.MAX_VALUE / 2, 4L * wanted);
    }
  }

  /**
   * Reads the rows of {@code hits} by key from {@code snapshot}, in the hits' order, with their distances in column
   * {@code scoreColumn} ({@code negated}: each distance's negation, a score).
   */
  static VectorSchemaRoot rows(SchemaSpec spec, LsmSnapshot snapshot, List<TopK.Hit> hits, List<String> output,
      List<String> read, BaseRows baseRows, Instant now, BufferAllocator allocator, String scoreColumn,
      boolean negated) {
    List<VectorSchemaRoot> parts = new ArrayList<>();
    List<String> byKeyHits = new ArrayList<>();
    for (TopK.Hit h : hits) {
      if (baseRows == null || !baseRows.holds(h.key())) {
        byKeyHits.add(h.key());
      }
    }
    try {
      if (baseRows != null) {
        baseRows.moveTo(parts);
      }
      if (!byKeyHits.isEmpty()) {
        // fresh hits (and every hit when the base rows were not kept) are read by key from the same snapshot
        ScanSpec byKey = new ScanSpec(read, Predicate.in(spec.key(), byKeyHits), 0, -1, false, false, now, null);
        try (StoreScan scan = new StoreScan(spec, snapshot, byKey, allocator,
            baseRows == null ? ReadSplit.Part.ALL : ReadSplit.Part.FRESH, null)) {
          while (scan.next()) {
            parts.add(RowCopier.transfer(scan.batch(), read, allocator));
          }
        }
      }
      if (parts.isEmpty()) {
        return withScores(empty(spec, output, allocator), new float[0], scoreColumn, allocator);
      }
      try (VectorSchemaRoot all = parts.size() == 1 ? parts.remove(0) : RowCopier.concat(parts, allocator)) {
        Map<String, Integer> rowOf = new HashMap<>();
        VarCharVector keys = (VarCharVector) all.getVector(spec.key());
        for (int r = 0; r < all.getRowCount(); r++) {
          rowOf.put(new String(keys.get(r), StandardCharsets.UTF_8), r);
        }
        int[] order = new int[hits.size()];
        float[] distances = new float[hits.size()];
        int n = 0;
        for (TopK.Hit h : hits) {
          Integer row = rowOf.get(h.key());
          if (row != null) {
            order[n] = row;
            distances[n++] = negated ? -h.distance() : h.distance();
          }
        }
        float[] found = java.util.Arrays.copyOf(distances, n);
        return withScores(RowCopier.copy(all, output, order, n, allocator), found, scoreColumn, allocator);
      }
    } finally {
      parts.forEach(VectorSchemaRoot::close);
    }
  }

  /**
   * The base candidates of the current search round: their output columns copied from the batches the base search
   * returned (already checked to be the newest visible rows of their keys at the snapshot).
   */
  static final class BaseRows implements AutoCloseable {
    private final List<String> columns;
    private final BufferAllocator allocator;
    private final List<VectorSchemaRoot> batches = new ArrayList<>();
    private final Set<String> keys = new HashSet<>();

    BaseRows(List<String> columns, BufferAllocator allocator) {
      this.columns = columns;
      this.allocator = allocator;
    }

    void keep(VectorSchemaRoot in, int[] rows, List<String> offered) {
      if (!offered.isEmpty()) {
        batches.add(RowCopier.copy(in, columns, rows, offered.size(), allocator));
        keys.addAll(offered);
      }
    }

    boolean holds(String key) {
      return keys.contains(key);
    }

    /** Hands the kept batches to {@code parts} (rows that are no hit are left out when the hits are ordered). */
    void moveTo(List<VectorSchemaRoot> parts) {
      parts.addAll(batches);
      batches.clear();
    }

    void clear() {
      batches.forEach(VectorSchemaRoot::close);
      batches.clear();
      keys.clear();
    }

    @Override
    public void close() {
      clear();
    }
  }

  private static VectorSchemaRoot empty(SchemaSpec spec, List<String> output, BufferAllocator allocator) {
    org.apache.arrow.vector.types.pojo.Schema schema = spec.toUserArrowSchema();
    List<Field> fields = new ArrayList<>();
    for (String c : output) {
      fields.add(schema.findField(c));
    }
    VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(fields), allocator);
    root.setRowCount(0);
    return root;
  }

  /** {@code rows} with a float column {@code name} appended (takes ownership of {@code rows}). */
  private static VectorSchemaRoot withScores(VectorSchemaRoot rows, float[] distances, String name,
      BufferAllocator allocator) {
    Float4Vector d = new Float4Vector(new Field(name,
        FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null), allocator);
    d.allocateNew(Math.max(1, distances.length));
    for (int i = 0; i < distances.length; i++) {
      d.set(i, distances[i]);
    }
    d.setValueCount(distances.length);
    return RowCopier.withColumn(rows, d);
  }
}
