package io.lancecontext.core.internal.io;

import java.io.IOException;
import java.time.Instant;
import java.util.List;

/**
 * Direct access to the files lance-core keeps beside a dataset and exposes no Java API for: MemWAL
 * shard manifests, WAL entries and generation directories, plus lancecontext's own lock files.
 * Paths are relative to the store root. Implementations must be thread-safe.
 */
public interface StoreFiles {

  /** Names of the entries directly under {@code dir}; empty if it does not exist. */
  List<String> list(String dir) throws IOException;

  boolean exists(String path) throws IOException;

  /** The whole file. */
  byte[] read(String path) throws IOException;

  /** Size in bytes, or -1 if the file does not exist. */
  long size(String path) throws IOException;

  /** Last modification time, or null if the file does not exist. */
  Instant modified(String path) throws IOException;

  /**
   * Creates {@code path} with {@code content} only if it does not exist yet (atomic).
   *
   * @return false if it already existed
   */
  boolean createExclusive(String path, byte[] content) throws IOException;

  /** Replaces the content of an existing file (used to renew leases). */
  void overwrite(String path, byte[] content) throws IOException;

  /** Deletes a file or a whole directory tree; absent paths are ignored. */
  void deleteRecursively(String path) throws IOException;

  /** Total bytes under {@code dir} (recursive); 0 if absent. */
  long totalBytes(String dir) throws IOException;

  /** Opens the file system that holds the store at {@code uri}. */
  static StoreFiles forUri(String uri) {
    return LocalStoreFiles.forUri(uri);
  }
}
