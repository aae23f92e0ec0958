package io.lancecontext.core.internal.store;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.options.StoreConfig;
import java.io.IOException;
import java.nio.file.Files;
import org.slf4j.LoggerFactory;

/**
 * Drops a store: closes it in this JVM ({@link StoreRegistry#close}), then deletes every object under its
 * location. A location without a Lance table is never touched.
 */
public final class StoreDrop {
  private StoreDrop() {}

  /** Drops the store at {@code config}'s location; false, deleting nothing, when no store is there. */
  public static boolean drop(StoreConfig config) {
    StoreFiles files = StoreFiles.forUri(config.uri(), config.storageOptions());
    try {
      if (!files.prefixExists("_versions/")) {
        return false;
      }
      StoreRegistry.INSTANCE.close(config.uri());
      int n = 0;
      for (String name : files.list("")) {  // _versions, data, _mem_wal, _lc, _indices, ...
        n += files.deletePrefix(name);
      }
      if (config.localPath().isPresent()) {
        Files.deleteIfExists(config.localPath().get());  // the emptied directory itself
      }
      // logged as the entry point's, where it always was
      LoggerFactory.getLogger("io.lancecontext.core.ContextStore").info("Dropped store {} ({} objects)", config.uri(), n);
      return true;
    } catch (IOException e) {
      throw new StorageException("could not drop the store at " + config.uri() + ": " + e, e);
    }
  }
}
