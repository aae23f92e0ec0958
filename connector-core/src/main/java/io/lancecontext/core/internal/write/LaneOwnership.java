package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalRepair;
import java.io.IOException;
import java.util.Arrays;
import java.util.Comparator;

/**
 * Which writer holds each lane of a bucket: the epoch this JVM last held each lane with, compared with the
 * epoch of the lane's newest shard manifest, and the claims that make this JVM the holder again (sealing
 * what another writer left unsealed). Not thread-safe: used under the bucket's lock.
 */
final class LaneOwnership {
  private final BucketWriter.Host host;
  private final int bucket;
  private final LaneWriter[] lanes;
  private final WriteSequence sequence;
  /** The epoch this JVM last held each lane with (-1: never). */
  private final long[] ownEpochs = {-1, -1};

  LaneOwnership(BucketWriter.Host host, int bucket, LaneWriter[] lanes, WriteSequence sequence) {
    this.host = host;
    this.bucket = bucket;
    this.lanes = lanes;
    this.sequence = sequence;
  }

  /** Records the epoch this JVM holds {@code lane} with now. */
  void held(int lane) {
    ownEpochs[lane] = lanes[lane].epoch();
  }

  /** Whether this JVM never held {@code lane}. */
  boolean neverHeld(int lane) {
    return ownEpochs[lane] < 0;
  }

  /** The epoch of the lane's newest manifest; 0 for a lane nobody opened (no other writer holds it). */
  long latestEpoch(int lane) throws IOException {
    return ShardManifests.latest(host.files(), lanes[lane].shardId()).writerEpoch();
  }

  /** Whether another writer claimed {@code lane} since this JVM last held it (or, if never, at all). */
  boolean heldByAnother(int lane) throws IOException {
    long epoch = latestEpoch(lane);
    return epoch != ownEpochs[lane] && epoch != 0;
  }

  /** Whether another writer claimed any lane of the bucket since this JVM last held it (an open lane included). */
  boolean anyHeldByAnother() throws IOException {
    for (int l = 0; l < lanes.length; l++) {
      if (heldByAnother(l)) {
        return true;
      }
    }
    return false;
  }

  StorageException manifestsUnreadable(IOException e) {
    return new StorageException(host.name() + " bucket " + bucket + ": reading its shard manifests", e);
  }

  /** Moves aside an incomplete WAL entry a killed writer left in {@code lane}'s shard. */
  void repairBeforeOpen(int lane) {
    WalRepair.beforeOpen(host.files(), lanes[lane].shardId(), host.allocator(), host.name() + " bucket " + bucket);
  }

  /**
   * Claims every lane another writer holds: one it claimed since this JVM last held it, and one whose writer
   * is open here but was fenced since (its last put may have been long ago: the writer is stale, and the
   * other writer may still be putting rows the key check would not see). The lane a put goes to is opened
   * before.
   *
   * @return the epoch each lane is held with
   */
  long[] claimEveryLane() {
    long[] epochs = new long[lanes.length];
    try {
      for (int l = 0; l < lanes.length; l++) {
        long latest = latestEpoch(l);
        boolean stale = lanes[l].isOpen() ? latest != lanes[l].epoch() : latest != ownEpochs[l] && latest != 0;
        if (stale) {
          lanes[l].discard("another writer claimed the shard (epoch " + latest + ")");
          repairBeforeOpen(l);
          lanes[l].recover();
          held(l);
          sequence.claimedLane();
        }
        // a closed lane not claimed now is held with the epoch just read
        epochs[l] = lanes[l].isOpen() ? lanes[l].epoch() : stale ? latestEpoch(l) : latest;
      }
    } catch (IOException e) {
      throw manifestsUnreadable(e);
    }
    return epochs;
  }

  /**
   * After a checked put to lane {@code written}: fails unless every lane is still held with the epoch it
   * had at the check. For the written lane that is its writer's epoch: a put that lost the lane and won
   * it back ({@code LaneWriter} re-claims within {@code write.put-timeout}) holds it with a newer epoch,
   * and another writer may have added the same keys in between.
   */
  void requireHeldSince(long[] epochs, int written) {
    try {
      for (int l = 0; l < lanes.length; l++) {
        long now = l == written ? lanes[l].epoch() : latestEpoch(l);
        if (now != epochs[l]) {
          throw new FencedWriterException(host.name() + " bucket " + bucket + ": another writer claimed lane " + l
              + " of the bucket between the key check and the put; the rows of this call were not acknowledged (a "
              + "retry checks the keys again)");
        }
      }
    } catch (IOException e) {
      throw manifestsUnreadable(e);
    }
  }

  /**
   * Before this JVM first writes the bucket, and whenever another writer held one of its lanes since:
   * seal what other writers left unsealed in the lanes this JVM does not hold open, the lane with the
   * older rows first, so that a bucket's generations are always flushed (and so merged) in the order
   * their rows were written.
   */
  void recover() {
    long[] tails = new long[lanes.length];
    for (int l = 0; l < lanes.length; l++) {
      if (lanes[l].isOpen()) {
        tails[l] = -1;
        continue;
      }
      repairBeforeOpen(l);
      tails[l] = host.tailSequence(lanes[l].shardId());
    }
    Integer[] order = {0, 1};
    Arrays.sort(order, Comparator.comparingLong(l -> tails[l]));
    for (int l : order) {
      if (tails[l] >= 0) {
        lanes[l].recover();
        held(l);
      }
    }
  }

  /**
   * Claims each lane another writer left an unsealed WAL tail in, older lane first (which fences that
   * writer: its next put claims the lane back), then seals both lanes and waits; see
   * {@link BucketWriter#claimAndSeal}.
   *
   * @return the lanes claimed from another writer
   */
  int claimAndSeal(String reason) {
    try {
      boolean[] foreign = new boolean[lanes.length];
      for (int l = 0; l < lanes.length; l++) {
        foreign[l] = !lanes[l].isOpen() && heldByAnother(l);
      }
      recover();
      int claimed = 0;
      for (int l = 0; l < lanes.length; l++) {
        if (foreign[l] && lanes[l].isOpen()) {
          claimed++;
        }
      }
      if (claimed > 0) {
        sequence.forget();  // the next put re-seeds above what the other writer stamped
      }
      for (LaneWriter lane : lanes) {
        if (!lane.sealNow(reason)) {
          throw new FencedWriterException(host.name() + " bucket " + bucket + ": a lane could not be sealed (" + reason
              + "); another writer may have claimed it");
        }
      }
      return claimed;
    } catch (IOException e) {
      throw manifestsUnreadable(e);
    }
  }
}
