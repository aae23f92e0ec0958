package io.lancecontext.core.internal.lance;

import io.lancecontext.core.internal.io.StoreFiles;
import java.io.IOException;

/** Detects a new base-table version without opening it (one existence check). */
public final class BaseVersions {
  private BaseVersions() {}

  /** Whether a manifest for {@code version} exists (V2 naming {@code u64::MAX - v}, or V1 {@code v}). */
  public static boolean exists(StoreFiles files, long version) throws IOException {
    return files.objectExists("_versions/" + Long.toUnsignedString(~version) + ".manifest")
        || files.objectExists("_versions/" + version + ".manifest");
  }
}
