package io.lancecontext.flink.search;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.SearchResult;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.flink.FlinkSchemas;
import io.lancecontext.flink.RecordRows;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.TableFunction;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.logical.RowType;

/**
 * A Flink SQL table function that enriches each row of a stream or table with the {@code k} rows of a store
 * nearest to one of its vectors: {@code LATERAL TABLE(lc_vector_search(q.embedding))} emits, per input row, the
 * store's rows (the chosen columns) and their {@code _distance}, nearest first. Core's
 * {@code ContextStore.search} decides what is found: every add acknowledged before the call, the newest row of a
 * key only, no deleted row. Register one per store and column:
 * {@code tableEnv.createTemporarySystemFunction("lc_vector_search", new VectorSearchFunction(options, "embedding", 10))}
 * (not {@code vector_search}: Flink's built-in function of that name wins).
 */
public final class VectorSearchFunction extends TableFunction<RowData> {
  private static final long serialVersionUID = 1L;
  static final String DISTANCE = "_distance";

  private final Map<String, String> options;
  private final String column;
  private final int k;
  private final List<String> columns;
  private final String specJson;
  private final Predicate filter;
  private transient ContextStore store;
  private transient RowType rowType;

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
    this.options = Map.copyOf(options);
    this.column = column;
    this.k = k;
    this.filter = filter;
    SchemaSpec spec;
    try (ContextStore s = ContextStore.open(options)) {
      spec = s.spec();
    }
    if (spec.column(column) == null || spec.column(column).type() != ColumnType.VECTOR) {
      throw new SchemaException(column, "is not a vector column of the store at " + options.get("path"));
    }
    this.columns = columns == null ? spec.columnNames() : List.copyOf(columns);
    this.specJson = spec.toJson();
  }

  /**
   * This search restricted to the rows matching {@code filter} (a prefilter: the {@code k} nearest matching rows come
   * back whenever {@code k} exist); its columns must be columns of the store.
   */
  public VectorSearchFunction withFilter(Predicate filter) {
    return new VectorSearchFunction(options, column, k, columns, filter);
  }

  /** The rows this function emits: the chosen columns, then {@code _distance}. */
  DataType outputType() {
    DataType all = FlinkSchemas.toDataType(SchemaSpec.fromJson(specJson));
    List<String> names = ((RowType) all.getLogicalType()).getFieldNames();
    List<DataTypes.Field> fields = new ArrayList<>();
    for (String c : columns) {
      int at = names.indexOf(c);
      if (at < 0) {
        throw new SchemaException(c, "is not a column of the store at " + options.get("path"));
      }
      fields.add(DataTypes.FIELD(c, all.getChildren().get(at)));
    }
    fields.add(DataTypes.FIELD(DISTANCE, DataTypes.FLOAT().notNull()));
    return DataTypes.ROW(fields).notNull();
  }

  @Override
  public TypeInference getTypeInference(DataTypeFactory typeFactory) {
    DataType out = outputType().bridgedTo(RowData.class);
    return TypeInference.newBuilder()
        .typedArguments(DataTypes.ARRAY(DataTypes.FLOAT()))
        .outputTypeStrategy(call -> Optional.of(out))
        .build();
  }

  @Override
  public void open(FunctionContext context) {
    store = ContextStore.open(options);
    rowType = (RowType) outputType().getLogicalType();
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
    try (SearchResult result = store.search(filter == null ? q : q.withFilter(filter))) {
      for (Map<String, Object> row : result.records()) {
        collect(RecordRows.toRow(row, rowType));
      }
    }
  }

  @Override
  public void close() {
    if (store != null) {
      store.close();
    }
  }
}
