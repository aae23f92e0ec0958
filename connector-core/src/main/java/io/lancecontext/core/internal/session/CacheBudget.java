package io.lancecontext.core.internal.session;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.OptionParsers;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import java.util.Optional;
import java.util.function.Function;

/**
 * The byte budget of the JVM's shared Lance session, and where it came from. Precedence: the store's
 * {@code cache.bytes} option, then the system property {@value #PROPERTY}, then the environment
 * variable {@value #PROPERTY}, then {@value #DEFAULT_TEXT}. {@code 0} disables sharing. The budget is
 * split 6:1 between Lance's index cache and its metadata cache.
 *
 * @param bytes total budget in bytes; 0 = no shared session
 * @param source where the value came from (for logs and stats)
 */
public record CacheBudget(long bytes, String source) {
  public static final String PROPERTY = "LANCECONTEXT_CACHE_BYTES";
  public static final long DEFAULT_BYTES = 2L << 30;
  static final String DEFAULT_TEXT = "2GiB";

  public CacheBudget {
    if (bytes < 0) {
      throw new BadOptionException(StoreOptions.CACHE_BYTES.key(), "must not be negative");
    }
  }

  /** Resolves the budget for a store, using this JVM's system properties and environment. */
  public static CacheBudget resolve(StoreConfig config) {
    return resolve(config.isSet(StoreOptions.CACHE_BYTES) ? Optional.of(config.get(StoreOptions.CACHE_BYTES)) : Optional.empty(),
        System::getProperty, System::getenv);
  }

  /** Resolves with explicit lookups (tests). */
  static CacheBudget resolve(Optional<Long> option, Function<String, String> properties, Function<String, String> env) {
    if (option.isPresent()) {
      return new CacheBudget(option.get(), "option " + StoreOptions.CACHE_BYTES.key());
    }
    String p = properties.apply(PROPERTY);
    if (p != null && !p.isBlank()) {
      return new CacheBudget(parse(p, "system property " + PROPERTY), "system property " + PROPERTY);
    }
    String e = env.apply(PROPERTY);
    if (e != null && !e.isBlank()) {
      return new CacheBudget(parse(e, "environment variable " + PROPERTY), "environment variable " + PROPERTY);
    }
    return new CacheBudget(DEFAULT_BYTES, "default");
  }

  private static long parse(String value, String where) {
    try {
      return OptionParsers.bytes(value);
    } catch (RuntimeException ex) {
      throw new BadOptionException(StoreOptions.CACHE_BYTES.key(), where + " '" + value + "': " + ex.getMessage());
    }
  }

  public boolean shared() {
    return bytes > 0;
  }

  /** Six sevenths of the budget. */
  public long indexCacheBytes() {
    return bytes / 7 * 6;
  }

  /** One seventh of the budget. */
  public long metadataCacheBytes() {
    return bytes - indexCacheBytes();
  }
}
