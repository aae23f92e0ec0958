package io.lancecontext.core.internal.lance;

import io.lancecontext.core.internal.io.StoreFiles;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Finds and reads shard manifest versions. */
public final class ShardManifests {
  private ShardManifests() {}

  /** Every manifest version present, ascending. */
  public static List<Long> versions(StoreFiles files, String shardId) throws IOException {
    List<Long> out = new ArrayList<>();
    for (String n : files.list(ShardLayout.manifestDir(shardId))) {
      long v = LogNames.number(n, LogNames.MANIFEST_SUFFIX);
      if (v >= 0) {
        out.add(v);
      }
    }
    out.sort(null);
    return out;
  }

  /** The newest manifest, or {@link ShardManifest#empty()} for a shard nobody has opened. */
  public static ShardManifest latest(StoreFiles files, String shardId) throws IOException {
    for (int attempt = 0; ; attempt++) {
      List<Long> versions = versions(files, shardId);
      if (versions.isEmpty()) {
        return ShardManifest.empty();
      }
      long newest = versions.get(versions.size() - 1);
      try {
        return read(files, shardId, newest);
      } catch (StoreFiles.NotFound e) {
        if (attempt >= 3) {
          throw e;  // deleted by garbage collection while we listed, repeatedly
        }
      }
    }
  }

  /**
   * The newest manifest of a shard whose manifest {@code known} was known (null for none) as of a look
   * {@code sinceLookNanos} ago: the versions after it are probed one by one (one existence check when nothing
   * changed), or listed when nothing is known or that look is {@code graceNanos} ({@code gc.grace}) old or older.
   * Probing would find nothing once garbage collection removed the versions after the known one, and collection
   * removes a superseded version no sooner than {@code gc.grace} after it was written. Returns {@code known} itself
   * when there is no newer version.
   */
  public static ShardManifest newest(StoreFiles files, String shardId, ShardManifest known, long sinceLookNanos,
      long graceNanos) throws IOException {
    if (known == null || known.version() == 0 || sinceLookNanos >= graceNanos) {
      ShardManifest latest = latest(files, shardId);
      return known != null && latest.version() == known.version() ? known : latest;
    }
    long v = known.version();
    while (exists(files, shardId, v + 1)) {
      v++;
    }
    return v == known.version() ? known : read(files, shardId, v);
  }

  public static ShardManifest read(StoreFiles files, String shardId, long version) throws IOException {
    return ShardManifest.decode(files.read(path(shardId, version)));
  }

  public static boolean exists(StoreFiles files, String shardId, long version) throws IOException {
    return files.objectExists(path(shardId, version));
  }

  static String path(String shardId, long version) {
    return ShardLayout.manifestDir(shardId) + "/" + LogNames.name(version, LogNames.MANIFEST_SUFFIX);
  }
}
