package io.lancecontext.core.internal.write;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The two lanes of a bucket and which one takes the puts: a put goes to the active lane, which is opened
 * (claimed, and the write sequence seeded, see {@link WriteSequence}) first if needed; when the active lane's
 * generation must be sealed (it is big, or a key would repeat in it), the other lane takes the puts at once
 * while the first is sealed in the background. Not thread-safe: its {@link BucketWriter} calls it under the
 * bucket's lock.
 */
final class BucketLanes {
  /** How far past the seal thresholds a lane may grow while the other lane is still being sealed. */
  static final int HARD_LIMIT = 4;

  private final BucketWriter.Host host;
  private final int bucket;
  private final LaneWriter[] lanes;
  private final LaneOwnership ownership;
  private final WriteSequence sequence;
  private final long sealEntries;
  private final long sealBytes;
  private final AtomicLong switches = new AtomicLong();
  private int active;

  BucketLanes(BucketWriter.Host host, int bucket, LaneWriter[] lanes, LaneOwnership ownership, WriteSequence sequence,
      long sealEntries, long sealBytes) {
    this.host = host;
    this.bucket = bucket;
    this.lanes = lanes;
    this.ownership = ownership;
    this.sequence = sequence;
    this.sealEntries = sealEntries;
    this.sealBytes = sealBytes;
  }

  LaneWriter active() {
    return lanes[active];
  }

  /** Lane switches since the bucket writer was created. */
  long switches() {
    return switches.get();
  }

  /**
   * Makes this JVM the holder of every lane of the bucket before a checked put: opens the lane the put
   * goes to, and claims every lane another writer held since this JVM last did.
   *
   * @return the epoch each lane is held with
   */
  long[] holdEveryLaneLocked(long[] keyHashes) {
    prepareLocked(keyHashes);
    return ownership.claimEveryLane();
  }

  /** See {@link LaneOwnership#requireHeldSince}. */
  void requireLanesHeldSince(long[] epochs, int written) {
    ownership.requireHeldSince(epochs, written);
  }

  /** Moves the puts to the other lane if the open one holds a key of those hashes; opens the lane. */
  private void prepareLocked(long[] keyHashes) {
    if (lanes[active].holdsAny(keyHashes)) {
      switchLanesLocked("a key of this put is already in the open generation");
    }
    openActiveLocked();
  }

  /** Puts {@code batch} (taking ownership of it) on the active lane; returns where it went. */
  PutReceipt putLocked(VectorSchemaRoot batch, long[] keyHashes, boolean reclaim) {
    try {
      prepareLocked(keyHashes);
      WriteSequence.stamp(batch, sequence.next());
    } catch (RuntimeException e) {
      batch.close();
      throw e;
    }
    int written = active;
    LaneWriter lane = lanes[active];
    lane.put(batch, keyHashes, reclaim);
    ownership.held(active);
    PutReceipt receipt = new PutReceipt(bucket, written, lane.shardId(), lane.epoch(), lane.lastWalPosition());
    boolean full = lane.entries() >= sealEntries || lane.bytes() >= sealBytes;
    // while the other lane is still being sealed, switching would make the next put wait for it: let this
    // lane grow instead, up to HARD_LIMIT times the threshold (lance-core's own limit is 8,000 puts)
    boolean mustSeal = lane.entries() >= HARD_LIMIT * sealEntries || lane.bytes() >= HARD_LIMIT * sealBytes;
    if (full && (mustSeal || !lanes[(active + 1) % lanes.length].isSealing())) {
      switchLanesLocked("the open generation holds " + lane.entries() + " WAL entries, " + lane.bytes() + " bytes");
    }
    return receipt;
  }

  /**
   * Opens the active lane if it is not open (claiming its shard, after moving aside an incomplete WAL
   * entry a killed writer left), then, on the JVM's first write to the bucket or when another writer held
   * one of its lanes since, raises the write sequence above every stamp present for the bucket (otherwise
   * every stamp in it is this JVM's, and reading them would cost a fresh-tier refresh under the lock on
   * every lane switch). The stamps are read after the claim: a previous owner acknowledges a put only if
   * its entry was written before the claim, so every acknowledged row of the bucket is seen.
   */
  private void openActiveLocked() {
    LaneWriter lane = lanes[active];
    if (lane.isOpen() && sequence.isSeeded()) {
      return;
    }
    boolean foreign = !sequence.isSeeded();
    boolean activeForeign = ownership.neverHeld(active);
    try {
      for (int l = 0; l < lanes.length; l++) {
        if (!lanes[l].isOpen() && ownership.heldByAnother(l)) {
          foreign = true;  // another writer claimed this lane since this JVM last held it
          activeForeign |= l == active;
        }
      }
    } catch (IOException e) {
      throw ownership.manifestsUnreadable(e);
    }
    if (foreign) {
      // another writer held a lane: seal what it left unsealed, older lane first, before this JVM writes a
      // row of the bucket, so that no older row of a key stays unsealed in one lane while a newer one is
      // merged from the other (reads prefer the fresh tier to the base table)
      ownership.recover();
    }
    if (!lane.isOpen()) {
      if (activeForeign) {
        // only another process can have left an incomplete entry: this JVM's own entries are whole
        ownership.repairBeforeOpen(active);
      }
      lane.recover();
      ownership.held(active);
    }
    if (!foreign) {
      // no other writer held a lane of the bucket since this JVM seeded: every stamp in it is this JVM's
      return;
    }
    sequence.seed();
  }

  /** Seals the active lane in the background and moves the puts to the other lane. */
  void switchLanesLocked(String reason) {
    LaneWriter current = lanes[active];
    if (!current.isOpen()) {
      return;
    }
    current.sealAsync(reason);
    active = (active + 1) % lanes.length;
    switches.incrementAndGet();
  }
}
