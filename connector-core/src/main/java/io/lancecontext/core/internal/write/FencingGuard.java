package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import java.io.IOException;
import java.time.Duration;
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
 *
 * <p>A check that comes {@code gc.grace} or longer after the one before lists the versions instead
 * ({@link ShardManifests#newest}, the rule the fresh-tier cache and the merge triggers follow too): garbage collection
 * may have removed the versions after the known one meanwhile (a claim, and everything the claimant wrote after it),
 * and the probe would find none.
 */
public final class FencingGuard {
  private final StoreFiles files;
  private final String shardId;
  private final long epoch;
  private final long graceNanos;
  private ShardManifest known;
  private long checkedNanos = System.nanoTime();

  private FencingGuard(StoreFiles files, String shardId, long epoch, ShardManifest known, Duration grace) {
    this.files = files;
    this.shardId = shardId;
    this.epoch = epoch;
    this.known = known;
    this.graceNanos = grace.toNanos();
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
  public static FencingGuard afterOpen(StoreFiles files, String shardId, long versionBefore, Duration grace)
      throws IOException {
    long epoch = -1;
    ShardManifest newest = null;
    for (long v : ShardManifests.versions(files, shardId)) {
      if (v <= versionBefore) {
        continue;
      }
      newest = ShardManifests.read(files, shardId, v);
      long e = newest.writerEpoch();
      if (epoch >= 0 && e != epoch) {
        throw new FencedWriterException("shard " + shardId + ": another writer claimed the shard while this one "
            + "opened (epochs " + epoch + " and " + e + ")");
      }
      epoch = e;
    }
    if (epoch < 0) {
      throw new FencedWriterException("shard " + shardId + ": opening the writer wrote no manifest version");
    }
    return new FencingGuard(files, shardId, epoch, newest, grace);
  }

  public long epoch() {
    return epoch;
  }

  /** Throws if another writer claimed the shard since this writer opened. */
  public void check() throws IOException {
    long now = System.nanoTime();
    ShardManifest latest = ShardManifests.newest(files, shardId, known, now - checkedNanos, graceNanos);
    checkedNanos = now;
    if (latest.writerEpoch() != epoch) {
      throw new FencedWriterException("shard " + shardId + " was claimed by another writer (epoch "
          + latest.writerEpoch() + ", this writer's epoch " + epoch + "); the rows of this call were not acknowledged");
    }
    known = latest;
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
