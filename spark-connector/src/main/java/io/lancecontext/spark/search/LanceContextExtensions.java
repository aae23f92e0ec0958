package io.lancecontext.spark.search;

import io.lancecontext.core.ContextStore;
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
 * the table function {@code vector_search(table, column, vector[, k[, filter]])} ({@code filter}: a SQL condition on
 * the table's columns, applied before the k nearest are chosen), usable wherever a table is
 * ({@code SELECT ... FROM vector_search('lc.db.ctx', 'embedding', array(...), 10) JOIN ...}). {@code table} is a
 * table of a lancecontext catalog ({@code catalog.namespace.name}; without a catalog, the current one) or a store's
 * path. The search runs when the query is analysed, on the driver, like the {@code vector_search} procedure.
 */
public final class LanceContextExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  public static final String VECTOR_SEARCH = "vector_search";

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectTableFunction(new Tuple3<>(FunctionIdentifier.apply(VECTOR_SEARCH),
        new ExpressionInfo(LanceContextExtensions.class.getName(), null, VECTOR_SEARCH),
        new AbstractFunction1<Seq<Expression>, LogicalPlan>() {
          @Override
          public LogicalPlan apply(Seq<Expression> arguments) {
            return vectorSearch(CollectionConverters.asJava(arguments));
          }
        }));
    return BoxedUnit.UNIT;
  }

  static LogicalPlan vectorSearch(List<Expression> args) {
    if (args.size() < 3 || args.size() > 5) {
      throw new IllegalArgumentException(VECTOR_SEARCH + " takes (table, column, vector[, k[, filter]]), not "
          + args.size() + " arguments");
    }
    String table = string(args.get(0), "table");
    String column = string(args.get(1), "column");
    float[] vector = SparkSearch.vector((ArrayData) constant(args.get(2), "vector"), args.get(2).dataType(), "vector");
    int k = 10;
    if (args.size() >= 4) {
      Object v = constant(args.get(3), "k");
      if (!(v instanceof Integer i)) {
        throw new IllegalArgumentException(VECTOR_SEARCH + ": argument 'k' must be an integer");
      }
      k = i;
    }
    String filter = args.size() == 5 ? string(args.get(4), "filter") : null;
    SparkSearch result;
    try (ContextStore store = open(table)) {
      VectorQuery query = VectorQuery.nearest(column, vector, k);
      if (filter != null) {
        query = query.withFilter(SparkSearch.filter(filter, store.spec()));
      }
      result = SparkSearch.run(store, query);
    }
    List<Attribute> output = new ArrayList<>(CollectionConverters.asJava(DataTypeUtils.toAttributes(result.schema())));
    Seq<Attribute> attributes = CollectionConverters.asScala(output).toList();
    Seq<InternalRow> rows = CollectionConverters.asScala(Arrays.asList(result.rows())).toList();
    return new LocalRelation(attributes, rows, false, Option.empty());
  }

  /** The store of {@code table}: a path, or a table of a lancecontext catalog. */
  static ContextStore open(String table) {
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
      throw new IllegalArgumentException(VECTOR_SEARCH + ": '" + table + "' is not a table of a lancecontext catalog "
          + "(catalog '" + catalog.name() + "' is a " + catalog.getClass().getSimpleName() + ") nor a store's path");
    }
    return lc.openTable(rest);
  }

  private static String string(Expression e, String argument) {
    Object v = constant(e, argument);
    if (!(v instanceof UTF8String s)) {
      throw new IllegalArgumentException(VECTOR_SEARCH + ": argument '" + argument + "' must be a string");
    }
    return s.toString();
  }

  private static Object constant(Expression e, String argument) {
    if (!e.foldable()) {
      throw new IllegalArgumentException(VECTOR_SEARCH + ": argument '" + argument + "' must be a constant");
    }
    return e.eval(null);
  }
}
