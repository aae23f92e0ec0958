package io.lancecontext.spark.catalog;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.StoreNotFoundException;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.spark.SparkOptions;
import io.lancecontext.spark.SparkSchemas;
import io.lancecontext.spark.SparkTable;
import io.lancecontext.spark.procedures.StoreProcedure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
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
 * ({@code storage.*}, store defaults) apply to every table; {@code TBLPROPERTIES} are store options too
 * ({@code schema}, {@code shards}, ...). A table created without {@code schema} gets one derived from its
 * columns ({@link SparkSchemas#toSpec}). Functions: {@code bucket(shards, key)}. Procedures, in namespace
 * {@code system}: {@code merge}, {@code flush}, {@code compact}, {@code gc}, {@code stats}. Names that would
 * escape the warehouse ({@code ..}, {@code /}) are refused. Local file systems only for now.
 */
public final class LanceContextCatalog implements TableCatalog, SupportsNamespaces, FunctionCatalog, ProcedureCatalog {
  public static final String WAREHOUSE = "warehouse";
  private static final String SYSTEM = "system";

  private String name;
  private Path warehouse;
  private Map<String, String> defaults;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    String root = options.get(WAREHOUSE);
    if (root == null || root.isBlank()) {
      throw new BadOptionException(WAREHOUSE, "is required: spark.sql.catalog." + name + ".warehouse = <directory>");
    }
    this.warehouse = Path.of(root);
    Map<String, String> d = new LinkedHashMap<>();
    options.asCaseSensitiveMap().forEach((k, v) -> {
      if (!k.equalsIgnoreCase(WAREHOUSE)) {
        d.put(k.toLowerCase(Locale.ROOT), v);
      }
    });
    this.defaults = Map.copyOf(d);
  }

  @Override
  public String name() {
    return name;
  }

  // ---------------------------------------------------------------- namespaces

  private Path dir(String[] namespace) {
    Path p = warehouse;
    for (String part : namespace) {
      p = p.resolve(checkName(part));
    }
    return p;
  }

  /**
   * A namespace or table name is one directory name: {@code ..}, {@code .}, an empty name and names with a
   * path separator would escape (or alias) the warehouse and are refused.
   *
   * @throws IllegalArgumentException naming the name
   */
  private static String checkName(String part) {
    if (part.isEmpty() || part.equals(".") || part.equals("..") || part.contains("/") || part.contains("\\")
        || part.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("name '" + part + "' is not allowed in a lancecontext catalog: a namespace or "
          + "table name is one directory of the warehouse (no '/', '\\', '.' or '..')");
    }
    return part;
  }

  private static boolean isStore(Path dir) {
    return Files.isDirectory(dir.resolve("_versions"));
  }

  private List<Path> children(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(Files::isDirectory).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String[][] listNamespaces() {
    return children(warehouse).stream().filter(p -> !isStore(p))
        .map(p -> new String[] {p.getFileName().toString()}).toArray(String[][]::new);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return children(dir(namespace)).stream().filter(p -> !isStore(p)).map(p -> {
      String[] ns = Arrays.copyOf(namespace, namespace.length + 1);
      ns[namespace.length] = p.getFileName().toString();
      return ns;
    }).toArray(String[][]::new);
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    Path d = dir(namespace);
    return namespace.length > 0 && Files.isDirectory(d) && !isStore(d);
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return Map.of("location", dir(namespace).toString());
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata) throws NamespaceAlreadyExistsException {
    if (namespaceExists(namespace)) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
    try {
      Files.createDirectories(dir(namespace));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
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
    if (!children(dir(namespace)).isEmpty() && !cascade) {
      throw new NonEmptyNamespaceException(namespace);
    }
    deleteTree(dir(namespace));
    return true;
  }

  // ---------------------------------------------------------------- tables

  private Path location(Identifier ident) {
    return dir(ident.namespace()).resolve(checkName(ident.name()));
  }

  private StoreConfig config(Identifier ident, Map<String, String> properties) {
    Map<String, String> options = new LinkedHashMap<>(defaults);
    options.putAll(properties);
    options.put(StoreOptions.PATH.key(), location(ident).toString());
    return SparkOptions.toConfig(options);
  }

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return children(dir(namespace)).stream().filter(LanceContextCatalog::isStore)
        .map(p -> Identifier.of(namespace, p.getFileName().toString())).toArray(Identifier[]::new);
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    if (!isStore(location(ident))) {
      throw new NoSuchTableException(ident);
    }
    StoreConfig config = config(ident, Map.of());
    try (ContextStore store = ContextStore.open(config)) {
      return new SparkTable(config, store.spec(), store.shards(), true);
    } catch (StoreNotFoundException e) {
      throw new NoSuchTableException(ident);
    }
  }

  @Override
  public Table createTable(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    if (isStore(location(ident))) {
      throw new TableAlreadyExistsException(ident);
    }
    if (!namespaceExists(ident.namespace())) {
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
    options.keySet().removeIf(k -> k.startsWith("vector."));
    StoreConfig config = config(ident, options);
    try (ContextStore store = ContextStore.open(config)) {
      return new SparkTable(config, store.spec(), store.shards(), true);
    }
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

  /** Deletes the table's store. Close writers of it first: this JVM's resident stores are closed. */
  @Override
  public boolean dropTable(Identifier ident) {
    Path location = location(ident);
    if (!isStore(location)) {
      return false;
    }
    ContextStore.closeAllResident();
    deleteTree(location);
    return true;
  }

  @Override
  public void renameTable(Identifier from, Identifier to) {
    throw new UnsupportedOperationException("renaming a lancecontext table is not supported");
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---------------------------------------------------------------- functions and procedures

  @Override
  public Identifier[] listFunctions(String[] namespace) {
    return new Identifier[] {Identifier.of(new String[] {SYSTEM}, BucketFunction.NAME)};
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    boolean system = ident.namespace().length == 0 || Arrays.equals(ident.namespace(), new String[] {SYSTEM});
    if (system && ident.name().equals(BucketFunction.NAME)) {
      return new BucketFunction();
    }
    throw new NoSuchFunctionException(ident);
  }

  @Override
  public UnboundProcedure loadProcedure(Identifier ident) {
    StoreProcedure p = Arrays.equals(ident.namespace(), new String[] {SYSTEM})
        ? StoreProcedure.named(ident.name(), this::openTable) : null;
    if (p == null) {
      throw new IllegalArgumentException("no procedure " + ident + " in catalog " + name + "; its procedures are "
          + SYSTEM + "." + String.join(", " + SYSTEM + ".", StoreProcedure.NAMES));
    }
    return p;
  }

  @Override
  public Identifier[] listProcedures(String[] namespace) {
    List<Identifier> out = new ArrayList<>();
    for (String n : StoreProcedure.NAMES) {
      out.add(Identifier.of(new String[] {SYSTEM}, n));
    }
    return out.toArray(new Identifier[0]);
  }

  /** Opens table {@code db.t} (or {@code t} in no namespace) of this catalog. */
  private ContextStore openTable(String table) {
    String[] parts = table.split("\\.");
    Identifier ident = Identifier.of(Arrays.copyOf(parts, parts.length - 1), parts[parts.length - 1]);
    if (!isStore(location(ident))) {
      throw new IllegalArgumentException("no table " + table + " in catalog " + name);
    }
    return ContextStore.open(config(ident, Map.of()));
  }
}
