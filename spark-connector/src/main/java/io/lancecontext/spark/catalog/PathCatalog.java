package io.lancecontext.spark.catalog;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.List;
import io.lancecontext.core.error.StoreNotFoundException;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.spark.SparkOptions;
import io.lancecontext.spark.SparkSchemas;
import io.lancecontext.spark.SparkTable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The catalog behind path-based reads and writes ({@code format("lancecontext").load(p)}, {@code .save(p)}),
 * through which Spark runs every save mode of {@code DataFrameWriter}: {@code Append} and {@code Overwrite}
 * load the table ({@link #loadTable}, which creates a missing store when option {@code schema} is given), and
 * {@code ErrorIfExists} / {@code Ignore} run Spark's create-table-as-select ({@link #createTable}, failing
 * with {@link TableAlreadyExistsException} naming the path, or doing nothing). The data source registers it
 * under {@value #NAME} in the session when it is first used (as Iceberg registers its path catalog). Table
 * names are store locations; there are no namespaces. It also resolves {@code bucket(shards, key)} and {@code bucket_task(tasks, shards, key)}, so
 * path-based writes are clustered by bucket as catalog writes are.
 *
 * <p>Spark rebuilds the identifier of a create-table-as-select from its name, dropping the options the
 * write was given: the data source leaves them here ({@link #remember}, in this JVM's memory only) for
 * {@link #createTable} to find by path.
 */
public final class PathCatalog implements TableCatalog, FunctionCatalog {
  /** The catalog's name in the session ({@code spark.sql.catalog.lancecontext_path}). */
  public static final String NAME = "lancecontext_path";

  private static final Map<String, Map<String, String>> OPTIONS = new ConcurrentHashMap<>();
  private static final Set<String> CREATED = ConcurrentHashMap.newKeySet();

  private String name = NAME;

  /** The identifier of the store a read or write's options name; the options are kept for {@link #createTable}. */
  public static Identifier identifier(CaseInsensitiveStringMap options) {
    Map<String, String> o = options.asCaseSensitiveMap();
    String path = o.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(StoreOptions.PATH.key()))
        .map(Map.Entry::getValue).findFirst()
        .orElseThrow(() -> new BadOptionException("path", "is required: .option(\"path\", p), .load(p) or .save(p)"));
    remember(path, o);
    return new PathIdentifier(path, o);
  }

  /** Registers this catalog in the active session, if it is not yet, and returns its name. */
  public static String register() {
    var conf = SparkSession.active().conf();
    String key = "spark.sql.catalog." + NAME;
    if (!conf.contains(key)) {
      conf.set(key, PathCatalog.class.getName());
    }
    return NAME;
  }

  private static void remember(String path, Map<String, String> options) {
    OPTIONS.put(path, Map.copyOf(options));
  }

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }

  private static Map<String, String> optionsOf(Identifier ident) {
    if (ident instanceof PathIdentifier p) {
      return p.options();
    }
    Map<String, String> o = new LinkedHashMap<>(OPTIONS.getOrDefault(ident.name(), Map.of()));
    o.keySet().removeIf(k -> k.equalsIgnoreCase(StoreOptions.PATH.key()));
    o.put(StoreOptions.PATH.key(), ident.name());
    return o;
  }

  /**
   * The store at the identifier's path. An identifier made by the data source (a read, an append, an
   * overwrite) creates a missing store when its options hold {@code schema}; any other (Spark's check whether
   * a create-table-as-select's table exists) never creates one.
   */
  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    if (ident.namespace().length > 0) {
      throw new NoSuchTableException(ident);
    }
    Map<String, String> options = new LinkedHashMap<>(optionsOf(ident));
    if (!(ident instanceof PathIdentifier)) {
      options.keySet().removeIf(k -> k.equalsIgnoreCase(StoreOptions.SCHEMA.key()));
    }
    StoreConfig config = SparkOptions.toConfig(options);
    try (ContextStore store = ContextStore.open(config)) {
      // options such as vector.<col>.dim describe the store: given again, they must agree with it (core's rule)
      io.lancecontext.core.schema.ColumnOptions.of(options, store.spec().columnNames()).checkAgainst(store.spec());
      return new SparkTable(config, store.spec(), store.shards(), true);
    } catch (StoreNotFoundException e) {
      if (ident instanceof PathIdentifier) {
        throw e;
      }
      throw new NoSuchTableException(ident);
    }
  }

  /**
   * The version a read with option {@code since} and without option {@code snapshot} loads: the store as it is
   * (no tag can have this name, which no token has either).
   */
  public static final String NOW = "-now";

  /**
   * The table at the identifier's path as it was when the snapshot {@code version} (a token or tag) was taken;
   * with option {@code since}, read incrementally up to that snapshot ({@link #NOW}: the store as it is).
   */
  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    SparkTable table = (SparkTable) loadTable(ident);
    java.util.Optional<String> since = SparkOptions.get(optionsOf(ident), SparkOptions.SINCE);
    String at = NOW.equals(version) ? null : version;
    return since.isPresent() ? table.between(since.get(), at) : table.atSnapshot(at);
  }

  /**
   * Creates the store of a create-table-as-select ({@code ErrorIfExists} / {@code Ignore} saves) with the
   * write's options: its schema is option {@code schema}, or derived from the DataFrame's columns
   * ({@link SparkSchemas#toSpec}, with the {@code vector.<col>.*} options).
   */
  @Override
  public Table createTable(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException {
    if (tableExists(ident)) {
      throw new TableAlreadyExistsException(ident);
    }
    if (partitions.length > 0) {
      throw new UnsupportedOperationException("a lancecontext store is bucketed by its key; partitionBy is not supported");
    }
    Map<String, String> options = SparkOptions.lowerCased(optionsOf(ident));
    if (!options.containsKey(StoreOptions.SCHEMA.key())) {
      StructType struct = new StructType();
      for (Column c : columns) {
        struct = struct.add(c.name(), c.dataType(), c.nullable());
      }
      options.put(StoreOptions.SCHEMA.key(), SparkSchemas.toSpec(struct, options).toJson());
    }
    StoreConfig config = SparkOptions.toConfig(options);
    SchemaSpec spec = config.requestedSpec().orElseThrow();
    List<String> written = new ArrayList<>();
    for (Column c : columns) {
      if (spec.column(c.name()) == null) {
        throw new SchemaException(c.name(), "not a column of the store's schema (its columns: " + spec.columnNames() + ")");
      }
      written.add(c.name());
    }
    if (!written.contains(spec.key())) {
      throw new SchemaException(spec.key(), "the key column is missing from the DataFrame");
    }
    try (ContextStore store = ContextStore.open(config)) {
      CREATED.add(ident.name());
      return new SparkTable(config, store.spec(), store.shards(), true, written);
    }
  }

  /**
   * Deletes a store only if this JVM created it here (Spark drops the table of a create-table-as-select whose
   * write failed); any other store is left alone and {@code false} returned.
   */
  @Override
  public boolean dropTable(Identifier ident) {
    if (!CREATED.remove(ident.name())) {
      return false;
    }
    return ContextStore.drop(Map.of(StoreOptions.PATH.key(), ident.name()));
  }

  @Override
  public Identifier[] listTables(String[] namespace) {
    return new Identifier[0];
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw new UnsupportedOperationException("altering a lancecontext store is not supported: its schema is fixed "
        + "when it is created");
  }

  @Override
  public void renameTable(Identifier from, Identifier to) {
    throw new UnsupportedOperationException("renaming a lancecontext store is not supported");
  }

  @Override
  public Identifier[] listFunctions(String[] namespace) {
    return new Identifier[] {Identifier.of(new String[0], BucketFunction.NAME),
        Identifier.of(new String[0], BucketTaskFunction.NAME)};
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    if (ident.name().equals(BucketFunction.NAME)) {
      return new BucketFunction();
    } else if (ident.name().equals(BucketTaskFunction.NAME)) {
      return new BucketTaskFunction();
    }
    throw new NoSuchFunctionException(ident);
  }
}
