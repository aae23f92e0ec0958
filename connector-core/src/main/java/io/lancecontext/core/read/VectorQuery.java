package io.lancecontext.core.read;

import java.io.Serializable;
import java.util.List;

/**
 * A vector search: the {@code k} rows of the LSM view whose {@code column} is nearest to {@code vector}, by the
 * column's metric ({@link io.lancecontext.core.schema.VectorMetric}), each with its distance. Only rows matching
 * {@code filter} are searched (a prefilter: k matching rows come back whenever k exist).
 *
 * @param column a vector column of the store
 * @param vector the query vector, as many values as the column's dimension
 * @param k rows to return, 1 to {@value #MAX_K}
 * @param filter rows to search; never null (true searches every row)
 * @param columns columns to return besides the distance, in order; null for every declared column
 * @param snapshot search the snapshot this token or tag names ({@link ScanSpec#atSnapshot}); null for now
 */
public record VectorQuery(String column, float[] vector, int k, Predicate filter, List<String> columns, String snapshot)
    implements Serializable {
  /** The most rows one search returns. */
  public static final int MAX_K = 10_000;

  public VectorQuery {
    vector = vector == null ? null : vector.clone();
    filter = filter == null ? Predicate.alwaysTrue() : filter;
    columns = columns == null ? null : List.copyOf(columns);
  }

  /** The {@code k} rows nearest to {@code vector} in {@code column}, every column returned. */
  public static VectorQuery nearest(String column, float[] vector, int k) {
    return new VectorQuery(column, vector, k, null, null, null);
  }

  public VectorQuery withFilter(Predicate p) {
    return new VectorQuery(column, vector, k, p, columns, snapshot);
  }

  public VectorQuery withColumns(List<String> cols) {
    return new VectorQuery(column, vector, k, filter, cols, snapshot);
  }

  public VectorQuery atSnapshot(String tokenOrTag) {
    return new VectorQuery(column, vector, k, filter, columns, tokenOrTag);
  }

  @Override
  public float[] vector() {
    return vector == null ? null : vector.clone();
  }
}
