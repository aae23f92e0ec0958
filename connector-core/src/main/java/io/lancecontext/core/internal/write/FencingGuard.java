package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import java.io.IOException;
import java.util.List;

/**
 * Detects that another writer claimed this writer's shard. lance-core 7.0.0 does not tell a fenced
 * writer: its puts return OK and the rows are lost, or they hang. A claim always writes a new shard
 * manifest version with a higher epoch, and this writer writes no manifest while it is open, so "is
 * there a manifest version after the one I know?" detects a claim with a single existence check.
 *
 * <p>The writer's own epoch is established at open: only if every manifest version written while it
 * opened carries the same epoch can that epoch be this writer's; otherwise two claims raced and the
 * writer is treated as fenced.
 */
public final class FencingGuard {
  private final StoreFiles files;
  private final String shardId;
  private final long epoch;
  private long knownVersion;

  private FencingGuard(StoreFiles files, String shardId, long epoch, long knownVersion) {
    this.files = files;
    this.shardId = shardId;
    this.epoch = epoch;
    this.knownVersion = knownVersion;
  }

  /** The newest manifest version before a writer opens (0 for a fresh shard). */
  public static long versionBeforeOpen(StoreFiles files, String shardId) throws IOException {
    List<Long> versions = ShardManifests.versions(files, shardId);
    return versions.isEmpty() ? 0 : versions.get(versions.size() - 1);
  }

  /**
   * Establishes the epoch of a writer that just opened.
   *
   * @throws FencedWriterException if another claim happened while it opened
   */
  public static FencingGuard afterOpen(StoreFiles files, String shardId, long versionBefore) throws IOException {
    long epoch = -1;
    long newest = versionBefore;
    for (long v : ShardManifests.versions(files, shardId)) {
      if (v <= versionBefore) {
        continue;
      }
      long e = ShardManifests.read(files, shardId, v).writerEpoch();
      if (epoch >= 0 && e != epoch) {
        throw new FencedWriterException("shard " + shardId + ": another writer claimed the shard while this one "
            + "opened (epochs " + epoch + " and " + e + ")");
      }
      epoch = e;
      newest = v;
    }
    if (epoch < 0) {
      throw new FencedWriterException("shard " + shardId + ": opening the writer wrote no manifest version");
    }
    return new FencingGuard(files, shardId, epoch, newest);
  }

  public long epoch() {
    return epoch;
  }

  /** Throws if another writer claimed the shard since this writer opened. */
  public void check() throws IOException {
    if (!ShardManifests.exists(files, shardId, knownVersion + 1)) {
      return;
    }
    ShardManifest latest = ShardManifests.latest(files, shardId);
    if (latest.writerEpoch() != epoch) {
      throw new FencedWriterException("shard " + shardId + " was claimed by another writer (epoch "
          + latest.writerEpoch() + ", this writer's epoch " + epoch + "); the rows of this call were not acknowledged");
    }
    knownVersion = latest.version();
  }

  /** Like {@link #check()}, as a boolean. */
  public boolean isFenced() throws IOException {
    try {
      check();
      return false;
    } catch (FencedWriterException e) {
      return true;
    }
  }
}
