package io.lancecontext.core.internal.lance;

import io.lancecontext.core.options.KeyIndexType;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.OptimizeOptions;
import org.lance.index.scalar.BTreeIndexParams;
import org.lance.index.scalar.ScalarIndexParams;

/**
 * The scalar index on the key column (option {@code index.key}), used by point lookups and merges: building
 * and rebuilding it, and finding the base rows of keys through it (row addresses, which only lance-core's
 * deletion vectors take).
 */
public final class KeyIndex {
  private KeyIndex() {}

  /**
   * Keys per page of the B-tree index (lance-core's default is 4,096). A look-up of keys spread over the
   * whole key space reads every page, and lance-core's cost per page it searches is mostly fixed, so
   * fewer, larger pages make merges into a large base cheaper: 25,000 existing and 25,000 new keys looked
   * up in a 3 M-row base took 1.15–1.56 s with pages of 4,096 keys, 0.84–0.96 s with 16,384 (3.6 s with
   * 1,024); a one-key look-up took 1.6 ms instead of 2.2 ms (warm), and a 100,000-row base did not change.
   */
  static final long BTREE_PAGE_ROWS = 16_384;

  /** Rows in fragments the key index does not cover, above which merges rebuild it. */
  static final long UNINDEXED_ROWS_MIN = 20_000;

  public static String name(SchemaSpec spec) {
    return KeyIndexCoverage.indexName(spec);
  }

  /**
   * Creates the index when the store wants one and it is missing, or rebuilds it ({@code rebuild}, after
   * a compaction) so that it covers every fragment.
   *
   * @return whether an index was built
   */
  public static boolean ensure(LanceDataset dataset, SchemaSpec spec, StoreConfig config, boolean rebuild) {
    Dataset ds = dataset.lance();
    KeyIndexType type = config.get(StoreOptions.INDEX_KEY);
    if (type == KeyIndexType.NONE) {
      return false;
    }
    String name = name(spec);
    if (!rebuild && ds.listIndexes().contains(name)) {
      return false;
    }
    IndexType indexType = type == KeyIndexType.BTREE ? IndexType.BTREE : IndexType.ZONEMAP;
    ScalarIndexParams params = type == KeyIndexType.BTREE ? new BTreeIndexParams.Builder().zoneSize(BTREE_PAGE_ROWS).build()
        : ScalarIndexParams.create(type.lanceName());
    LanceErrors.run("build the " + type.lanceName() + " index on '" + spec.key() + "'", () ->
        ds.createIndex(List.of(spec.key()), indexType, Optional.of(name),
            IndexParams.builder().setScalarIndexParams(params).build(), true));
    return true;
  }

  /**
   * Brings the index up to date when too many rows sit in fragments it does not cover (each merge appends such
   * fragments; Lance scans them without the index, so lookups slow down as they accumulate): more than
   * {@value #UNINDEXED_ROWS_MIN} rows and more than a tenth of the table. The index is brought up to date by
   * lance-core's {@code optimizeIndices}, which merges the keys of the uncovered fragments into the index's sorted
   * pages instead of reading and sorting every key of the base again (a 1 M-row base and 250,000 new keys: 0.27 s
   * instead of 0.63 s; docs/performance.md, stop 56). Not while a fragment-reuse index is present (a compaction
   * with deferred remap whose key-index rebuild did not run: {@code optimizeIndices} loses rows there in lance-core
   * 7.0.0), and not when the update left fragments uncovered: then the index is rebuilt.
   *
   * @return whether the index was updated or rebuilt
   */
  public static boolean refreshIfStale(LanceDataset ds, SchemaSpec spec, StoreConfig config) {
    if (config.get(StoreOptions.INDEX_KEY) == KeyIndexType.NONE) {
      return false;
    }
    KeyIndexCoverage coverage = KeyIndexCoverage.of(ds, spec);
    if (!coverage.exists()) {
      return ensure(ds, spec, config, false);
    }
    long unindexed = coverage.uncoveredRows();
    if (unindexed > UNINDEXED_ROWS_MIN && unindexed * 10 > coverage.rows()) {
      if (!ds.lance().listIndexes().contains(LanceCompaction.FRAG_REUSE_INDEX) && update(ds, spec)) {
        return true;
      }
      return ensure(ds, spec, config, true);
    }
    return false;
  }

  /** Merges the uncovered fragments' keys into the key index; whether it covers every fragment afterwards. */
  private static boolean update(LanceDataset ds, SchemaSpec spec) {
    Dataset lance = ds.lance();
    OptimizeOptions options = OptimizeOptions.builder().indexNames(List.of(name(spec))).numIndicesToMerge(1).build();
    LanceErrors.run("update the index on '" + spec.key() + "'", () -> lance.optimizeIndices(options));
    lance.checkoutLatest();
    return KeyIndexCoverage.of(ds, spec).uncovered().isEmpty();
  }

  /** Fewest keys per filter when {@link #rowOffsets} looks keys up (one indexed {@code IN} list each). */
  static final int LOOKUP_CHUNK = 512;
  /** Most filters {@link #rowOffsets} runs over the indexed fragments, unless chunks would exceed {@link #LOOKUP_CHUNK_MAX}. */
  static final int LOOKUP_CHUNKS = 64;
  /** Most keys per filter. */
  static final int LOOKUP_CHUNK_MAX = 8_192;

  /**
   * Keys per filter for a lookup of {@code keys} keys: {@value #LOOKUP_CHUNK}, or more when that would take
   * more than {@value #LOOKUP_CHUNKS} filters. Every filter is one scan with a fixed cost of a few ms, and
   * the sorted chunks partition the key space whatever their size, so the index pages read are about the
   * same: a Flink job's merges of 100,000 and 150,000 new keys took 1.1 and 1.6 s to look them up in chunks
   * of 512 (196 and 293 scans), 0.6–0.7 and 0.9–1.0 s in 64 chunks; 16 larger chunks were no faster.
   */
  static int chunkSize(int keys) {
    return Math.min(LOOKUP_CHUNK_MAX, Math.max(LOOKUP_CHUNK, (keys + LOOKUP_CHUNKS - 1) / LOOKUP_CHUNKS));
  }

  /**
   * Where the base rows of {@code keys} are: fragment id → row offsets in it, ascending. The fragments the
   * key index covers are searched through it in sorted chunks of {@link #chunkSize} keys, so that cost
   * follows the number of keys, not the base: a chunk of sorted keys touches a few neighbouring index
   * pages, where a chunk of keys spread over the key space touches most of them (25,000 keys in a 1 M-row
   * base: 0.3 s sorted in chunks of 512, 8–14 s unsorted in chunks of 4096). The fragments it does not cover
   * (merges add them until {@link #refreshIfStale} rebuilds it) are scanned once, their keys checked in
   * Java, not once per chunk; so is the whole base when it holds fewer than two rows per key, or when a key is
   * not {@link LanceSql#passable} (filter text cannot carry it).
   */
  public static Map<Integer, List<Integer>> rowOffsets(LanceDataset ds, SchemaSpec spec, Collection<String> keys) {
    return rowOffsets(ds, spec, keys, keys.stream().allMatch(LanceSql::passable));
  }

  /** As {@link #rowOffsets(LanceDataset, SchemaSpec, Collection)}, told whether every key is passable. */
  public static Map<Integer, List<Integer>> rowOffsets(LanceDataset ds, SchemaSpec spec, Collection<String> keys,
      boolean passable) {
    Map<Integer, List<Integer>> found = new TreeMap<>();
    if (keys.isEmpty()) {
      return found;
    }
    KeyIndexCoverage coverage = KeyIndexCoverage.of(ds, spec);
    List<Integer> indexed = new ArrayList<>(coverage.covered());
    List<Integer> unindexed = new ArrayList<>();
    coverage.uncovered().forEach(f -> unindexed.add(f.id()));
    long rows = coverage.rows();
    if (rows == 0) {
      return found;
    }
    if (rows < 2L * keys.size() || !passable) {
      // fewer than two base rows per key (a store's first loads): one scan of the base keys costs less than
      // the indexed filters (250,000 keys in a 250,000-row base: 1.6–1.9 s in 64 filters), and in proportion
      // to the keys; a key filter text cannot carry is found by the scan too
      unindexed.addAll(indexed);
      indexed.clear();
    }
    List<String> all = new ArrayList<>(indexed.isEmpty() ? List.of() : keys);
    Collections.sort(all);
    if (!all.isEmpty() && all.size() <= LOOKUP_CHUNK && !unindexed.isEmpty()) {
      // one filter: lance-core searches the fragments the index does not cover itself, in one pass over their key
      // column, instead of their keys read into Java (240-680 ms per merge for a few hundred keys, when 1-1.5 M
      // rows were in such fragments)
      indexed.addAll(unindexed);
      unindexed.clear();
    }
    String column = LanceSql.column(spec.key());
    int chunkSize = chunkSize(all.size());
    for (int from = 0; from < all.size() && !indexed.isEmpty(); from += chunkSize) {
      StringBuilder filter = new StringBuilder(column).append(" IN (");
      List<String> chunk = all.subList(from, Math.min(all.size(), from + chunkSize));
      for (int k = 0; k < chunk.size(); k++) {
        filter.append(k == 0 ? "" : ", ").append(LanceSql.string(chunk.get(k)));
      }
      filter.append(')');
      ScanRequest request = ScanRequest.of(List.of()).filter(filter.toString()).withRowAddress(true);
      if (!unindexed.isEmpty()) {
        request.fragments(indexed);
      }
      collect(ds, request, spec, null, found, "look up the base rows of " + chunk.size() + " merged keys");
    }
    if (!unindexed.isEmpty()) {
      ScanRequest request = ScanRequest.of(List.of(spec.key())).fragments(unindexed).withRowAddress(true);
      Set<String> wanted = keys instanceof Set<String> set ? set : new HashSet<>(keys);
      collect(ds, request, spec, wanted, found, "scan the keys of " + unindexed.size() + " unindexed fragments");
    }
    found.values().forEach(Collections::sort);
    return found;
  }

  /** Adds the row addresses a scan returns (of rows whose key is in {@code only}, unless null) to {@code found}. */
  private static void collect(LanceDataset ds, ScanRequest request, SchemaSpec spec, Set<String> only,
      Map<Integer, List<Integer>> found, String what) {
    try (ScanHandle scan = ds.scan(request)) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        FieldVector addresses = reader.getVectorSchemaRoot().getVector(RowIds.ROW_ADDRESS);
        VarCharVector key = only == null ? null : (VarCharVector) reader.getVectorSchemaRoot().getVector(spec.key());
        for (int r = 0; r < addresses.getValueCount(); r++) {
          if (only != null && !only.contains(new String(key.get(r), StandardCharsets.UTF_8))) {
            continue;
          }
          long address = RowIds.get(addresses, r);
          found.computeIfAbsent(RowIds.fragmentOf(address), f -> new ArrayList<>()).add(RowIds.offsetOf(address));
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate(what, e);
    }
  }
}
