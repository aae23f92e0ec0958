package io.lancecontext.core.internal.session;

import io.lancecontext.core.internal.lance.LanceSession;
import io.lancecontext.core.options.StoreConfig;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiFunction;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Process-wide Lance resources: one Arrow root allocator and one bounded Lance session ({@link LanceSession}) shared by
 * every store, generation and maintenance task of this JVM, so that a worker's cache memory is capped
 * by one budget however many stores it touches ({@link CacheBudget}). Thread-safe; built lazily.
 */
public final class LanceRuntime {
  private static final Logger LOG = LoggerFactory.getLogger(LanceRuntime.class);
  private static final LanceRuntime INSTANCE = new LanceRuntime();

  private final RootAllocator allocator = new RootAllocator(Long.MAX_VALUE);
  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2, r -> {
    Thread t = new Thread(r, "lancecontext-maintenance");
    t.setDaemon(true);
    return t;
  });
  private volatile LanceSession session;
  private volatile CacheBudget sessionBudget;
  private volatile BiFunction<StoreConfig, String, LanceSession> sessionOverride;

  private LanceRuntime() {
    try {
      NativeLibrary.sweepIfConfigured();
    } catch (RuntimeException e) {
      LOG.warn("Stale copies of lance's native library not swept: {}", e.getMessage());
    }
  }

  public static LanceRuntime get() {
    return INSTANCE;
  }

  /** The root of every Arrow allocation lancecontext makes; stores and readers use child allocators. */
  public BufferAllocator allocator() {
    return allocator;
  }

  /**
   * The session a store with these options must use: the JVM's shared session, or null when the
   * store's budget is 0 (lance-core then gives each dataset its own default-sized session). The shared
   * session is sized by the first store that asks; later stores asking for another budget share it
   * anyway, with a warning.
   */
  public LanceSession sessionFor(StoreConfig config) {
    return sessionFor(config, config.uri());
  }

  /** {@link #sessionFor(StoreConfig)} for the dataset at {@code datasetUri} of that store (its base or a generation). */
  public LanceSession sessionFor(StoreConfig config, String datasetUri) {
    BiFunction<StoreConfig, String, LanceSession> override = sessionOverride;
    if (override != null) {
      return override.apply(config, datasetUri);
    }
    CacheBudget budget = CacheBudget.resolve(config);
    if (!budget.shared()) {
      return null;
    }
    LanceSession s = session;
    if (s == null) {
      synchronized (this) {
        s = session;
        if (s == null) {
          s = LanceSession.create(budget.indexCacheBytes(), budget.metadataCacheBytes());
          sessionBudget = budget;
          session = s;
          LOG.info("Shared Lance session: {} bytes ({} index + {} metadata), from {}", budget.bytes(),
              budget.indexCacheBytes(), budget.metadataCacheBytes(), budget.source());
          return s;
        }
      }
    }
    CacheBudget current = sessionBudget;
    if (current.bytes() != budget.bytes()) {
      LOG.warn("cache.bytes {} (from {}) for store {} ignored: this JVM's shared Lance session was built with {} "
          + "bytes (from {})", budget.bytes(), budget.source(), config.uri(), current.bytes(), current.source());
    }
    return s;
  }

  /**
   * Replaces the choice of session for every dataset opened from now on, so that benchmarks and tests can
   * reproduce other session layouts (one unbounded session per store, for instance): {@code chooser} is
   * given the options of the store a dataset belongs to and the dataset's URI (the store's own for its
   * base table) and returns the session to open it with, or null for a session of the dataset's own. The
   * caller owns and closes the sessions it returns; they are not bounded by {@code cache.bytes}.
   * {@code null} restores the shared session. Not for production use.
   */
  public void overrideSessions(BiFunction<StoreConfig, String, LanceSession> chooser) {
    sessionOverride = chooser;
  }

  /** Runs stores' background maintenance (sealing, merges, garbage collection, compaction). */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /** The shared session, if one was built. */
  public LanceSession sharedSession() {
    return session;
  }

  /** The budget the shared session was built with, or null. */
  public CacheBudget sharedBudget() {
    return sessionBudget;
  }

  /**
   * Bytes held by the shared session's caches, or 0, measured now. lance-core sums every cache entry to
   * answer, so the cost grows with the cache: {@link #sessionSizeBytesRecent()} is for frequent callers.
   */
  public long sessionSizeBytes() {
    LanceSession s = session;
    long size = s == null ? 0 : s.sizeBytes();
    sizeMeasuredAt = System.nanoTime();
    lastSize = size;
    return size;
  }

  private static final long SIZE_REFRESH_NANOS = 1_000_000_000L;
  private volatile long lastSize = -1;
  private volatile long sizeMeasuredAt;

  /** {@link #sessionSizeBytes()} as measured within the last second (what {@code stats()} reports). */
  public long sessionSizeBytesRecent() {
    long size = lastSize;
    return size >= 0 && System.nanoTime() - sizeMeasuredAt < SIZE_REFRESH_NANOS ? size : sessionSizeBytes();
  }
}
