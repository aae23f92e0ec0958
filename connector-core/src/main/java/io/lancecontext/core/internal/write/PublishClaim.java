package io.lancecontext.core.internal.write;

import java.io.IOException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The claim a transaction's publish holds on a bucket, from {@link BucketWriter#beginPublish()} to
 * {@link BucketWriter#endPublish()}: the bucket's lock, held across the two calls, and the lane epochs the
 * publish claimed the bucket with. Not thread-safe beyond that lock.
 */
final class PublishClaim {
  private final ReentrantLock lock;
  private final LaneWriter[] lanes;
  private final BucketLanes bucketLanes;
  private final LaneOwnership ownership;
  private final WriteSequence sequence;
  /** The lane epochs a publish claimed the bucket with (null: no publish holds the bucket). */
  private long[] publishEpochs;

  PublishClaim(ReentrantLock lock, LaneWriter[] lanes, BucketLanes bucketLanes, LaneOwnership ownership,
      WriteSequence sequence) {
    this.lock = lock;
    this.lanes = lanes;
    this.bucketLanes = bucketLanes;
    this.ownership = ownership;
    this.sequence = sequence;
  }

  /** See {@link BucketWriter#beginPublish()}. */
  void begin() {
    lock.lock();
    try {
      publishEpochs = bucketLanes.holdEveryLaneLocked(new long[0]);
    } catch (RuntimeException e) {
      lock.unlock();
      throw e;
    }
  }

  /** See {@link BucketWriter#publishSequence()}. */
  long sequence() {
    if (publishEpochs == null || !lock.isHeldByCurrentThread()) {
      throw new IllegalStateException("a publish sequence is taken between beginPublish and endPublish");
    }
    try {
      if (sequence.claimedSinceSeed() || ownership.anyHeldByAnother()) {
        // a lane claimed after the seed may hold puts of the writer it was claimed from. Otherwise every stamp
        // of the bucket above the seed is this JVM's and below the last stamp: the fresh tier is not read (a
        // snapshot of it costs in proportion to its size, on every publish of the bulk path)
        sequence.raiseAboveFresh();
      }
      return sequence.next();
    } catch (IOException e) {
      throw ownership.manifestsUnreadable(e);
    }
  }

  /** See {@link BucketWriter#endPublish()}. */
  boolean end() {
    try {
      long[] epochs = publishEpochs;
      publishEpochs = null;
      if (epochs == null) {
        return true;
      }
      boolean held = true;
      for (int l = 0; l < lanes.length; l++) {
        if (ownership.latestEpoch(l) != epochs[l]) {
          held = false;
          sequence.forget();
          lanes[l].reclaimIfFenced();
          ownership.held(l);
        }
      }
      return held;
    } catch (IOException e) {
      throw ownership.manifestsUnreadable(e);
    } finally {
      lock.unlock();
    }
  }
}
