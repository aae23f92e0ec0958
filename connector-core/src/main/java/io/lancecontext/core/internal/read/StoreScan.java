package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.StructNulls;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.lance.Dataset;
import org.lance.MetadataColumns;
import org.lance.ipc.ScanOptions;

/**
 * Executes a read over an {@link LsmSnapshot} and returns exactly the LSM view: the newest row per key
 * across the base table and the fresh tier, tombstoned keys hidden, and, unless asked otherwise,
 * superseded and retired/expired records hidden. Filters are applied to the newest row of each key
 * only, so a filter on any column never returns a row that a newer version replaced.
 *
 * <p>The filter is {@linkplain Predicates#normalize normalised} once, so both tiers evaluate the same
 * predicate. Pushdown: the filter, the visibility rules and (for small fresh tiers) the exclusion of keys
 * the fresh tier overrides are rendered into one Lance filter on the base table; where the filter cannot be
 * sent exactly (literals lance-core cannot be sent, see {@link LanceSql}) Lance gets a superset and the
 * filter is evaluated in Java over it. Offset and limit go to Lance when nothing is left for Java to filter;
 * a limit of 0 returns nothing.
 *
 * <p>Batches are produced lazily; each is valid until the next call to {@link #next()}. Not thread-safe.
 */
public final class StoreScan implements AutoCloseable {
  /** Above this many fresh keys, the base scan filters them out in Java instead of in its Lance filter. */
  static final int MAX_PUSHED_EXCLUSIONS = 1_000;

  /** Above this many keys named by a filter, the fresh tier is scanned instead of read key by key. */
  static final int MAX_KEYS_READ_BY_KEY = 10_000;


  private final SchemaSpec spec;
  private final LsmSnapshot snapshot;
  private final ScanSpec scan;
  private final BufferAllocator allocator;
  private final ReadSplit.Part part;
  private final List<Integer> fragments;
  private final List<String> outColumns;
  private final Predicate freshFilter;
  private final Set<String> superseded;
  private final Set<String> freshKeys;

  // base scan state
  private final boolean javaKeyCheck;
  private final boolean javaBaseFilter;
  private final String lanceFilter;
  private final boolean pushLimit;
  private ScanHandle baseScan;
  private boolean baseDone;

  // fresh state
  private Iterator<FreshShard> shardIt;
  private FreshShard shard;
  private int sourceIndex = -1;
  private int batchIndex;
  private ScanHandle genScan;

  /** Keys the filter confines the read to (read from the fresh tier by key), or null. */
  private final List<String> keysToRead;
  private int keyIndex;

  private long toSkip;
  private long remaining;
  private VectorSchemaRoot current;

  /**
   * @param fragments base fragments to read (null for all); only for {@link ReadSplit.Part#BASE}
   */
  public StoreScan(SchemaSpec spec, LsmSnapshot snapshot, ScanSpec scan, BufferAllocator allocator, ReadSplit.Part part,
      List<Integer> fragments) {
    this.spec = spec;
    this.snapshot = snapshot;
    this.scan = scan;
    this.allocator = allocator;
    this.part = part;
    this.fragments = fragments;
    this.outColumns = resolveColumns(spec, scan);
    Predicates.validate(spec, scan.filter());
    Predicate filter = Predicates.normalize(spec, scan.filter());
    Instant now = scan.now() == null ? Instant.now() : scan.now();
    Predicate visible = spec.has(Capability.LIFECYCLE) && !scan.includeExpired()
        ? Predicates.lifecycleVisible(spec, now) : Predicate.alwaysTrue();
    this.freshFilter = Predicate.and(filter, visible);
    this.freshKeys = snapshot.freshKeys();
    this.keysToRead = Predicates.keys(spec.key(), filter)
        .filter(k -> k.size() <= MAX_KEYS_READ_BY_KEY).map(k -> List.copyOf(k)).orElse(null);
    this.superseded = spec.has(Capability.SUPERSESSION) && !scan.includeSuperseded()
        ? SupersededKeys.compute(spec, snapshot, allocator) : Set.of();

    Predicate baseFilter = Predicate.and(freshFilter, Predicates.notTombstone(spec));
    LanceSql.Rendered rendered = LanceSql.renderSuperset(baseFilter);
    this.javaBaseFilter = !rendered.exact();
    // the pushed exclusion only saves work: the Java check is what guarantees that a key the fresh tier
    // holds never comes from the base table, whatever Lance's index does (and keys Lance cannot be sent
    // are left to it)
    this.javaKeyCheck = !freshKeys.isEmpty();
    String sql = rendered.sql();
    if (!freshKeys.isEmpty() && freshKeys.size() <= MAX_PUSHED_EXCLUSIONS) {
      List<Object> sendable = freshKeys.stream().filter(LanceSql::passable).map(k -> (Object) k).toList();
      if (!sendable.isEmpty()) {
        sql = "(" + sql + ") AND NOT (" + LanceSql.render(Predicate.in(spec.key(), sendable)).orElseThrow() + ")";
      }
    }
    this.lanceFilter = sql.equals("true") ? null : sql;
    // when Lance decides everything, offset and limit go there too
    this.pushLimit = part == ReadSplit.Part.ALL && fragments == null && snapshot.freshRows() == 0 && !javaBaseFilter
        && superseded.isEmpty();
    this.toSkip = pushLimit ? 0 : scan.offset();
    // counted here even when pushed: Lance reads a limit of 0 as no limit
    this.remaining = scan.hasLimit() ? scan.limit() : Long.MAX_VALUE;
    this.baseDone = part == ReadSplit.Part.FRESH;
    if (part == ReadSplit.Part.BASE) {
      shardIt = List.<FreshShard>of().iterator();
    }
  }

  public static List<String> resolveColumns(SchemaSpec spec, ScanSpec scan) {
    if (scan.columns() == null) {
      return spec.columnNames();
    }
    for (String c : scan.columns()) {
      Predicates.resolve(spec, c);
      if (c.contains(".")) {
        throw new io.lancecontext.core.error.SchemaException(c, "project top-level columns only");
      }
    }
    return scan.columns();
  }

  /** The columns of every batch, in order. */
  public List<String> columns() {
    return outColumns;
  }

  /** Advances to the next non-empty batch; false at the end. */
  public boolean next() {
    closeCurrent();
    if (remaining <= 0) {
      return false;
    }
    while (true) {
      VectorSchemaRoot b = baseDone ? nextFresh() : nextBase();
      if (b == null) {
        if (!baseDone) {
          baseDone = true;
          closeBase();
          if (part == ReadSplit.Part.BASE) {
            return false;
          }
          continue;
        }
        return false;
      }
      if (b.getRowCount() == 0) {
        b.close();
        continue;
      }
      current = b;
      remaining -= b.getRowCount();
      return true;
    }
  }

  public VectorSchemaRoot batch() {
    return current;
  }

  // ------------------------------------------------------------------ base table

  private VectorSchemaRoot nextBase() {
    try {
      if (baseScan == null) {
        openBase();
      }
      while (baseScan.reader().loadNextBatch()) {
        VectorSchemaRoot in = baseScan.reader().getVectorSchemaRoot();
        VectorSchemaRoot out = selectBase(in);
        if (out != null) {
          return out;
        }
      }
      return null;
    } catch (Exception e) {
      throw LanceErrors.translate("scan the base table", e);
    }
  }

  private void openBase() {
    Set<String> cols = new LinkedHashSet<>(outColumns);
    cols.add(spec.key());
    if (javaBaseFilter) {
      cols.addAll(Predicates.topLevelColumns(freshFilter));
      if (spec.has(Capability.TOMBSTONES)) {
        cols.add(io.lancecontext.core.schema.SystemColumns.TOMBSTONE);
      }
    }
    ScanOptions.Builder b = new ScanOptions.Builder().columns(new ArrayList<>(cols)).withRowId(hasBlobs());
    if (lanceFilter != null) {
      b.filter(lanceFilter);
    }
    if (fragments != null) {
      b.fragmentIds(fragments);
    }
    if (pushLimit) {
      if (scan.hasLimit() && scan.limit() > 0) {
        b.limit(scan.limit());
      }
      if (scan.offset() > 0) {
        b.offset(scan.offset());
      }
    }
    baseScan = ScanHandle.open(snapshot.base().dataset(), b.build());
  }

  private boolean hasBlobs() {
    for (String c : outColumns) {
      if (spec.column(c).blob()) {
        return true;
      }
    }
    return false;
  }

  private VectorSchemaRoot selectBase(VectorSchemaRoot in) {
    StructNulls.repair(spec, snapshot.base().dataset(), in);
    int n = in.getRowCount();
    int[] rows = new int[n];
    int count = 0;
    VarCharVector key = (javaKeyCheck || !superseded.isEmpty()) ? (VarCharVector) in.getVector(spec.key()) : null;
    PredicateEvaluator eval = javaBaseFilter
        ? new PredicateEvaluator(Predicate.and(freshFilter, Predicates.notTombstone(spec)), in) : null;
    for (int r = 0; r < n; r++) {
      if (key != null) {
        String k = new String(key.get(r), StandardCharsets.UTF_8);
        if ((javaKeyCheck && freshKeys.contains(k)) || superseded.contains(k)) {
          continue;
        }
      }
      if (eval != null && !eval.matches(r)) {
        continue;
      }
      rows[count++] = r;
    }
    return emit(in, rows, count, snapshot.base().dataset(), true);
  }

  // ------------------------------------------------------------------ fresh tier

  private VectorSchemaRoot nextFresh() {
    if (keysToRead != null) {
      return nextFreshByKey();
    }
    try {
      while (true) {
        if (shard == null) {
          if (shardIt == null) {
            shardIt = snapshot.shards().values().iterator();
          }
          if (!shardIt.hasNext()) {
            return null;
          }
          shard = shardIt.next();
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
        if (sourceIndex >= shard.sources().size()) {
          shard = null;
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("scan the fresh tier", e);
    }
  }

  /** The fresh rows of the keys the filter names, looked up by key (no scan of the fresh tier). */
  private VectorSchemaRoot nextFreshByKey() {
    try {
      while (keyIndex < keysToRead.size()) {
        String k = keysToRead.get(keyIndex++);
        LsmSnapshot.Winner win = snapshot.winner(k);
        if (win == null || win.ref().tombstone() || superseded.contains(k)) {
          continue;
        }
        try (VectorSchemaRoot row = PointLookup.fresh(spec, win.shard(), win.ref(), outColumns, freshFilter, allocator)) {
          if (row == null) {
            continue;
          }
          VectorSchemaRoot out = emit(row, new int[] {0}, 1, null, true);
          if (out != null) {
            return out;
          }
        }
      }
      return null;
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
        int count = selectVisible(in, FreshShard.keyVector(in), b, r -> r, rows);
        VectorSchemaRoot out = emit(in, rows, count, null, false);
        if (out != null) {
          return out;
        }
      }
      return null;
    }
    GenerationSource g = (GenerationSource) source;
    if (genScan == null) {
      Set<String> cols = new LinkedHashSet<>(outColumns);
      cols.add(spec.key());
      cols.addAll(Predicates.topLevelColumns(freshFilter));
      genScan = ScanHandle.open(g.dataset(), new ScanOptions.Builder().columns(new ArrayList<>(cols)).withRowId(true).build());
    }
    while (genScan.reader().loadNextBatch()) {
      VectorSchemaRoot in = genScan.reader().getVectorSchemaRoot();
      var rowIds = in.getVector(MetadataColumns.ROWID);
      int[] rows = new int[in.getRowCount()];
      // a generation is one batch; a row's place in it is its row id's offset
      int count = selectVisible(in, (VarCharVector) in.getVector(spec.key()), 0,
          r -> (int) ((Number) rowIds.getObject(r)).longValue(), rows);
      VectorSchemaRoot out = emit(in, rows, count, g.dataset(), true);
      if (out != null) {
        return out;
      }
    }
    return null;
  }

  /**
   * Selects into {@code rows} the rows of a fresh batch that are the LSM winners of their keys (the row at
   * {@code rowInSource.applyAsInt(r)} of {@code batch} in the current source of the current shard), not tombstones, not
   * superseded, matching the filter; returns how many.
   */
  private int selectVisible(VectorSchemaRoot in, VarCharVector key, int batch,
      java.util.function.IntUnaryOperator rowInSource, int[] rows) {
    PredicateEvaluator eval = new PredicateEvaluator(freshFilter, in);
    int count = 0;
    for (int r = 0; r < in.getRowCount(); r++) {
      String k = new String(key.get(r), StandardCharsets.UTF_8);
      LsmSnapshot.Winner win = snapshot.winner(k);
      if (win.is(shard, sourceIndex, batch, rowInSource.applyAsInt(r)) && !win.ref().tombstone()
          && !superseded.contains(k) && eval.matches(r)) {
        rows[count++] = r;
      }
    }
    return count;
  }

  // ------------------------------------------------------------------ output

  /**
   * Builds an output batch from the selected rows (after offset), materializing blob columns from
   * {@code blobSource} when the batch holds Lance blob descriptors. {@code transferable}: the input
   * batch is the scan's own (a Lance reader's), not a cached WAL batch, so whole batches may be moved
   * instead of copied. Null when nothing is left.
   */
  private VectorSchemaRoot emit(VectorSchemaRoot in, int[] rows, int count, Dataset blobSource, boolean transferable) {
    int start = 0;
    if (toSkip > 0) {
      int skip = (int) Math.min(toSkip, count);
      toSkip -= skip;
      start = skip;
    }
    int take = (int) Math.min(count - start, remaining);
    if (take <= 0) {
      return null;
    }
    int[] selected = rows;
    if (start > 0) {
      selected = new int[take];
      System.arraycopy(rows, start, selected, 0, take);
    }
    boolean blobs = blobSource != null && hasBlobs();
    List<String> copyColumns = new ArrayList<>(outColumns);
    if (blobs) {
      copyColumns.add(MetadataColumns.ROWID);
    }
    boolean everything = start == 0 && take == in.getRowCount() && isIdentity(rows, take);
    VectorSchemaRoot picked = everything && transferable
        ? RowCopier.transfer(in, copyColumns, allocator)
        : RowCopier.copy(in, copyColumns, selected, take, allocator);
    if (!blobs) {
      return picked;
    }
    try (VectorSchemaRoot withDescriptors = picked) {
      return BlobMaterializer.materialize(blobSource, spec, withDescriptors, outColumns, allocator);
    }
  }

  private static boolean isIdentity(int[] rows, int n) {
    for (int i = 0; i < n; i++) {
      if (rows[i] != i) {
        return false;
      }
    }
    return true;
  }

  // ------------------------------------------------------------------ lifecycle

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

  private void closeGeneration() {
    ScanHandle s = genScan;
    genScan = null;
    if (s != null) {
      s.close();
    }
  }

  /** Closes the scan (not the snapshot). */
  @Override
  public void close() {
    closeCurrent();
    closeBase();
    closeGeneration();
  }
}
