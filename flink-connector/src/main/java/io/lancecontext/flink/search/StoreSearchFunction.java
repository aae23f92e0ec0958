package io.lancecontext.flink.search;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.SearchResult;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.ColumnSpec;
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
 * What the search table functions share: the store they open per task, the columns they emit (the chosen ones, then
 * the search's score column), their prefilter, and turning a {@link SearchResult} into Flink rows. Core's
 * {@code ContextStore.search} decides what is found.
 */
abstract class StoreSearchFunction extends TableFunction<RowData> {
  private static final long serialVersionUID = 1L;

  final Map<String, String> options;
  final String column;
  final int k;
  final List<String> columns;
  final Predicate filter;
  private final String specJson;
  private final String scoreColumn;
  private transient ContextStore store;
  private transient RowType rowType;

  /** What a search column must be, and the error naming it when it is not. */
  interface ColumnCheck {
    boolean accepts(ColumnSpec column);
  }

  /**
   * Opens the store once to learn its columns; an unknown {@code column}, or one {@code check} refuses, fails here
   * with {@code expected} in the message.
   */
  StoreSearchFunction(Map<String, String> options, String column, int k, List<String> columns, Predicate filter,
      String scoreColumn, ColumnCheck check, String expected) {
    this.options = Map.copyOf(options);
    this.column = column;
    this.k = k;
    this.filter = filter;
    this.scoreColumn = scoreColumn;
    SchemaSpec spec;
    try (ContextStore s = ContextStore.open(options)) {
      spec = s.spec();
    }
    if (spec.column(column) == null || !check.accepts(spec.column(column))) {
      throw new SchemaException(column, "is not " + expected + " of the store at " + options.get("path"));
    }
    this.columns = columns == null ? spec.columnNames() : List.copyOf(columns);
    this.specJson = spec.toJson();
  }

  /** The type of the one argument {@code eval} takes. */
  abstract DataType queryType();

  /** The rows this function emits: the chosen columns, then the score column. */
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
    fields.add(DataTypes.FIELD(scoreColumn, DataTypes.FLOAT().notNull()));
    return DataTypes.ROW(fields).notNull();
  }

  @Override
  public TypeInference getTypeInference(DataTypeFactory typeFactory) {
    DataType out = outputType().bridgedTo(RowData.class);
    return TypeInference.newBuilder()
        .typedArguments(queryType())
        .outputTypeStrategy(call -> Optional.of(out))
        .build();
  }

  @Override
  public void open(FunctionContext context) {
    store = ContextStore.open(options);
    rowType = (RowType) outputType().getLogicalType();
  }

  ContextStore store() {
    return store;
  }

  /** Emits the result's rows in its order, and closes it. */
  void emit(SearchResult result) {
    try (result) {
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
