package io.lancecontext.core.internal.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.OperationInterruptedException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.options.ConfigOption.Scope;
import io.lancecontext.core.options.ConfigOption;
import io.lancecontext.core.options.OptionParsers;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stores resident in this JVM, keyed by normalized location: every handle to one location shares
 * one {@link ResidentStore} (one writer per shard, one fresh-tier cache). A store with open handles is
 * never evicted; once its last handle is closed it stays resident (warm caches, open writers) until
 * it has been idle for {@value #IDLE_PROPERTY} or more than {@value #MAX_PROPERTY} stores are idle,
 * then it is closed: writers sealed, caches freed. All resident stores are closed at JVM exit.
 *
 * <p>A store is closed outside the cache (except by Caffeine's own eviction, which closes inside it); an
 * open of a location whose store is being closed waits until that close is done, so that a JVM never
 * holds two writers of one shard (the new one would fence the one being sealed).
 */
public final class StoreRegistry {
  private static final Logger LOG = LoggerFactory.getLogger(StoreRegistry.class);
  static final String MAX_PROPERTY = "lancecontext.resident.max-idle-stores";
  static final String IDLE_PROPERTY = "lancecontext.resident.idle-timeout";
  public static final StoreRegistry INSTANCE = new StoreRegistry(
      Long.getLong(MAX_PROPERTY, 32), OptionParsers.duration(System.getProperty(IDLE_PROPERTY, "10min")));

  /** A resident store and the number of open handles to it. */
  static final class Entry {
    final ResidentStore store;
    int handles;

    Entry(ResidentStore store) {
      this.store = store;
    }
  }

  private final Cache<String, Entry> cache;
  /** Locations whose store is being closed outside the cache; counted down when the close is done. */
  private final ConcurrentHashMap<String, CountDownLatch> closing = new ConcurrentHashMap<>();

  public StoreRegistry(long maxIdleStores, Duration idle) {
    long idleNanos = idle.toNanos();
    this.cache = Caffeine.newBuilder()
        .maximumWeight(maxIdleStores)
        .weigher((String k, Entry e) -> e.handles > 0 ? 0 : 1)
        .expireAfter(new Expiry<String, Entry>() {
          @Override
          public long expireAfterCreate(String key, Entry e, long now) {
            return e.handles > 0 ? Long.MAX_VALUE : idleNanos;
          }

          @Override
          public long expireAfterUpdate(String key, Entry e, long now, long current) {
            return e.handles > 0 ? Long.MAX_VALUE : idleNanos;
          }

          @Override
          public long expireAfterRead(String key, Entry e, long now, long current) {
            return current;
          }
        })
        .evictionListener((String key, Entry e, RemovalCause cause) -> {
          if (e != null) {
            LOG.info("Evicting idle store {} ({})", key, cause);
            e.store.close();
          }
        })
        .build();
    Runtime.getRuntime().addShutdownHook(new Thread(this::closeAll, "lancecontext-shutdown"));
  }

  /**
   * A handle to the resident store for {@code config}, opening (or creating) it if needed. A resident store
   * with no open handle whose options differ from {@code config}'s (a notebook's next cell, the next Spark job
   * on an executor, rotated storage credentials) is closed and opened again with {@code config}'s: options of
   * scope resident store apply per job; only while handles are open do they have one value. Likewise a
   * resident store with no open handle whose location now holds another store, or none (dropped, and maybe
   * created again, by another process: {@link ResidentStore#isStillAtItsLocation}, one small read), is closed
   * without writing anything and the location opened afresh, so a JVM that keeps stores resident between jobs
   * never serves a dropped store's rows, nor writes them into its successor.
   */
  public ResidentStore acquire(StoreConfig config) {
    String uri = config.uri();
    while (true) {
      awaitClosed(uri);
      Entry idle = cache.asMap().get(uri);
      if (idle != null && idle.handles == 0 && !idle.store.isClosed() && !idle.store.isStillAtItsLocation()) {
        if (closeOutside(uri, true)) {  // discards its writers unsealed
          LOG.info("Reopened store {}: the store resident in this JVM was dropped (or dropped and created again) "
              + "elsewhere", uri);
        }
        continue;
      }
      if (idle != null && idle.handles == 0 && !idle.store.isClosed() && !sameOptions(idle.store, config)) {
        checkLayout(idle.store, config);
        if (closeOutside(uri, true)) {
          LOG.info("Reopened store {} with the options of its new handle ({})", uri, changedKeys(idle.store, config));
        }
        continue;
      }
      boolean[] beingClosed = {false};
      Entry e = cache.asMap().compute(uri, (k, existing) -> {
        if (closing.containsKey(k)) {
          beingClosed[0] = true;
          return existing;
        }
        Entry entry = existing;
        if (entry == null || entry.store.isClosed()) {
          entry = new Entry(new ResidentStore(config));
        } else {
          checkCompatible(entry.store, config);
        }
        entry.handles++;
        return entry;
      });
      if (!beingClosed[0]) {
        return e.store;
      }
    }
  }

  private void awaitClosed(String uri) {
    CountDownLatch latch = closing.get(uri);
    if (latch == null) {
      return;
    }
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new OperationInterruptedException("interrupted while waiting for the store at " + uri
          + " to finish closing before it is opened again", e);
    }
  }

  /**
   * A handle's options against the resident store's: the spec and shard count must be the store's, and
   * every option of scope {@link Scope#RESIDENT} that the handle sets must equal the resident store's
   * value (options the handle leaves unset take the resident store's). {@link Scope#HANDLE} options are
   * the handle's own; {@link Scope#JVM} ones are the session's (see {@code LanceRuntime}).
   */
  static void checkCompatible(ResidentStore resident, StoreConfig config) {
    checkLayout(resident, config);
    List<String> changed = changedKeys(resident, config);
    if (changed.isEmpty()) {
      return;
    }
    String key = changed.get(0);
    StoreConfig held = resident.config();
    Optional<ConfigOption<?>> option = StoreOptions.ALL.stream().filter(o -> o.key().equals(key)).findFirst();
    String values = option.isPresent()
        ? " with " + key + "=" + text(held, option.get()) + "; this handle asked for " + text(config, option.get())
        : " with another value of this storage option (values are not shown)";
    throw new BadOptionException(key, "the store at " + config.uri() + " is open in this JVM" + values + ". "
        + RESIDENT_RULE);
  }

  /** Whether a handle with {@code config} may share {@code resident} as it is. */
  private static boolean sameOptions(ResidentStore resident, StoreConfig config) {
    return changedKeys(resident, config).isEmpty();
  }

  /**
   * The keys of the resident-scope and storage options {@code config} sets to another value than the resident
   * store's (options it leaves unset take the resident store's; a storage option it leaves out is dropped
   * only if it sets any).
   */
  private static List<String> changedKeys(ResidentStore resident, StoreConfig config) {
    StoreConfig held = resident.config();
    List<String> changed = new ArrayList<>();
    for (ConfigOption<?> option : StoreOptions.ALL) {
      if (option.scope() == Scope.RESIDENT && config.isSet(option)
          && !Objects.equals(config.get(option), held.get(option))) {
        changed.add(option.key());
      }
    }
    Map<String, String> storage = config.storageOptions();
    if (!storage.isEmpty()) {
      TreeSet<String> keys = new TreeSet<>(storage.keySet());
      keys.addAll(held.storageOptions().keySet());
      for (String k : keys) {
        if (!Objects.equals(storage.get(k), held.storageOptions().get(k))) {
          changed.add(StoreOptions.STORAGE_PREFIX + k);
        }
      }
    }
    return changed;
  }

  /** The store's layout (schema spec, shards) is fixed: a handle that asks for another is refused. */
  private static void checkLayout(ResidentStore resident, StoreConfig config) {
    Optional<SchemaSpec> requested = config.requestedSpec();
    if (requested.isPresent() && !requested.get().equals(resident.spec())) {
      throw new SchemaException("the store at " + config.uri() + " was created with another schema spec; omit option '"
          + StoreOptions.SCHEMA.key() + "' to use the stored one");
    }
    if (config.isSet(StoreOptions.SHARDS) && config.shards() != resident.shards()) {
      throw new BadOptionException(StoreOptions.SHARDS.key(), "the store at " + config.uri() + " has "
          + resident.shards() + " shards, fixed at creation; got " + config.shards());
    }
  }

  private static final String RESIDENT_RULE = "Options of scope 'resident store' have one value per store per JVM "
      + "while handles to it are open: give this handle the same value, or open it once the other handles are "
      + "closed (the store then reopens with the new value)";

  private static String text(StoreConfig config, ConfigOption<?> option) {
    String raw = config.asMap().get(option.key());
    return raw != null ? raw : option.defaultText() + " (the default)";
  }

  /** Called when a handle is closed. */
  public void release(ResidentStore store) {
    cache.asMap().computeIfPresent(store.config().uri(), (k, e) -> {
      if (e.store == store) {
        e.handles--;
      }
      return e;
    });
    cache.cleanUp();
  }

  /**
   * Closes every resident store now (JVM exit, tests), open handles or not; see
   * {@code ContextStore.closeAllResident()}.
   */
  public void closeAll() {
    for (String uri : new ArrayList<>(cache.asMap().keySet())) {
      closeOutside(uri, false);
    }
  }

  /** Closes the store at {@code uri} now, open handles or not (a dropped store); returns whether it was resident. */
  public boolean close(String uri) {
    return closeOutside(uri, false);
  }

  /** Closes every resident store whose location starts with {@code prefix} (a dropped namespace). */
  public int closeBelow(String prefix) {
    int n = 0;
    for (String uri : new ArrayList<>(cache.asMap().keySet())) {
      if (uri.startsWith(prefix) && closeOutside(uri, false)) {
        n++;
      }
    }
    return n;
  }

  /** Evicts the store at {@code uri} if no handle is open; returns whether it was closed. */
  boolean evictIfIdle(String uri) {
    return closeOutside(uri, true);
  }

  /**
   * Removes the store at {@code uri} from the cache (only if it has no handle, when {@code idleOnly}) and
   * closes it; opens of the location wait meanwhile. Returns whether this call closed it.
   */
  private boolean closeOutside(String uri, boolean idleOnly) {
    CountDownLatch latch = new CountDownLatch(1);
    Entry[] removed = new Entry[1];
    cache.asMap().computeIfPresent(uri, (k, e) -> {
      if ((idleOnly && e.handles > 0) || closing.putIfAbsent(k, latch) != null) {
        return e;
      }
      removed[0] = e;
      return null;
    });
    if (removed[0] == null) {
      return false;
    }
    try {
      removed[0].store.close();
    } catch (RuntimeException ex) {
      LOG.warn("Closing store {} failed: {}", uri, ex.toString());
    } finally {
      closing.remove(uri, latch);
      latch.countDown();
    }
    return true;
  }

  public int residentStores() {
    cache.cleanUp();
    return cache.asMap().size();
  }

  public int openWriters() {
    int n = 0;
    for (Entry e : cache.asMap().values()) {
      n += e.store.openWriters();
    }
    return n;
  }

  /** Runs Caffeine's pending maintenance (idle expiry) now. */
  public void cleanUp() {
    cache.cleanUp();
  }
}
