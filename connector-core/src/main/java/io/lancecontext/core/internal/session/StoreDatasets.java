package io.lancecontext.core.internal.session;

import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.options.StoreConfig;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.Session;
import org.lance.WriteParams;

/**
 * The one way lancecontext opens or creates a Lance dataset (the base table, a flushed generation, a
 * maintenance handle): always with the store's storage options and the JVM's shared session.
 */
public final class StoreDatasets {
  private StoreDatasets() {}

  /** Opens the latest version of the dataset at {@code uri}. */
  public static Dataset open(String uri, StoreConfig config, BufferAllocator allocator) {
    return open(uri, config, allocator, -1);
  }

  /** Opens {@code version} (or the latest when negative) of the dataset at {@code uri}. */
  public static Dataset open(String uri, StoreConfig config, BufferAllocator allocator, long version) {
    ReadOptions.Builder options = new ReadOptions.Builder().setStorageOptions(config.storageOptions());
    if (version >= 0) {
      options.setVersion(version);
    }
    Session session = LanceRuntime.get().sessionFor(config, uri);
    var builder = Dataset.open().allocator(allocator).uri(uri).readOptions(options.build());
    if (session != null) {
      builder.session(session);
    }
    return LanceErrors.call("open " + uri, builder::build);
  }

  /** Creates an empty dataset with {@code schema}; fails if one exists. */
  public static Dataset create(String uri, Schema schema, StoreConfig config, BufferAllocator allocator) {
    WriteParams params = new WriteParams.Builder().withMode(WriteParams.WriteMode.CREATE)
        .withStorageOptions(config.storageOptions()).build();
    return LanceErrors.call("create " + uri, () -> Dataset.create(allocator, uri, schema, params));
  }
}
