package io.lancecontext.core.store;

import io.lancecontext.core.io.StoreFiles;
import java.io.IOException;

/** Detects a new base-table version without opening it (one existence check). */
final class BaseVersions {
  private BaseVersions() {}

  /** Whether a manifest for {@code version} exists (V2 naming {@code u64::MAX - v}, or V1 {@code v}). */
  static boolean exists(StoreFiles files, long version) throws IOException {
    return files.exists("_versions/" + Long.toUnsignedString(~version) + ".manifest")
        || files.exists("_versions/" + version + ".manifest");
  }
}
