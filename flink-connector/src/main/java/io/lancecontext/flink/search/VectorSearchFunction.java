package io.lancecontext.flink.search;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.schema.ColumnType;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;

/**
 * A Flink SQL table function that enriches each row of a stream or table with the {@code k} rows of a store
 * nearest to one of its vectors: {@code LATERAL TABLE(lc_vector_search(q.embedding))} emits, per input row, the
 * store's rows (the chosen columns) and their {@code _distance}, nearest first. Core's
 * {@code ContextStore.search} decides what is found: every add acknowledged before the call, the newest row of a
 * key only, no deleted row. Register one per store and column:
 * {@code tableEnv.createTemporarySystemFunction("lc_vector_search", new VectorSearchFunction(options, "embedding", 10))}
 * (not {@code vector_search}: Flink's built-in function of that name wins).
 */
public final class VectorSearchFunction extends StoreSearchFunction {
  private static final long serialVersionUID = 1L;
  static final String DISTANCE = "_distance";

  /** Every column of the store, then {@code _distance}. */
  public VectorSearchFunction(Map<String, String> options, String column, int k) {
    this(options, column, k, null);
  }

  /**
   * {@code columns} of the store (null for all), then {@code _distance}. Opens the store once to learn its columns;
   * an unknown or non-vector {@code column} fails here, naming it.
   */
  public VectorSearchFunction(Map<String, String> options, String column, int k, List<String> columns) {
    this(options, column, k, columns, null);
  }

  private VectorSearchFunction(Map<String, String> options, String column, int k, List<String> columns,
      Predicate filter) {
    super(options, column, k, columns, filter, DISTANCE, c -> c.type() == ColumnType.VECTOR, "a vector column");
  }

  /**
   * This search restricted to the rows matching {@code filter} (a prefilter: the {@code k} nearest matching rows come
   * back whenever {@code k} exist); its columns must be columns of the store.
   */
  public VectorSearchFunction withFilter(Predicate filter) {
    return new VectorSearchFunction(options, column, k, columns, filter);
  }

  @Override
  DataType queryType() {
    return DataTypes.ARRAY(DataTypes.FLOAT());
  }

  /** Emits the {@code k} rows nearest to {@code query}; nothing for a null query. */
  public void eval(Float[] query) {
    if (query == null) {
      return;
    }
    float[] vector = new float[query.length];
    for (int i = 0; i < vector.length; i++) {
      if (query[i] == null) {
        throw new IllegalArgumentException("the query vector holds a null at position " + i);
      }
      vector[i] = query[i];
    }
    VectorQuery q = VectorQuery.nearest(column, vector, k).withColumns(columns);
    emit(store().search(filter == null ? q : q.withFilter(filter)));
  }
}
