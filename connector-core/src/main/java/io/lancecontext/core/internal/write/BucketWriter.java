package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resident writer of one bucket in this JVM: at most one per (store, bucket), shared by every task
 * of the JVM. A bucket writes to two MemWAL shards in turn, its <em>lanes</em>: when the active lane's
 * generation must be sealed (it is big or old, or a key would repeat in it), the other lane takes the
 * puts at once while the first is closed in the background. Sealing flushes every put of the
 * generation (about 2–3 ms per put with lance-core 7.0.0), so it must not stall writers.
 *
 * <p>Rows of one key are ordered by the write sequence the bucket stamps on every put ({@code _lc_seq}:
 * microseconds since the epoch by this JVM's clock, or one more than the previous stamp, whichever is
 * larger), in both lanes and across owners: every time a lane opens (so after any change of owner), the
 * sequence is first raised above the highest stamp present for the bucket, the fresh tier's (WAL tail and
 * unmerged generations) and, when another writer held a lane since this JVM last did, the base table's. A
 * later owner whose clock runs behind therefore still stamps above every row acknowledged before it
 * claimed the shard, and reads and merges, which both resolve a key to its highest stamp, agree with
 * the order the adds returned in ({@link WriteSequence}).
 *
 * <p>Group commit: calls that arrive while a put is in flight are combined into the next put (one WAL
 * entry); see {@link GroupCommit}. One lock per bucket guards all of it: the group commit's leader holds
 * it for a put, a transaction's publish from {@link #beginPublish()} to {@link #endPublish()}
 * ({@link PublishClaim}). Which lane takes the puts is {@link BucketLanes}'s job, which writer holds each
 * lane {@link LaneOwnership}'s, and the order of background seals {@link SealChain}'s. Thread-safe.
 */
public final class BucketWriter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BucketWriter.class);

  /** What a bucket writer needs from its store. */
  public interface Host {
    LanceDataset baseDataset();

    StoreFiles files();

    BufferAllocator allocator();

    Duration putTimeout();

    /** How long to leave a shard alone after another writer claimed it. */
    Duration fenceBackoff();

    /** {@code gc.grace}: how long a superseded shard-manifest version stays before garbage collection removes it. */
    Duration gcGrace();

    String name();

    /** The highest write sequence in a bucket's fresh tier (0 if none). */
    long maxFreshSequence(int bucket);

    /**
     * The highest write sequence the latest base table holds for {@code bucket} if it is above {@code floor},
     * else {@code floor}: of its rows, and the bucket's merged publish sequence.
     */
    long maxBaseSequence(int bucket, long floor);

    /** The highest write sequence in a shard's unsealed WAL tail, or -1 if it has none. */
    long tailSequence(String shardId);
  }

  private final Host host;
  private final int bucket;
  private final LaneWriter[] lanes = new LaneWriter[ShardIds.LANES];
  private final ReentrantLock lock = new ReentrantLock();
  private final SealChain seals;
  private final WriteSequence sequence;
  private final LaneOwnership ownership;
  private final BucketLanes bucketLanes;
  private final GroupCommit groupCommit;
  private final PublishClaim publish;

  /**
   * @param sealEntries seal the active generation once it holds this many WAL entries
   * @param sealBytes seal the active generation once it holds this many bytes
   */
  public BucketWriter(Host host, int bucket, long sealEntries, long sealBytes) {
    this.host = host;
    this.bucket = bucket;
    this.seals = new SealChain(host, bucket);
    for (int l = 0; l < lanes.length; l++) {
      lanes[l] = new LaneWriter(host, bucket, l, seals::chain);
    }
    this.sequence = new WriteSequence(host, bucket);
    this.ownership = new LaneOwnership(host, bucket, lanes, sequence);
    this.bucketLanes = new BucketLanes(host, bucket, lanes, ownership, sequence, sealEntries, sealBytes);
    this.groupCommit = new GroupCommit(host, bucket, lock, bucketLanes);
    this.publish = new PublishClaim(lock, lanes, bucketLanes, ownership, sequence);
  }

  public int bucket() {
    return bucket;
  }

  /** Checks rows against what the store holds right before they are put; throws to refuse them. */
  @FunctionalInterface
  public interface KeyCheck {
    /** Called under the bucket's lock with the caller's batch; must not close the batch. */
    void check(VectorSchemaRoot batch);
  }

  /**
   * Writes {@code batch} (in the dataset schema, keys unique, all in this bucket; {@code keyHashes} the
   * 64-bit hashes of its keys, see {@link KeyRoute}) durably, see the class comment, atomically with
   * {@code check} (null: none). Takes ownership of {@code batch}. The check
   * runs under the bucket's lock once this JVM holds every lane of the bucket (claiming lanes another
   * writer held), so it sees every row of the bucket acknowledged before; the put is acknowledged only
   * if no other writer claimed a lane of the bucket between the check and the acknowledgment. Otherwise
   * it throws {@link FencedWriterException} (not acknowledged; a retry checks again). What {@code check}
   * throws is thrown, and nothing of this call is written.
   *
   * @return where the put holding the rows went (shared with the callers whose rows it also held)
   */
  public PutReceipt put(VectorSchemaRoot batch, long[] keyHashes, KeyCheck check) {
    return groupCommit.put(batch, keyHashes, check);
  }

  /** Calls whose rows wait for a put (not yet taken into one). */
  public int queuedCalls() {
    return groupCommit.queuedCalls();
  }

  /**
   * Seals when the active generation is old enough, or closes idle writers (size is checked after every
   * put). Non-blocking: does nothing while a put holds the bucket.
   */
  public void maintain(Duration sealAge, Duration idle) {
    if (!lock.tryLock()) {
      return;
    }
    try {
      LaneWriter lane = bucketLanes.active();
      if (!lane.isOpen()) {
        return;
      }
      long now = System.nanoTime();
      if (lane.entries() > 0 && now - lane.firstPutNanos() >= sealAge.toNanos()) {
        bucketLanes.switchLanesLocked("the open generation is older than " + sealAge);
      } else if (now - lane.lastUseNanos() >= idle.toNanos()) {
        lane.sealAsync("idle for " + idle);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Seals both lanes now and waits (on request, at eviction and at JVM exit). */
  public void seal(String reason) {
    lock.lock();
    try {
      for (LaneWriter lane : lanes) {
        if (!lane.sealNow(reason)) {
          LOG.warn("{} bucket {}: a lane could not be sealed ({})", host.name(), bucket, reason);
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Seals every row of the bucket acknowledged before the call into generations, wherever it was
   * written: claims each lane another writer (another process, or an abandoned writer) left an unsealed
   * WAL tail in, older lane first (which fences that writer: its next put claims the lane back), then
   * seals both lanes and waits. The write sequence is re-seeded at this JVM's next put when a lane was
   * claimed from another writer.
   *
   * @return the lanes claimed from another writer
   */
  public int claimAndSeal(String reason) {
    lock.lock();
    try {
      return ownership.claimAndSeal(reason);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Starts a publish of a transaction touching this bucket: takes the bucket's lock (held until
   * {@link #endPublish()}) and makes this JVM the holder of every lane (claiming lanes another writer held,
   * which fences it: its next put claims back and re-seeds above every stamp present, the published
   * transaction's included). The publish then takes its sequence ({@link #publishSequence()}).
   */
  public void beginPublish() {
    publish.begin();
  }

  /**
   * The publish sequence every row of the transaction begun ({@link #beginPublish()}) reads as in this bucket:
   * the write sequence raised above every stamp present for the bucket, and its next value. Every put
   * acknowledged before this call is below it, every put of this JVM after it above it. Taken after the
   * publish announced itself ({@code PublishIntents}), right before its record is written.
   */
  public long publishSequence() {
    return publish.sequence();
  }

  /**
   * Ends a publish (see {@link #beginPublish()}), releasing the bucket's lock.
   *
   * @return whether every lane was still held with the epoch the publish claimed it with; if not, another
   *     writer claimed a lane before the transaction's record existed (and may have seeded its write
   *     sequence without the transaction): the lane is claimed back, so that writer's next put claims it
   *     again and re-seeds above the transaction, and the next put here re-seeds
   */
  public boolean endPublish() {
    return publish.end();
  }

  public boolean isOpen() {
    for (LaneWriter lane : lanes) {
      if (lane.isOpen()) {
        return true;
      }
    }
    return false;
  }

  /** Counters of one lane. */
  public record LaneStats(int bucket, int lane, String shardId, boolean open, long epoch, long openEntries,
      long openRows, long puts, long seals, long opens, long abandoned) {}

  public List<LaneStats> stats() {
    lock.lock();
    try {
      List<LaneStats> out = new ArrayList<>();
      for (int l = 0; l < lanes.length; l++) {
        LaneWriter w = lanes[l];
        out.add(new LaneStats(bucket, l, w.shardId(), w.isOpen(), w.epoch(), w.entries(), w.rows(), w.puts.get(),
            w.seals.get(), w.opens.get(), w.abandoned.get()));
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** Calls combined into a shared put, and lane switches, since the bucket writer was created. */
  public long[] counters() {
    return new long[] {groupCommit.grouped(), bucketLanes.switches()};
  }

  /**
   * Drops every lane's writer without sealing it (nothing is written): for a store that is no longer at its
   * location, whose memtables must not be flushed into the store that took its place. lance-core keeps the
   * batches of a writer that is never closed.
   */
  public void discard(String why) {
    lock.lock();
    try {
      for (LaneWriter lane : lanes) {
        lane.discard(why);
      }
    } finally {
      lock.unlock();
      seals.shutdown();
    }
  }

  @Override
  public void close() {
    try {
      seal("closing");
    } catch (LanceContextException e) {
      LOG.warn("{} bucket {}: closing failed: {}", host.name(), bucket, e.getMessage());
    } finally {
      seals.shutdown();
    }
  }
}
