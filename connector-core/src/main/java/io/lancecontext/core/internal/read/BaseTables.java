package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.BaseVersions;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The base tables a store's readers use: the latest version, swapped atomically (checking for a newer one runs
 * outside any lock, and only the readers that found one wait for its single opening), and the last older version a
 * pinned read opened. Every table returned is retained for the caller.
 */
final class BaseTables implements AutoCloseable {
  private final StoreConfig config;
  private final BufferAllocator allocator;
  private final BaseKeyHashes keyHashes;
  private final BaseVersions versions;
  private final AtomicReference<BaseTable> latest = new AtomicReference<>();
  /**
   * The base table of the last read pinned to an older version than the latest, kept for the next such read: a
   * stream's incremental reads start at the same or the previous snapshot again and again (opening a version
   * costs about 1.5 ms locally, a few requests on object storage).
   */
  private final AtomicReference<BaseTable> lastPinned = new AtomicReference<>();
  private final Object opening = new Object();
  /** How long an opened base table is trusted with next-version checks alone. */
  private final long reopenNanos;
  private volatile long openedNanos;
  private volatile boolean closed;

  BaseTables(StoreConfig config, BufferAllocator allocator, BaseVersions versions, BaseKeyHashes keyHashes) {
    this.config = config;
    this.allocator = allocator;
    this.versions = versions;
    this.keyHashes = keyHashes;
    this.reopenNanos = Math.max(TimeUnit.SECONDS.toNanos(1), config.get(StoreOptions.GC_GRACE).toNanos() / 2);
  }

  /**
   * The latest base table. A newer version is detected with one existence check of the next version's manifest
   * ({@link BaseVersions}); besides, the table is reopened at the latest version once {@link #reopenNanos} passed
   * since it was opened, which catches what that check cannot: a reader idle for longer than {@code gc.grace} whose
   * next version was cleaned up meanwhile (Lance's cleanup removes superseded versions), or a table whose manifests
   * were migrated to the other naming scheme.
   */
  BaseTable latest() {
    while (true) {
      ensureOpen();
      BaseTable seen = latest.get();
      boolean stale;
      try {
        stale = seen == null || System.nanoTime() - openedNanos >= reopenNanos || versions.exists(seen.version() + 1);
      } catch (IOException e) {
        throw LanceErrors.translate("check the base table version", e);
      }
      if (!stale) {
        if (seen.retain()) {
          return seen;
        }
        continue;  // replaced and freed meanwhile
      }
      synchronized (opening) {
        if (latest.get() == seen) {
          BaseTable next = BaseTable.of(StoreDatasets.open(config.uri(), config, allocator), keyHashes);
          openedNanos = System.nanoTime();
          try {
            if (seen != null && next.version() > seen.version() + 1) {
              versions.forget();  // versions the next-version check could not see: learn the scheme again
            }
            versions.learn(next.version());
          } catch (IOException e) {
            next.release();
            throw LanceErrors.translate("check the base table version", e);
          }
          latest.set(next);
          if (seen != null) {
            seen.release();
          }
        }
      }
    }
  }

  /** The base table at {@code version}: the latest one if it is that version. */
  BaseTable at(long version) {
    BaseTable b = latest.get();
    if (b != null && b.version() == version && b.retain()) {
      return b;
    }
    BaseTable kept = lastPinned.get();
    if (kept != null && kept.version() == version && kept.retain()) {
      return kept;
    }
    BaseTable opened = BaseTable.of(StoreDatasets.open(config.uri(), config, allocator, version), keyHashes);
    opened.retain();  // the cache's reference
    BaseTable replaced = lastPinned.getAndSet(opened);
    if (replaced != null) {
      replaced.release();
    }
    if (closed) {
      releasePinned();  // closed meanwhile: close() may have missed it
    }
    return opened;
  }

  private void releasePinned() {
    BaseTable b = lastPinned.getAndSet(null);
    if (b != null) {
      b.release();
    }
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("store closed");
    }
  }

  /** Releases the tables kept (readers still holding one keep it). */
  @Override
  public void close() {
    closed = true;
    BaseTable b = latest.getAndSet(null);
    if (b != null) {
      b.release();
    }
    releasePinned();
  }
}
