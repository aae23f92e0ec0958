package io.lancecontext.spark.search;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.read.VectorQuery;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Spark SQL extensions of lancecontext ({@code spark.sql.extensions=io.lancecontext.spark.search.LanceContextExtensions}):
 * the table functions {@code vector_search(table, column, vector[, k[, filter]])},
 * {@code text_search(table, column, text[, k[, filter]])} and
 * {@code hybrid_search(table, vector_column, vector, text_column, text[, k[, filter]])} ({@code filter}: a SQL
 * condition on the table's columns, applied before the k best are chosen), usable wherever a table is
 * ({@code SELECT ... FROM vector_search('lc.db.ctx', 'embedding', array(...), 10) JOIN ...}). {@code table} is a
 * table of a lancecontext catalog ({@code catalog.namespace.name}; without a catalog, the current one) or a store's
 * path. The search runs when the query is analysed, on the driver, like the procedures of the same names.
 */
public final class LanceContextExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  public static final String VECTOR_SEARCH = "vector_search";
  public static final String TEXT_SEARCH = "text_search";
  public static final String HYBRID_SEARCH = "hybrid_search";

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    for (String name : List.of(VECTOR_SEARCH, TEXT_SEARCH, HYBRID_SEARCH)) {
      extensions.injectTableFunction(new Tuple3<>(FunctionIdentifier.apply(name),
          new ExpressionInfo(LanceContextExtensions.class.getName(), null, name),
          new AbstractFunction1<Seq<Expression>, LogicalPlan>() {
            @Override
            public LogicalPlan apply(Seq<Expression> arguments) {
              return search(name, CollectionConverters.asJava(arguments));
            }
          }));
    }
    return BoxedUnit.UNIT;
  }

  static LogicalPlan search(String function, List<Expression> args) {
    SparkSearch result = function.equals(HYBRID_SEARCH) ? hybrid(args) : single(function, args);
    List<Attribute> output = new ArrayList<>(CollectionConverters.asJava(DataTypeUtils.toAttributes(result.schema())));
    Seq<Attribute> attributes = CollectionConverters.asScala(output).toList();
    Seq<InternalRow> rows = CollectionConverters.asScala(Arrays.asList(result.rows())).toList();
    return new LocalRelation(attributes, rows, false, Option.empty());
  }

  /** {@code hybrid_search(table, vector_column, vector, text_column, text[, k[, filter]])}. */
  private static SparkSearch hybrid(List<Expression> args) {
    String function = HYBRID_SEARCH;
    if (args.size() < 5 || args.size() > 7) {
      throw new IllegalArgumentException(function + " takes (table, vector_column, vector, text_column, text[, k[, "
          + "filter]]), not " + args.size() + " arguments");
    }
    String table = string(function, args.get(0), "table");
    float[] vector = SparkSearch.vector((ArrayData) constant(function, args.get(2), "vector"), args.get(2).dataType(),
        "vector");
    int k = args.size() >= 6 ? k(function, args.get(5)) : 10;
    String filter = args.size() == 7 ? string(function, args.get(6), "filter") : null;
    try (ContextStore store = open(function, table)) {
      Predicate where = filter == null ? null : SparkSearch.filter(filter, store.spec());
      return SparkSearch.run(store,
          VectorQuery.nearest(string(function, args.get(1), "vector_column"), vector, k).withFilter(where),
          TextQuery.matching(string(function, args.get(3), "text_column"), string(function, args.get(4), "text"), k)
              .withFilter(where), k);
    }
  }

  private static int k(String function, Expression e) {
    Object v = constant(function, e, "k");
    if (!(v instanceof Integer i)) {
      throw new IllegalArgumentException(function + ": argument 'k' must be an integer");
    }
    return i;
  }

  private static SparkSearch single(String function, List<Expression> args) {
    boolean text = function.equals(TEXT_SEARCH);
    String query = text ? "text" : "vector";
    if (args.size() < 3 || args.size() > 5) {
      throw new IllegalArgumentException(function + " takes (table, column, " + query + "[, k[, filter]]), not "
          + args.size() + " arguments");
    }
    String table = string(function, args.get(0), "table");
    String column = string(function, args.get(1), "column");
    int k = args.size() >= 4 ? k(function, args.get(3)) : 10;
    String filter = args.size() == 5 ? string(function, args.get(4), "filter") : null;
    SparkSearch result;
    try (ContextStore store = open(function, table)) {
      Predicate where = filter == null ? null : SparkSearch.filter(filter, store.spec());
      if (text) {
        result = SparkSearch.run(store, TextQuery.matching(column, string(function, args.get(2), "text"), k)
            .withFilter(where));
      } else {
        float[] vector = SparkSearch.vector((ArrayData) constant(function, args.get(2), "vector"),
            args.get(2).dataType(), "vector");
        result = SparkSearch.run(store, VectorQuery.nearest(column, vector, k).withFilter(where));
      }
    }
    return result;
  }

  /** The store of {@code table}: a path, or a table of a lancecontext catalog. */
  static ContextStore open(String function, String table) {
    if (table.contains("/") || table.contains(":")) {
      return ContextStore.open(Map.of("path", table));
    }
    SparkSession spark = SparkSession.active();
    var catalogs = spark.sessionState().catalogManager();
    String[] parts = table.split("\\.");
    CatalogPlugin catalog;
    String rest = table;
    if (parts.length > 1 && catalogs.isCatalogRegistered(parts[0])) {
      catalog = catalogs.catalog(parts[0]);
      rest = table.substring(parts[0].length() + 1);
    } else {
      catalog = catalogs.currentCatalog();
    }
    if (!(catalog instanceof StoreCatalog lc)) {
      throw new IllegalArgumentException(function + ": '" + table + "' is not a table of a lancecontext catalog "
          + "(catalog '" + catalog.name() + "' is a " + catalog.getClass().getSimpleName() + ") nor a store's path");
    }
    return lc.openTable(rest);
  }

  private static String string(String function, Expression e, String argument) {
    Object v = constant(function, e, argument);
    if (!(v instanceof UTF8String s)) {
      throw new IllegalArgumentException(function + ": argument '" + argument + "' must be a string");
    }
    return s.toString();
  }

  private static Object constant(String function, Expression e, String argument) {
    if (!e.foldable()) {
      throw new IllegalArgumentException(function + ": argument '" + argument + "' must be a constant");
    }
    return e.eval(null);
  }
}
