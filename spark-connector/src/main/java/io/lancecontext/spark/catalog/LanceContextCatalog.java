package io.lancecontext.spark.catalog;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.Warehouse;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.StoreNotFoundException;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.SparkOptions;
import io.lancecontext.spark.SparkSchemas;
import io.lancecontext.spark.SparkTable;
import io.lancecontext.spark.procedures.SearchProcedure;
import io.lancecontext.spark.search.StoreCatalog;
import io.lancecontext.spark.procedures.SnapshotProcedure;
import io.lancecontext.spark.procedures.StoreProcedure;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.ProcedureCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Spark catalog of stores under one directory ({@code spark.sql.catalog.lc = io.lancecontext.spark.catalog.LanceContextCatalog},
 * {@code spark.sql.catalog.lc.warehouse = /data/lc}): namespace {@code db} is directory {@code <warehouse>/db},
 * table {@code db.t} the store at {@code <warehouse>/db/t}. Catalog options other than {@code warehouse}
 * ({@code storage.*}, store defaults) apply to every table; {@code TBLPROPERTIES} are the options a store
 * keeps from its creation ({@link Warehouse#KEPT_OPTIONS}: {@code schema}, {@code shards}, ...) and the
 * {@code vector.*} options of a derived schema, any other is refused by core naming it. A table created
 * without {@code schema} gets one derived from its columns ({@link SparkSchemas#toSpec}). Functions: {@code bucket(shards, key)}. Procedures, in namespace
 * {@code system}: {@code merge}, {@code flush}, {@code compact}, {@code gc}, {@code stats}. Names that would
 * escape the warehouse ({@code ..}, {@code /}) are refused. The warehouse is a local directory or an
 * {@code s3://} URI (with the {@code storage.*} options its stores take); core's {@link Warehouse} keeps the
 * layout, this class maps it to Spark's catalog calls. Creating a table in a namespace that does not exist
 * yet creates the namespace ({@link Warehouse#prepareStore}).
 */
public final class LanceContextCatalog implements TableCatalog, SupportsNamespaces, FunctionCatalog, ProcedureCatalog,
    StoreCatalog {
  public static final String WAREHOUSE = "warehouse";
  private static final String SYSTEM = "system";

  private String name;
  private Warehouse warehouse;
  private Map<String, String> defaults;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    String root = options.get(WAREHOUSE);
    if (root == null || root.isBlank()) {
      throw new BadOptionException(WAREHOUSE, "is required: spark.sql.catalog." + name + ".warehouse = <directory>");
    }
    Map<String, String> d = new LinkedHashMap<>();
    options.asCaseSensitiveMap().forEach((k, v) -> {
      if (!k.equalsIgnoreCase(WAREHOUSE)) {
        d.put(k.toLowerCase(Locale.ROOT), v);
      }
    });
    this.defaults = Map.copyOf(d);
    Map<String, String> core = new LinkedHashMap<>(SparkOptions.toConfig(withPath(d, root)).asMap());
    core.remove(StoreOptions.PATH.key());
    this.warehouse = Warehouse.open(root, core);
  }

  @Override
  public String name() {
    return name;
  }

  // ---------------------------------------------------------------- namespaces

  private static Map<String, String> withPath(Map<String, String> options, String path) {
    Map<String, String> o = new LinkedHashMap<>(options);
    o.put(StoreOptions.PATH.key(), path);
    return o;
  }

  private static List<String> ns(String[] namespace) {
    return List.of(namespace);
  }

  private static String[] child(String[] namespace, String name) {
    String[] out = Arrays.copyOf(namespace, namespace.length + 1);
    out[namespace.length] = name;
    return out;
  }

  @Override
  public String[][] listNamespaces() {
    return warehouse.namespaces(List.of()).stream().map(n -> new String[] {n}).toArray(String[][]::new);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return warehouse.namespaces(ns(namespace)).stream().map(n -> child(namespace, n)).toArray(String[][]::new);
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    return namespace.length > 0 && warehouse.namespaceExists(ns(namespace));
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return Map.of("location", warehouse.root() + "/" + String.join("/", namespace));
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata) throws NamespaceAlreadyExistsException {
    if (!warehouse.createNamespace(ns(namespace))) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw new UnsupportedOperationException("lancecontext namespaces have no properties to alter");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade) throws NoSuchNamespaceException,
      NonEmptyNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    if (!cascade && !warehouse.contents(ns(namespace)).isEmpty()) {
      throw new NonEmptyNamespaceException(namespace);
    }
    return warehouse.dropNamespace(ns(namespace));
  }

  // ---------------------------------------------------------------- tables

  private StoreConfig config(Identifier ident, Map<String, String> properties) {
    Map<String, String> options = new LinkedHashMap<>(defaults);
    options.putAll(properties);
    options.put(StoreOptions.PATH.key(), warehouse.location(ns(ident.namespace()), ident.name()));
    return SparkOptions.toConfig(options);
  }

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return warehouse.stores(ns(namespace)).stream().map(t -> Identifier.of(namespace, t)).toArray(Identifier[]::new);
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    if (!isStore(ident)) {
      throw new NoSuchTableException(ident);
    }
    StoreConfig config = config(ident, Map.of());
    try (ContextStore store = ContextStore.open(config)) {
      return new SparkTable(config, store.spec(), store.shards(), true);
    } catch (StoreNotFoundException e) {
      throw new NoSuchTableException(ident);
    }
  }

  /** {@code SELECT ... FROM t VERSION AS OF '<token or tag>'}: the table as it was when that snapshot was taken. */
  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    return ((SparkTable) loadTable(ident)).atSnapshot(version);
  }

  @Override
  public Table createTable(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    if (isStore(ident)) {
      throw new TableAlreadyExistsException(ident);
    }
    if (ident.namespace().length == 0) {
      throw new NoSuchNamespaceException(ident.namespace());
    }
    if (partitions.length > 0) {
      throw new UnsupportedOperationException("a lancecontext table is bucketed by its key; PARTITIONED BY is not "
          + "supported");
    }
    Map<String, String> options = storeProperties(properties);
    if (!options.containsKey(StoreOptions.SCHEMA.key())) {
      StructType struct = new StructType();
      for (Column c : columns) {
        struct = struct.add(c.name(), c.dataType(), c.nullable());
      }
      options.put(StoreOptions.SCHEMA.key(), SparkSchemas.toSpec(struct, properties).toJson());
    }
    options.keySet().removeIf(io.lancecontext.core.schema.ColumnOptions::isColumnOption);
    warehouse.prepareStore(ns(ident.namespace()), ident.name(), options);
    StoreConfig config = config(ident, options);
    try (ContextStore store = ContextStore.open(config)) {
      return new SparkTable(config, store.spec(), store.shards(), true, written(store.spec(), columns));
    }
  }

  /**
   * The columns of the table {@link #createTable} returns, which a create-table-as-select writes by position:
   * the query's columns when they are some of the store's, with its key (a query with fewer columns than a
   * preset leaves the others null, as a DataFrame write does); otherwise all the store's columns.
   */
  private static List<String> written(SchemaSpec spec, Column[] columns) {
    List<String> names = Arrays.stream(columns).map(Column::name).toList();
    boolean subset = !names.isEmpty() && names.contains(spec.key()) && names.stream().allMatch(n -> spec.column(n) != null);
    return subset ? names : spec.columnNames();
  }

  /** The table properties that are store options: Spark's own ({@code provider}, {@code owner}, ...) removed. */
  private static Map<String, String> storeProperties(Map<String, String> properties) {
    Map<String, String> out = new LinkedHashMap<>();
    properties.forEach((k, v) -> {
      String key = k.startsWith(TableCatalog.OPTION_PREFIX) ? k.substring(TableCatalog.OPTION_PREFIX.length()) : k;
      if (!List.of(TableCatalog.PROP_PROVIDER, TableCatalog.PROP_OWNER, TableCatalog.PROP_COMMENT,
          TableCatalog.PROP_LOCATION, TableCatalog.PROP_EXTERNAL, TableCatalog.PROP_IS_MANAGED_LOCATION,
          TableCatalog.PROP_TABLE_TYPE, TableCatalog.PROP_COLLATION).contains(key)) {
        out.put(key.toLowerCase(Locale.ROOT), v);
      }
    });
    return out;
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw new UnsupportedOperationException("altering a lancecontext table is not supported: its schema is fixed "
        + "when the store is created");
  }

  /**
   * Deletes the table's store ({@link Warehouse#dropStore}): closed in this JVM, other tables stay open; stop
   * other jobs writing it first.
   */
  @Override
  public boolean dropTable(Identifier ident) {
    return warehouse.dropStore(ns(ident.namespace()), ident.name());
  }

  /**
   * {@code DROP TABLE ... PURGE}: the same as {@link #dropTable}, which already deletes every object of the
   * store (a warehouse keeps no trash to skip).
   */
  @Override
  public boolean purgeTable(Identifier ident) {
    return dropTable(ident);
  }

  private boolean isStore(Identifier ident) {
    return warehouse.storeExists(ns(ident.namespace()), ident.name());
  }

  @Override
  public void renameTable(Identifier from, Identifier to) {
    throw new UnsupportedOperationException("renaming a lancecontext table is not supported");
  }

  // ---------------------------------------------------------------- functions and procedures

  @Override
  public Identifier[] listFunctions(String[] namespace) {
    return new Identifier[] {Identifier.of(new String[] {SYSTEM}, BucketFunction.NAME),
        Identifier.of(new String[] {SYSTEM}, BucketTaskFunction.NAME)};
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    boolean system = ident.namespace().length == 0 || Arrays.equals(ident.namespace(), new String[] {SYSTEM});
    if (system && ident.name().equals(BucketFunction.NAME)) {
      return new BucketFunction();
    } else if (system && ident.name().equals(BucketTaskFunction.NAME)) {
      return new BucketTaskFunction();
    }
    throw new NoSuchFunctionException(ident);
  }

  @Override
  public UnboundProcedure loadProcedure(Identifier ident) {
    UnboundProcedure p = null;
    if (Arrays.equals(ident.namespace(), new String[] {SYSTEM})) {
      p = StoreProcedure.named(ident.name(), this::openTable);
      if (p == null) {
        p = SnapshotProcedure.named(ident.name(), this::openTable);
      }
      if (p == null) {
        p = SearchProcedure.named(ident.name(), this::openTable);
      }
    }
    if (p == null) {
      throw new IllegalArgumentException("no procedure " + ident + " in catalog " + name + "; its procedures are "
          + SYSTEM + "." + String.join(", " + SYSTEM + ".", procedures()));
    }
    return p;
  }

  private static List<String> procedures() {
    List<String> names = new ArrayList<>(StoreProcedure.NAMES);
    names.addAll(SnapshotProcedure.NAMES);
    names.addAll(SearchProcedure.NAMES);
    return names;
  }

  @Override
  public Identifier[] listProcedures(String[] namespace) {
    List<Identifier> out = new ArrayList<>();
    for (String n : procedures()) {
      out.add(Identifier.of(new String[] {SYSTEM}, n));
    }
    return out.toArray(new Identifier[0]);
  }

  /** Opens table {@code db.t} (or {@code t} in no namespace) of this catalog. */
  /** What the catalog's procedures and the {@code vector_search} table function open. */
  @Override
  public ContextStore openTable(String table) {
    String[] parts = table.split("\\.");
    Identifier ident = Identifier.of(Arrays.copyOf(parts, parts.length - 1), parts[parts.length - 1]);
    if (!isStore(ident)) {
      throw new IllegalArgumentException("no table " + table + " in catalog " + name);
    }
    return ContextStore.open(config(ident, Map.of()));
  }
}
