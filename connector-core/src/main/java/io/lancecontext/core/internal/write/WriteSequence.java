package io.lancecontext.core.internal.write;

import io.lancecontext.core.schema.SystemColumns;
import java.util.function.LongSupplier;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The write-sequence clock of one bucket ({@code _lc_seq}): a hybrid clock whose stamps are microseconds since
 * the epoch by this JVM's clock, or one more than the previous stamp, whichever is larger. When a lane opens
 * after another writer held one of the bucket's lanes (and on this JVM's first write to the bucket) it is
 * seeded above the highest stamp present for the bucket, so that a later owner whose clock runs behind still
 * stamps above every row acknowledged before it claimed the shard. Not thread-safe: used under the bucket's
 * lock.
 */
final class WriteSequence {
  /**
   * Where stamps come from: microseconds since the epoch (to the microsecond where the system clock has it:
   * two writers racing on one bucket then rarely stamp the same value). Replaced by tests to skew the clock.
   */
  static volatile LongSupplier clockMicros = WriteSequence::systemMicros;

  private static long systemMicros() {
    java.time.Instant now = java.time.Clock.systemUTC().instant();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  private final BucketWriter.Host host;
  private final int bucket;
  private long lastSequence = -1;
  /**
   * Whether this JVM claimed a lane from another writer after the write sequence was last raised above the
   * bucket's fresh tier (that lane may hold the other writer's higher stamps).
   */
  private boolean claimedSinceSeed;

  WriteSequence(BucketWriter.Host host, int bucket) {
    this.host = host;
    this.bucket = bucket;
  }

  /** Whether the sequence was seeded since it was last {@linkplain #forget() forgotten}. */
  boolean isSeeded() {
    return lastSequence >= 0;
  }

  /** Makes the next lane opening re-seed (another writer may have stamped above this JVM's stamps). */
  void forget() {
    lastSequence = -1;
  }

  /** A lane was claimed from another writer without re-seeding (see {@link #claimedSinceSeed}). */
  void claimedLane() {
    claimedSinceSeed = true;
  }

  boolean claimedSinceSeed() {
    return claimedSinceSeed;
  }

  /**
   * Raises the sequence above every stamp present for the bucket: the fresh tier's (WAL tail and unmerged
   * generations) and the base table's. Called after the lanes were claimed: a previous owner acknowledges a
   * put only if its entry was written before the claim, so every acknowledged row of the bucket is seen.
   */
  void seed() {
    claimedSinceSeed = false;
    long seed = Math.max(lastSequence, host.maxFreshSequence(bucket));
    // merged rows keep their stamps: a previous owner's clock may have run ahead of this one's
    seed = Math.max(seed, host.maxBaseSequence(bucket, Math.max(seed, clockMicros.getAsLong())));
    lastSequence = seed;
  }

  /** Raises the sequence above the bucket's fresh tier (after a lane was claimed since the seed). */
  void raiseAboveFresh() {
    lastSequence = Math.max(lastSequence, host.maxFreshSequence(bucket));
    claimedSinceSeed = false;
  }

  long next() {
    lastSequence = Math.max(clockMicros.getAsLong(), lastSequence + 1);
    return lastSequence;
  }

  /** Sets every row's write sequence of {@code batch} to {@code sequence}. */
  static void stamp(VectorSchemaRoot batch, long sequence) {
    BigIntVector seq = (BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
    for (int i = 0; i < batch.getRowCount(); i++) {
      seq.setSafe(i, sequence);
    }
    seq.setValueCount(batch.getRowCount());
  }
}
