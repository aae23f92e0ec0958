package io.lancecontext.core.options;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.SchemaPresets;
import io.lancecontext.core.schema.SchemaSpec;
import java.io.Serializable;
import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Parsed, validated store options. Built once from the engine's string map; unknown keys and bad values
 * raise {@link BadOptionException} naming the key. Immutable, serializable (shipped to executors and
 * task managers), and safe to log: {@link #toString()} redacts every {@code storage.*} value.
 */
public final class StoreConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  private final Map<String, String> raw;
  private final String uri;
  private final Map<String, String> storage;

  private StoreConfig(Map<String, String> raw) {
    this.raw = Collections.unmodifiableMap(new TreeMap<>(raw));
    this.uri = normalizeUri(require(StoreOptions.PATH));
    Map<String, String> s = new TreeMap<>();
    raw.forEach((k, v) -> {
      if (k.startsWith(StoreOptions.STORAGE_PREFIX)) {
        s.put(k.substring(StoreOptions.STORAGE_PREFIX.length()), v);
      }
    });
    this.storage = Collections.unmodifiableMap(s);
    for (ConfigOption<?> option : StoreOptions.ALL) {
      String v = raw.get(option.key());
      if (v != null) {
        option.parse(v);
      }
    }
  }

  /**
   * Validates {@code options} (keys as in {@link StoreOptions}). Keys are matched exactly; an unknown key
   * fails with the list of known keys.
   */
  public static StoreConfig of(Map<String, String> options) {
    Map<String, String> copy = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : options.entrySet()) {
      String key = e.getKey();
      if (key == null) {
        throw new BadOptionException("null", "option keys must not be null");
      }
      if (!key.startsWith(StoreOptions.STORAGE_PREFIX) && StoreOptions.ALL.stream().noneMatch(o -> o.key().equals(key))) {
        throw new BadOptionException(key, "unknown option; known options are "
            + StoreOptions.ALL.stream().map(ConfigOption::key).toList() + " and " + StoreOptions.STORAGE_PREFIX + "*");
      }
      if (key.equals(StoreOptions.STORAGE_PREFIX)) {
        throw new BadOptionException(key, "a storage option needs a name after '" + StoreOptions.STORAGE_PREFIX + "'");
      }
      copy.put(key, e.getValue());
    }
    return new StoreConfig(copy);
  }

  /**
   * Refuses a {@code txn.timeout} a transaction could outlive without anyone renewing it: {@code span} is the
   * longest such stretch the caller's engine allows by its own settings ({@code what} names them, e.g. a
   * Flink job's checkpoint interval plus checkpoint timeout, during which staged parts wait for their publish).
   *
   * @throws BadOptionException naming {@code txn.timeout}, its value and {@code what}
   */
  public void requireTxnTimeoutAbove(java.time.Duration span, String what) {
    java.time.Duration timeout = get(StoreOptions.TXN_TIMEOUT);
    if (timeout.compareTo(span) <= 0) {
      throw new BadOptionException(StoreOptions.TXN_TIMEOUT.key(), "'" + timeout + "' must be above " + what + " ("
          + span + "): a transaction staged at a checkpoint waits that long for its publish, and garbage collection "
          + "would abort it first; raise 'txn.timeout' (default 1h)");
    }
  }

  /** Options for a store at {@code path} with otherwise default settings. */
  public static StoreConfig forPath(String path) {
    return of(Map.of(StoreOptions.PATH.key(), path));
  }

  /** A copy with {@code key} set to {@code value} (validated). */
  public StoreConfig with(String key, String value) {
    Map<String, String> m = new LinkedHashMap<>(raw);
    m.put(key, value);
    return of(m);
  }

  public <T> T get(ConfigOption<T> option) {
    String v = raw.get(option.key());
    return v == null ? option.defaultValue() : option.parse(v);
  }

  public <T> Optional<T> getOptional(ConfigOption<T> option) {
    String v = raw.get(option.key());
    return v == null ? Optional.ofNullable(option.defaultValue()) : Optional.of(option.parse(v));
  }

  public boolean isSet(ConfigOption<?> option) {
    return raw.containsKey(option.key());
  }

  /** The normalized location: a URI for object stores, an absolute path for the local filesystem. */
  public String uri() {
    return uri;
  }

  /** The local directory of a file-system store, if it is one. */
  public Optional<Path> localPath() {
    return uri.contains("://") ? Optional.empty() : Optional.of(Paths.get(uri));
  }

  /** Options for Lance's object store ({@code storage.*} with the prefix removed). Never log these. */
  public Map<String, String> storageOptions() {
    return storage;
  }

  public Duration putTimeout() {
    return get(StoreOptions.PUT_TIMEOUT);
  }

  public Duration idleTimeout() {
    return get(StoreOptions.IDLE_TIMEOUT);
  }

  public int shards() {
    return get(StoreOptions.SHARDS);
  }

  /**
   * The spec requested by the {@code schema} option, if any: a preset name or a JSON spec.
   *
   * @throws SchemaException if the option is neither
   */
  public Optional<SchemaSpec> requestedSpec() {
    String s = raw.get(StoreOptions.SCHEMA.key());
    if (s == null) {
      return Optional.empty();
    }
    String t = s.trim();
    if (t.startsWith("{")) {
      return Optional.of(SchemaSpec.fromJson(t));
    }
    if (SchemaPresets.isPreset(t.toLowerCase(Locale.ROOT))) {
      return Optional.of(SchemaPresets.byName(t.toLowerCase(Locale.ROOT), get(StoreOptions.EMBEDDING_DIM)));
    }
    throw new BadOptionException(StoreOptions.SCHEMA.key(), "'" + t + "' is neither a preset ("
        + String.join(", ", SchemaPresets.NAMES) + ") nor a JSON schema spec");
  }

  /** The options as given (storage values included: never log this map). */
  public Map<String, String> asMap() {
    return raw;
  }

  /** The options with every {@code storage.*} value replaced by {@code ****}. */
  public Map<String, String> redacted() {
    Map<String, String> m = new TreeMap<>();
    raw.forEach((k, v) -> m.put(k, k.startsWith(StoreOptions.STORAGE_PREFIX) ? "****" : v));
    return m;
  }

  private String require(ConfigOption<String> option) {
    String v = raw.get(option.key());
    if (v == null || v.isBlank()) {
      throw new BadOptionException(option.key(), "is required");
    }
    return v;
  }

  static String normalizeUri(String location) {
    String l = location.trim();
    if (l.startsWith("file://")) {
      l = URI.create(l).getPath();
    } else if (l.contains("://")) {
      return l.endsWith("/") ? l.substring(0, l.length() - 1) : l;
    }
    return Paths.get(l).toAbsolutePath().normalize().toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoreConfig other && raw.equals(other.raw);
  }

  @Override
  public int hashCode() {
    return raw.hashCode();
  }

  @Override
  public String toString() {
    return "StoreConfig" + redacted();
  }
}
