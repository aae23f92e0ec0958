package io.lancecontext.core.internal.session;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.options.StoreConfig;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The one way lancecontext opens a Lance dataset (the base table, a flushed generation, a staged part, a
 * maintenance handle): always with the store's storage options and the session {@link LanceRuntime} chooses
 * for it (the JVM's shared one).
 */
public final class StoreDatasets {
  private StoreDatasets() {}

  /** Opens the latest version of the dataset at {@code uri}. */
  public static LanceDataset open(String uri, StoreConfig config, BufferAllocator allocator) {
    return open(uri, config, allocator, -1);
  }

  /** Opens {@code version} (or the latest when negative) of the dataset at {@code uri}. */
  public static LanceDataset open(String uri, StoreConfig config, BufferAllocator allocator, long version) {
    return LanceDataset.open(uri, config, allocator, version, LanceRuntime.get().sessionFor(config, uri));
  }
}
