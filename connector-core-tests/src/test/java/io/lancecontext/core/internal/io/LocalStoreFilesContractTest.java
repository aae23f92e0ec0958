package io.lancecontext.core.internal.io;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The {@link StoreFiles} contract on the local file system. */
class LocalStoreFilesContractTest extends StoreFilesContractTest {
  @TempDir
  Path dir;

  @Override
  protected StoreFiles newStore() {
    return StoreFiles.forUri(dir.toString());
  }
}
