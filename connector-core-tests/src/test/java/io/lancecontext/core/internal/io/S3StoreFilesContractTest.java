package io.lancecontext.core.internal.io;

import io.lancecontext.core.testing.S3ServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The {@link StoreFiles} contract on S3 (s3proxy 4.1.0, in this JVM). */
class S3StoreFilesContractTest extends StoreFilesContractTest {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();

  @Override
  protected StoreFiles newStore() {
    return StoreFiles.forUri(S3.newUri("contract"), S3.storageOptions());
  }
}
