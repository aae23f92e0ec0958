package io.lancecontext.core.internal.lance;

/** Where lance-core 7.0.0 keeps a shard's files, relative to the store root. */
public final class ShardLayout {
  private ShardLayout() {}

  public static final String MEM_WAL_DIR = "_mem_wal";

  public static String shardDir(String shardId) {
    return MEM_WAL_DIR + "/" + shardId;
  }

  public static String manifestDir(String shardId) {
    return shardDir(shardId) + "/manifest";
  }

  public static String walDir(String shardId) {
    return shardDir(shardId) + "/wal";
  }

  /** A flushed generation's directory (a complete Lance dataset); {@code path} is from the manifest. */
  public static String generationDir(String shardId, String path) {
    return shardDir(shardId) + "/" + path;
  }
}
