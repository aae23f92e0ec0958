package io.lancecontext.core;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.store.StoreRegistry;
import io.lancecontext.core.options.ConfigOption;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores kept under one root, in namespaces: what an engine's catalog lists, creates and drops. Namespace
 * {@code [db]} is the folder {@code <root>/db} (nested namespaces are nested folders), store {@code t} of it
 * the store at {@code <root>/db/t}. The root is a local path or an {@code s3://} URI, opened with the same
 * {@code storage.*} options as its stores, so a catalog works wherever its stores do.
 *
 * <p>A folder is a store when it holds a Lance table ({@code _versions/}), and a namespace when it is not one
 * and holds anything else: an object store has no empty folders, so {@link #createNamespace} writes a small
 * marker object ({@value #NAMESPACE_MARKER}) in it. Names are single path segments of ASCII letters, digits,
 * {@code _}, {@code -} and {@code .}, the same in a local path and an {@code s3://} URI: {@code ..}, {@code .},
 * empty names, names with any other character ({@code /}, {@code \}, {@code #}, {@code ?}, {@code %}, ..., which
 * would escape the root or alias another store once Lance reads the location as a URL) and names starting with
 * {@code _} (Lance's and lancecontext's own folders, the marker's name) are refused with a
 * {@link BadOptionException} naming the name. Each call reads the root afresh (one
 * listing, plus one per child it classifies), so processes sharing a root see each other's changes.
 */
public final class Warehouse {
  /** The object that keeps an empty namespace in existence on an object store. */
  public static final String NAMESPACE_MARKER = "_lc_namespace";
  private static final Logger LOG = LoggerFactory.getLogger(Warehouse.class);
  private static final String TABLE_DIR = "_versions";

  /**
   * The options a store keeps from its creation (scope {@code STORE}, {@code path} aside: a warehouse chooses
   * the location), so the only ones a table property may set.
   */
  public static final List<String> KEPT_OPTIONS = StoreOptions.ALL.stream()
      .filter(o -> o.scope() == ConfigOption.Scope.STORE && o != StoreOptions.PATH).map(ConfigOption::key).toList();

  private final String root;
  private final Map<String, String> options;
  private final StoreFiles files;

  private Warehouse(String root, Map<String, String> options, StoreFiles files) {
    this.root = root;
    this.options = options;
    this.files = files;
  }

  /**
   * The warehouse at {@code root}; {@code options} are store options ({@code storage.*} and defaults) that
   * its stores are opened with. Nothing is created or read yet.
   *
   * @throws BadOptionException if the root or an option is invalid (naming it)
   */
  public static Warehouse open(String root, Map<String, String> options) {
    if (root == null || root.isBlank()) {
      throw new BadOptionException(StoreOptions.PATH.key(), "the warehouse root is required");
    }
    Map<String, String> all = new HashMap<>(options);
    all.put(StoreOptions.PATH.key(), root);
    StoreConfig config = StoreConfig.of(all);
    return new Warehouse(config.uri(), Map.copyOf(options), StoreFiles.forUri(config.uri(), config.storageOptions()));
  }

  /** The normalized root: an absolute path or a URI. */
  public String root() {
    return root;
  }

  /**
   * The location of store {@code name} in {@code namespace} (for {@link ContextStore#open}).
   *
   * @throws BadOptionException if a name is not allowed
   */
  public String location(List<String> namespace, String name) {
    return root + "/" + relative(namespace, name);
  }

  /** {@link #location} as store options: this warehouse's options with {@code path} set. */
  public Map<String, String> storeOptions(List<String> namespace, String name) {
    Map<String, String> o = new HashMap<>(options);
    o.put(StoreOptions.PATH.key(), location(namespace, name));
    return o;
  }

  /** The namespaces directly in {@code parent} ({@code List.of()} for the root), sorted by name. */
  public List<String> namespaces(List<String> parent) {
    return children(parent, Kind.NAMESPACE);
  }

  /** The stores directly in {@code namespace}, sorted by name. */
  public List<String> stores(List<String> namespace) {
    return children(namespace, Kind.STORE);
  }

  /** Whether {@code namespace} exists: the root always does; a folder that is no store and holds anything. */
  public boolean namespaceExists(List<String> namespace) {
    return namespace.isEmpty() || kind(relative(namespace, null)) == Kind.NAMESPACE;
  }

  /** Whether store {@code name} exists in {@code namespace}. */
  public boolean storeExists(List<String> namespace, String name) {
    return kind(relative(namespace, name)) == Kind.STORE;
  }

  /**
   * Creates {@code namespace} (and the namespaces above it) if absent; returns whether this call created it.
   *
   * @throws BadOptionException if a name is not allowed or a store already holds that location
   */
  public boolean createNamespace(List<String> namespace) {
    if (namespace.isEmpty()) {
      return false;
    }
    String dir = relative(namespace, null);
    Kind kind = kind(dir);
    if (kind == Kind.STORE) {
      throw new BadOptionException(StoreOptions.PATH.key(), "'" + root + "/" + dir + "' is a store, not a namespace");
    }
    if (kind == Kind.NAMESPACE) {
      return false;
    }
    if (namespace.size() > 1) {
      createNamespace(namespace.subList(0, namespace.size() - 1));
    }
    io(() -> files.createIfAbsent(dir + "/" + NAMESPACE_MARKER, ("namespace " + dir + "\n")
        .getBytes(StandardCharsets.UTF_8)), "create namespace", dir);
    return true;
  }

  /**
   * Makes ready the location of a new store {@code name} of {@code namespace}: the namespace, and those above
   * it, are created if absent, so a store may be created in a namespace that does not exist yet (as a table
   * in Iceberg's Hadoop catalog). Returns whether this call created the namespace.
   *
   * @throws BadOptionException if a name is not allowed, or a store holds the namespace's location or one
   *     above it (a store is never created inside another)
   */
  public boolean prepareStore(List<String> namespace, String name) {
    return prepareStore(namespace, name, Map.of());
  }

  /**
   * {@link #prepareStore(List, String)} for a store created with {@code properties}, an engine's table
   * properties: only the options a store keeps from its creation ({@link #KEPT_OPTIONS}: its schema and
   * shards) may be given, since a warehouse keeps nothing else with a store, and a property that the next
   * open would silently forget is refused before anything is created.
   *
   * @throws BadOptionException naming the first property that is not one of {@link #KEPT_OPTIONS}, or as
   *     {@link #prepareStore(List, String)}
   */
  public boolean prepareStore(List<String> namespace, String name, Map<String, String> properties) {
    checked(name);
    for (String key : properties.keySet()) {
      if (!KEPT_OPTIONS.contains(key)) {
        throw new BadOptionException(key, "a table of a lancecontext warehouse keeps only the options fixed when "
            + "its store is created (" + String.join(", ", KEPT_OPTIONS) + "); '" + key + "' would be forgotten "
            + "by the next open, so it is refused: set it on each read or write, or as a catalog option");
      }
    }
    return createNamespace(namespace);
  }

  /**
   * What {@code namespace} holds: its stores and namespaces (the marker not counted); empty if it holds
   * nothing, so it may be dropped without losing a store.
   */
  public List<String> contents(List<String> namespace) {
    String dir = relative(namespace, null);
    List<String> out = new ArrayList<>();
    for (String name : io(() -> files.list(dir), "list", dir)) {
      if (!name.equals(NAMESPACE_MARKER)) {
        out.add(name);
      }
    }
    return out;
  }

  /**
   * Drops {@code namespace} with everything in it: every store below it is closed in this JVM and deleted.
   * Check {@link #contents} first to refuse a non-empty one. Returns whether it existed.
   */
  public boolean dropNamespace(List<String> namespace) {
    if (namespace.isEmpty()) {
      throw new BadOptionException(StoreOptions.PATH.key(), "the warehouse root is not a namespace to drop");
    }
    if (!namespaceExists(namespace)) {
      return false;
    }
    String dir = relative(namespace, null);
    StoreRegistry.INSTANCE.closeBelow(root + "/" + dir + "/");
    int n = io(() -> files.deletePrefix(dir + "/"), "drop namespace", dir);
    LOG.info("Dropped namespace {} ({} objects)", root + "/" + dir, n);
    return true;
  }

  /**
   * Drops store {@code name} of {@code namespace}: closed in this JVM (its writers sealed, other handles to
   * it then fail with a retryable {@code StoreClosedException}) and every object of it deleted. Processes that
   * still write it are not stopped. Returns whether it existed.
   */
  public boolean dropStore(List<String> namespace, String name) {
    return ContextStore.drop(storeOptions(namespace, name));
  }

  @Override
  public String toString() {
    return "Warehouse[" + root + "]";
  }

  // ---------------------------------------------------------------- internals

  private enum Kind { NONE, STORE, NAMESPACE }

  private List<String> children(List<String> namespace, Kind wanted) {
    String dir = relative(namespace, null);
    List<String> out = new ArrayList<>();
    for (String name : io(() -> files.list(dir), "list", dir)) {
      if (allowed(name) && kind(dir.isEmpty() ? name : dir + "/" + name) == wanted) {  // the marker starts with _
        out.add(name);
      }
    }
    return out;
  }

  /** What the folder {@code dir} is: one listing of it. */
  private Kind kind(String dir) {
    if (dir.isEmpty()) {
      return Kind.NAMESPACE;
    }
    List<String> inside = io(() -> files.list(dir), "list", dir);
    if (inside.contains(TABLE_DIR)) {
      return Kind.STORE;
    }
    if (inside.isEmpty()) {
      return Kind.NONE;
    }
    // a folder only if something is below it (a plain file named like a namespace lists nothing below)
    return Kind.NAMESPACE;
  }

  /**
   * One path segment that neither escapes nor aliases the root, of characters that mean the same in a local
   * path and in an {@code s3://} URI (Lance parses a store's location as a URL, where {@code #} starts a
   * fragment, {@code ?} a query and {@code %} an escape, so {@code t#x} or {@code t%41} would reach the
   * store {@code t} or {@code tA}), and does not start with {@code _}: Lance and lancecontext keep folders of
   * their own under such names ({@code _versions} marks a store, so a namespace or store of that name would
   * turn its parent into a store).
   */
  private static boolean allowed(String part) {
    if (part.isEmpty() || part.equals(".") || part.equals("..") || part.startsWith("_")) {
      return false;
    }
    for (int i = 0; i < part.length(); i++) {
      char c = part.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'
          || c == '.';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  private static String checked(String part) {
    if (part == null || !allowed(part)) {
      throw new BadOptionException(StoreOptions.PATH.key(), "name '" + part + "' is not allowed in a lancecontext "
          + "warehouse: a namespace or store name is one folder of the warehouse, made of ASCII letters, digits, "
          + "'_', '-' and '.' (not '.' or '..', and not starting with '_', which Lance and lancecontext keep for "
          + "their own folders); other characters ('/', '#', '?', '%', spaces, ...) could escape the warehouse "
          + "or, read as a URI, reach another table");
    }
    return part;
  }

  /** The path of a namespace (name null) or of a store in it, relative to the root. */
  private static String relative(List<String> namespace, String name) {
    StringBuilder b = new StringBuilder();
    for (String part : namespace) {
      b.append(b.length() == 0 ? "" : "/").append(checked(part));
    }
    if (name != null) {
      b.append(b.length() == 0 ? "" : "/").append(checked(name));
    }
    return b.toString();
  }

  private interface Io<T> {
    T run() throws IOException;
  }

  private <T> T io(Io<T> call, String what, String dir) {
    try {
      return call.run();
    } catch (IOException e) {
      throw new StorageException("could not " + what + " '" + root + (dir.isEmpty() ? "" : "/" + dir) + "': " + e, e);
    }
  }
}
