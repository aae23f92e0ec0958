package io.lancecontext.spark.procedures;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.spark.search.SparkSearch;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;

/**
 * {@code vector_search(table, column, vector, k)}: the k rows of the table nearest to {@code vector} in vector
 * column {@code column}, nearest first, with their {@code _distance}; {@code text_search(table, column, text, k)}: the
 * k rows whose string column {@code column} best matches the terms of {@code text}, best first, with their
 * {@code _score} (core's {@code ContextStore.search}: rows added a moment ago included, deleted and replaced rows
 * never).
 */
public final class SearchProcedure extends TableProcedure {
  public static final List<String> NAMES = List.of("vector_search", "text_search");

  private SearchProcedure(String name, Stores stores) {
    super(name, stores);
  }

  /** The procedure {@code name}, or null if there is none. */
  public static SearchProcedure named(String name, Stores stores) {
    return NAMES.contains(name) ? new SearchProcedure(name, stores) : null;
  }

  @Override
  public String description() {
    return text() ? "returns the k rows whose string column best matches a text's terms, with their _score"
        : "returns the k rows nearest to a vector in a vector column, with their _distance";
  }

  private boolean text() {
    return name().equals("text_search");
  }

  @Override
  public ProcedureParameter[] parameters() {
    return new ProcedureParameter[] {
        ProcedureParameter.in("table", DataTypes.StringType).build(),
        ProcedureParameter.in("column", DataTypes.StringType).build(),
        text() ? ProcedureParameter.in("text", DataTypes.StringType).build()
            : ProcedureParameter.in("vector", DataTypes.createArrayType(DataTypes.DoubleType)).build(),
        // required: Spark 4.1 fails to bind a call that omits a defaulted parameter while another argument is an
        // expression (the vector, array(...)), with "number of args and params must match after binding"
        ProcedureParameter.in("k", DataTypes.IntegerType).build()};
  }

  @Override
  public Iterator<Scan> call(InternalRow input) {
    String column = argument(input, 1, "column");
    if (input.isNullAt(3)) {
      throw new IllegalArgumentException("procedure " + name() + ": argument 'k' is required");
    }
    int k = input.getInt(3);
    try (ContextStore store = openTable(input)) {
      SparkSearch result = text() ? SparkSearch.run(store, TextQuery.matching(column, argument(input, 2, "text"), k))
          : SparkSearch.run(store, VectorQuery.nearest(column, SparkSearch.vector(input.isNullAt(2) ? null
              : input.getArray(2), DataTypes.createArrayType(DataTypes.DoubleType), "vector"), k));
      return List.<Scan>of(ResultRows.of(result.schema(), result.rows())).iterator();
    }
  }
}
