package io.lancecontext.spark.search;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.SearchResult;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.spark.SparkSchemas;
import io.lancecontext.spark.read.SparkColumnarReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.read.SparkFilters;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Strategy$;
import scala.Option;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import scala.Function1;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A core search as Spark rows: what the {@code vector_search} and {@code text_search} procedures and table functions
 * return. The store searches (core decides what is visible and how rows rank); this class only converts the query's
 * arguments and the result.
 *
 * @param schema the rows' columns: the store's, then {@code _distance} (vector search) or {@code _score} (text search)
 * @param rows the rows, best first
 */
public record SparkSearch(StructType schema, InternalRow[] rows) {
  /** The distance column. */
  static final String DISTANCE = "_distance";
  /** The score column of a text search. */
  static final String SCORE = "_score";

  /** Runs {@code query} on {@code store}. */
  public static SparkSearch run(ContextStore store, VectorQuery query) {
    try (SearchResult result = store.search(query)) {
      return of(store, result);
    }
  }

  /** Runs {@code query} on {@code store}. */
  public static SparkSearch run(ContextStore store, TextQuery query) {
    try (SearchResult result = store.search(query)) {
      return of(store, result);
    }
  }

  /** Runs the hybrid search of {@code vector} and {@code text} on {@code store}. */
  public static SparkSearch run(ContextStore store, VectorQuery vector, TextQuery text, int k) {
    try (SearchResult result = store.search(vector, text, k)) {
      return of(store, result);
    }
  }

  private static SparkSearch of(ContextStore store, SearchResult result) {
    List<String> columns = result.columns();
    String score = columns.get(columns.size() - 1);
    StructType schema = SparkSchemas.toStruct(store.spec(), columns.subList(0, columns.size() - 1))
        .add(DataTypes.createStructField(score, DataTypes.FloatType, false));
    VectorSchemaRoot root = result.batch();
    ColumnVector[] vectors = new ColumnVector[columns.size()];
    for (int i = 0; i < vectors.length; i++) {
      vectors[i] = SparkColumnarReader.wrap(root.getVector(columns.get(i)));
    }
    InternalRow[] rows = new InternalRow[root.getRowCount()];
    ColumnarBatch batch = new ColumnarBatch(vectors, root.getRowCount());
    for (int r = 0; r < rows.length; r++) {
      rows[r] = batch.getRow(r).copy();
    }
    return new SparkSearch(schema, rows);
  }

  /**
   * For each row of {@code queries}, the {@code k} rows of the store {@code options} open nearest to the row's
   * {@code vectorColumn} (an array of numbers) in the store's vector column {@code column}: the query row's columns,
   * then {@code rank} (1 = nearest) and {@code hit} (the row found: the store's columns and {@code _distance}).
   * Distributed: each partition of {@code queries} is searched in its task, on its executor (the store opened there
   * with {@code options}). For evaluation jobs that run many queries at once.
   */
  public static Dataset<Row> nearestPerQuery(Dataset<Row> queries, String vectorColumn, Map<String, String> options,
      String column, int k) {
    return nearestPerQuery(queries, vectorColumn, options, column, k, null);
  }

  /**
   * {@link #nearestPerQuery(Dataset, String, Map, String, int)} among the rows matching {@code condition}, a Spark
   * SQL condition on the store's columns ({@code "role = 'tool'"}; null for all rows), applied before the {@code k}
   * nearest are cut, as the table function's fifth argument is. A condition the store cannot evaluate fails here,
   * on the driver, naming it.
   */
  public static Dataset<Row> nearestPerQuery(Dataset<Row> queries, String vectorColumn, Map<String, String> options,
      String column, int k, String condition) {
    return perQuery(queries, vectorColumn, options, condition, DISTANCE, (store, query, at, filter) -> {
      List<Object> values = query.getList(at);
      float[] vector = new float[values.size()];
      for (int i = 0; i < vector.length; i++) {
        vector[i] = ((Number) values.get(i)).floatValue();
      }
      VectorQuery q = VectorQuery.nearest(column, vector, k);
      return run(store, filter == null ? q : q.withFilter(filter));
    });
  }

  /** {@link #bestMatchesPerQuery(Dataset, String, Map, String, int, String)} over every row of the store. */
  public static Dataset<Row> bestMatchesPerQuery(Dataset<Row> queries, String textColumn, Map<String, String> options,
      String column, int k) {
    return bestMatchesPerQuery(queries, textColumn, options, column, k, null);
  }

  /**
   * For each row of {@code queries}, the {@code k} rows of the store {@code options} open whose string column
   * {@code column} best matches the row's {@code textColumn} (a string): the query row's columns, then {@code rank}
   * (1 = best) and {@code hit} (the row found: the store's columns and {@code _score}). A query row whose text is null
   * or holds no term finds nothing. Distributed as {@link #nearestPerQuery(Dataset, String, Map, String, int)} is;
   * {@code condition} (null for all rows) chooses the rows searched, as its does.
   */
  public static Dataset<Row> bestMatchesPerQuery(Dataset<Row> queries, String textColumn, Map<String, String> options,
      String column, int k, String condition) {
    return perQuery(queries, textColumn, options, condition, SCORE, (store, query, at, filter) -> {
      TextQuery q = TextQuery.matching(column, query.getString(at), k);
      return run(store, filter == null ? q : q.withFilter(filter));
    });
  }

  /** One search of the store per query row (its value at {@code at} is not null), in the query's task. */
  private interface PerRow extends java.io.Serializable {
    SparkSearch search(ContextStore store, Row query, int at, Predicate filter);
  }

  private static Dataset<Row> perQuery(Dataset<Row> queries, String queryColumn, Map<String, String> options,
      String condition, String scoreColumn, PerRow search) {
    int queryAt = queries.schema().fieldIndex(queryColumn);
    StructType hit;
    Predicate filter;
    try (ContextStore store = ContextStore.open(options)) {
      hit = SparkSchemas.toStruct(store.spec()).add(DataTypes.createStructField(scoreColumn, DataTypes.FloatType, false));
      filter = condition == null ? null : filter(condition, store.spec());
    }
    StructType out = queries.schema().add(DataTypes.createStructField("rank", DataTypes.IntegerType, false))
        .add(DataTypes.createStructField("hit", hit, false));
    Map<String, String> storeOptions = new HashMap<>(options);
    return queries.mapPartitions((MapPartitionsFunction<Row, Row>) rows -> {
      List<Row> found = new ArrayList<>();
      Function1<Object, Object> toRow = CatalystTypeConverters.createToScalaConverter(hit);
      try (ContextStore store = ContextStore.open(storeOptions)) {
        while (rows.hasNext()) {
          Row query = rows.next();
          if (query.isNullAt(queryAt)) {
            continue;  // nothing to search for
          }
          SparkSearch result = search.search(store, query, queryAt, filter);
          for (int r = 0; r < result.rows().length; r++) {
            Object[] row = new Object[query.length() + 2];
            for (int i = 0; i < query.length(); i++) {
              row[i] = query.get(i);
            }
            row[query.length()] = r + 1;
            row[query.length() + 1] = toRow.apply(result.rows()[r]);
            found.add(RowFactory.create(row));
          }
        }
      }
      return found.iterator();
    }, Encoders.row(out));
  }

  /**
   * The store predicate of a Spark SQL condition over the store's columns ({@code "role = 'tool' AND
   * token_count > 5"}): resolved by Spark against the store's schema, then translated as a scan's pushed filters are.
   *
   * @throws IllegalArgumentException if the store cannot evaluate it (it names what)
   */
  public static Predicate filter(String sql, SchemaSpec spec) {
    Dataset<Row> none = SparkSession.active().createDataFrame(List.of(), SparkSchemas.toStruct(spec));
    LogicalPlan plan = none.filter(sql).queryExecution().analyzed();
    if (!(plan instanceof Filter f)) {
      throw new IllegalArgumentException("filter '" + sql + "' is not a condition on the table's columns");
    }
    Option<org.apache.spark.sql.connector.expressions.filter.Predicate> v2 =
        DataSourceV2Strategy$.MODULE$.translateFilterV2(f.condition());
    Optional<Predicate> p = v2.isEmpty() ? Optional.empty() : SparkFilters.translate(v2.get(), spec);
    return p.orElseThrow(() -> new IllegalArgumentException("filter '" + sql + "' cannot be evaluated by the store: "
        + "use comparisons, IN, IS NULL, STARTS WITH, AND, OR and NOT on its columns"));
  }

  /** A query vector from a Spark array of numbers (floats, doubles, decimals or integers); names the argument. */
  public static float[] vector(ArrayData array, DataType type, String argument) {
    if (array == null) {
      throw new IllegalArgumentException("argument '" + argument + "' is required: an array of numbers");
    }
    if (!(type instanceof ArrayType at)) {
      throw new IllegalArgumentException("argument '" + argument + "' must be an array of numbers, not " + type.simpleString());
    }
    float[] out = new float[array.numElements()];
    for (int i = 0; i < out.length; i++) {
      if (array.isNullAt(i)) {
        throw new IllegalArgumentException("argument '" + argument + "' holds a null at position " + i);
      }
      Object v = array.get(i, at.elementType());
      if (v instanceof Number n) {
        out[i] = n.floatValue();
      } else if (v instanceof Decimal d) {
        out[i] = d.toFloat();
      } else {
        throw new IllegalArgumentException("argument '" + argument + "' must be an array of numbers, not "
            + type.simpleString());
      }
    }
    return out;
  }
}
