package io.lancecontext.core.internal.lance;

import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.VectorMetric;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.lance.Dataset;
import org.lance.index.DistanceType;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.vector.VectorIndexParams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The vector index of each vector column of the base table (IVF-PQ, named {@code <column>_vec_idx}), which
 * searches read the base through. Built by maintenance once the base holds {@code search.index.min-rows}
 * rows, rebuilt when more than a tenth of them sit in fragments it does not cover (merges append such
 * fragments; a search reads them exactly, so a stale index is slower, never wrong) and after a compaction
 * rewrote fragments. Never {@code optimizeIndices}, which loses rows after a deferred-remap compaction in
 * lance-core 7.0.0 (see {@link KeyIndex}).
 */
public final class VectorIndex {
  private static final Logger LOG = LoggerFactory.getLogger(VectorIndex.class);

  private VectorIndex() {}

  /** Bits per PQ code. */
  static final int PQ_BITS = 8;
  /** K-means iterations when training the index. */
  static final int MAX_ITERATIONS = 50;
  /** Most IVF partitions. */
  static final int MAX_PARTITIONS = 4_096;
  /** Fewest vectors an index is built over: PQ trains 2^{@value #PQ_BITS} centroids per sub-vector. */
  static final long MIN_VECTORS = 1L << PQ_BITS;

  /** The index name of vector column {@code column}. */
  public static String name(String column) {
    return column + "_vec_idx";
  }

  /** The top-level vector columns of {@code spec}, each of which gets an index. */
  public static List<ColumnSpec> columns(SchemaSpec spec) {
    List<ColumnSpec> out = new ArrayList<>();
    for (ColumnSpec c : spec.columns()) {
      if (c.type() == ColumnType.VECTOR) {
        out.add(c);
      }
    }
    return out;
  }

  static DistanceType distance(VectorMetric metric) {
    return switch (metric == null ? VectorMetric.L2 : metric) {
      case L2 -> DistanceType.L2;
      case COSINE -> DistanceType.Cosine;
      case DOT -> DistanceType.Dot;
    };
  }

  /**
   * Whether an index is due: a vector column without one while the base holds at least {@code minRows} rows,
   * or with one that leaves more than a tenth of the rows uncovered.
   */
  public static boolean stale(LanceDataset dataset, SchemaSpec spec, long minRows) {
    for (ColumnSpec column : columns(spec)) {
      if (stale(KeyIndexCoverage.ofIndex(dataset, name(column.name())), minRows)) {
        return true;
      }
    }
    return false;
  }

  private static boolean stale(KeyIndexCoverage coverage, long minRows) {
    long rows = coverage.rows();
    if (rows < Math.max(minRows, 1)) {
      return false;
    }
    return !coverage.exists() || coverage.uncoveredRows() * 10 > rows;
  }

  /**
   * Builds the index of each vector column where {@link #stale} says one is due and the column holds at least
   * {@code minRows} (and {@value #MIN_VECTORS}) non-null vectors: a column that is mostly null (a store whose
   * records carry no embeddings) gets none, and lance-core cannot train one over too few.
   *
   * @return the columns whose index was built
   */
  public static List<String> refreshIfStale(LanceDataset dataset, SchemaSpec spec, long minRows) {
    List<String> built = new ArrayList<>();
    for (ColumnSpec column : columns(spec)) {
      KeyIndexCoverage coverage = KeyIndexCoverage.ofIndex(dataset, name(column.name()));
      if (stale(coverage, minRows)) {
        long vectors = dataset.countRows(LanceSql.column(column.name()) + " IS NOT NULL");
        if (vectors >= Math.max(minRows, MIN_VECTORS)) {
          build(dataset, column, vectors);
          dataset.checkoutLatest();
          built.add(column.name());
        }
      }
    }
    return built;
  }

  /** Drops every vector index (after a compaction rewrote the fragments they cover; maintenance rebuilds them). */
  public static void dropAll(LanceDataset dataset, SchemaSpec spec) {
    Dataset ds = dataset.lance();
    for (ColumnSpec column : columns(spec)) {
      String name = name(column.name());
      if (ds.listIndexes().contains(name)) {
        LanceErrors.run("drop the vector index " + name, () -> ds.dropIndex(name));
        ds.checkoutLatest();
      }
    }
  }

  /** Builds the index of {@code column} over its {@code rows} non-null vectors. */
  private static void build(LanceDataset dataset, ColumnSpec column, long rows) {
    // half of lance's usual sqrt(rows): training is a quarter of the work on 2 cores, and searches probe more rows per partition
    int partitions = (int) Math.max(1, Math.min(MAX_PARTITIONS, Math.round(Math.sqrt(rows) / 2)));
    // a build takes about 40 s per million 128-dimension rows on 2 cores: say so before, not only after
    LOG.info("{}: building the vector index of '{}' over {} rows (IVF-PQ, {} partitions); searches read the rows it "
        + "does not cover exactly meanwhile", dataset.uri(), column.name(), rows, partitions);
    VectorIndexParams params = VectorIndexParams.ivfPq(partitions, PQ_BITS, subVectors(column.dim()),
        distance(column.metric()), MAX_ITERATIONS);
    Dataset ds = dataset.lance();
    LanceErrors.run("build the vector index on '" + column.name() + "' (" + rows + " rows)", () ->
        ds.createIndex(List.of(column.name()), IndexType.IVF_PQ, Optional.of(name(column.name())),
            IndexParams.builder().setVectorIndexParams(params).build(), true));
  }

  /** PQ sub-vectors for {@code dim} dimensions: 8 dimensions each where they divide evenly, else fewer. */
  static int subVectors(int dim) {
    for (int per : new int[] {8, 4, 2}) {
      if (dim % per == 0) {
        return dim / per;
      }
    }
    return dim;
  }
}
