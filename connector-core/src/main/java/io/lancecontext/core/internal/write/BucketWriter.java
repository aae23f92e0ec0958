package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalRepair;
import io.lancecontext.core.schema.SystemColumns;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
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
 * the order the adds returned in.
 *
 * <p>Group commit: calls that arrive while a put is in flight are combined into the next put (one WAL
 * entry), as long as no key repeats among them; each call returns once the put holding its rows was
 * acknowledged, or throws what that put threw. The caller that finds the bucket's lock free leads: it
 * puts the queued calls, wakes their callers when the put returns, and, letting go of the lock, wakes the
 * caller first in line to lead the next put. A caller whose rows a leader put therefore returns without
 * taking the lock itself (waiting for it behind the next leader's whole put is what kept groups small).
 * Thread-safe.
 */
public final class BucketWriter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BucketWriter.class);
  /** Largest group of callers' rows combined into one put. */
  static final long MAX_GROUP_ROWS = 65_536;

  /** What a bucket writer needs from its store. */
  public interface Host {
    LanceDataset baseDataset();

    StoreFiles files();

    BufferAllocator allocator();

    Duration putTimeout();

    /** How long to leave a shard alone after another writer claimed it. */
    Duration fenceBackoff();

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
  private final ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>();
  private int active;
  private long lastSequence = -1;
  /** The epoch this JVM last held each lane with (-1: never). */
  private final long[] ownEpochs = {-1, -1};
  /** Where stamps come from: microseconds since the epoch. Replaced by tests to skew the clock. */
  static volatile java.util.function.LongSupplier clockMicros = () -> System.currentTimeMillis() * 1_000L;
  private final java.util.concurrent.ExecutorService sealers;
  private java.util.concurrent.Future<Boolean> lastSeal;
  private final AtomicLong grouped = new AtomicLong();

  private final AtomicLong switches = new AtomicLong();

  private final long sealEntries;
  private final long sealBytes;

  /**
   * @param sealEntries seal the active generation once it holds this many WAL entries
   * @param sealBytes seal the active generation once it holds this many bytes
   */
  public BucketWriter(Host host, int bucket, long sealEntries, long sealBytes) {
    this.host = host;
    this.bucket = bucket;
    this.sealEntries = sealEntries;
    this.sealBytes = sealBytes;
    this.sealers = java.util.concurrent.Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "lancecontext-seal-" + host.name() + "-" + bucket);
      t.setDaemon(true);
      return t;
    });
    for (int l = 0; l < lanes.length; l++) {
      lanes[l] = new LaneWriter(host, bucket, l, this::chainSeal);
    }
  }

  public int bucket() {
    return bucket;
  }

  /**
   * Writes {@code batch} (in the dataset schema, keys unique, all in this bucket) durably; see the class
   * comment. Takes ownership of {@code batch}.
   */
  public PutReceipt put(VectorSchemaRoot batch, Collection<String> keys) {
    return put(batch, keys, null);
  }

  /** Checks rows against what the store holds right before they are put; throws to refuse them. */
  @FunctionalInterface
  public interface KeyCheck {
    /** Called under the bucket's lock with the caller's batch and keys; must not close the batch. */
    void check(VectorSchemaRoot batch, Collection<String> keys);
  }

  /**
   * As {@link #put(VectorSchemaRoot, Collection)}, atomically with {@code check} (null: none): the check
   * runs under the bucket's lock once this JVM holds every lane of the bucket (claiming lanes another
   * writer held), so it sees every row of the bucket acknowledged before; the put is acknowledged only
   * if no other writer claimed a lane of the bucket between the check and the acknowledgment. Otherwise
   * it throws {@link FencedWriterException} (not acknowledged; a retry checks again). What {@code check}
   * throws is thrown, and nothing of this call is written.
   *
   * @return where the put holding the rows went (shared with the callers whose rows it also held)
   */
  public PutReceipt put(VectorSchemaRoot batch, Collection<String> keys, KeyCheck check) {
    if (Thread.currentThread().isInterrupted()) {
      batch.close();
      throw interrupted("before its rows were handed to a put; nothing was written");
    }
    Request request = new Request(batch, keys, check);
    queue.add(request);
    boolean interrupted = false;
    while (!request.done) {
      if (lock.tryLock()) {
        try {
          while (!request.done) {
            putNextGroupLocked();
          }
        } finally {
          lock.unlock();
        }
        wakeNextLeader();
        break;
      }
      if (Thread.interrupted()) {
        if (queue.remove(request)) {
          batch.close();
          Thread.currentThread().interrupt();
          throw interrupted("while its rows waited for a put; nothing was written");
        }
        interrupted = true;  // another caller's put holds the rows: its outcome decides whether they are durable
      }
      // the leader wakes the callers whose rows it put, and the next leader when it lets go of the lock;
      // the timeout only bounds a wake-up that raced with this caller going to sleep
      java.util.concurrent.locks.LockSupport.parkNanos(this, FOLLOWER_PARK_NANOS);
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (request.error != null) {
      throw request.error;
    }
    if (Thread.currentThread().isInterrupted()) {
      throw interrupted("while the put holding its rows was in flight; the put completed, its rows are durable");
    }
    return request.receipt;
  }

  /**
   * An interrupted call fails alone: the put it shared with other callers completes for them, and the
   * bucket's writers stay open.
   */
  private io.lancecontext.core.error.WriteInterruptedException interrupted(String when) {
    return new io.lancecontext.core.error.WriteInterruptedException(host.name() + " bucket " + bucket
        + ": the calling thread was interrupted " + when);
  }

  /**
   * One caller's rows waiting for a put. {@code error} and {@code receipt} are written before {@code done}
   * (volatile), which the caller reads without the bucket's lock.
   */
  private static final class Request {
    final VectorSchemaRoot batch;
    final Collection<String> keys;
    final KeyCheck check;
    final Thread caller = Thread.currentThread();
    volatile boolean done;
    RuntimeException error;
    PutReceipt receipt;

    Request(VectorSchemaRoot batch, Collection<String> keys, KeyCheck check) {
      this.batch = batch;
      this.keys = keys;
      this.check = check;
    }

    /** Marks the request complete and wakes its caller. */
    void complete(PutReceipt receipt, RuntimeException error) {
      this.receipt = receipt;
      this.error = error;
      done = true;
      java.util.concurrent.locks.LockSupport.unpark(caller);
    }
  }

  /** Calls whose rows wait for a put (not yet taken into one). */
  public int queuedCalls() {
    return queue.size();
  }

  /** The longest a waiting caller sleeps before it looks at its request and the bucket's lock again. */
  private static final long FOLLOWER_PARK_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(1);

  /** After a leader let go of the lock: the caller first in line takes it and puts the next group. */
  private void wakeNextLeader() {
    Request next = queue.peek();
    if (next != null) {
      java.util.concurrent.locks.LockSupport.unpark(next.caller);
    }
  }

  /** Takes the longest run of queued requests without a repeated key and puts them as one entry. */
  private void putNextGroupLocked() {
    List<Request> group = new ArrayList<>();
    Set<String> groupKeys = new HashSet<>();
    long rows = 0;
    for (Request head = queue.peek(); head != null; head = queue.peek()) {
      if (!group.isEmpty() && (rows + head.batch.getRowCount() > MAX_GROUP_ROWS || anyIn(head.keys, groupKeys))) {
        break;
      }
      if (!queue.remove(head)) {
        continue;  // its caller was interrupted and withdrew it
      }
      group.add(head);
      groupKeys.addAll(head.keys);
      rows += head.batch.getRowCount();
    }
    if (group.isEmpty()) {
      return;
    }
    long[] checkedEpochs = null;
    if (group.stream().anyMatch(r -> r.check != null)) {
      try {
        checkedEpochs = holdEveryLaneLocked(groupKeys);
      } catch (RuntimeException e) {
        finish(group, e);
        return;
      }
      for (java.util.Iterator<Request> it = group.iterator(); it.hasNext(); ) {
        Request r = it.next();
        if (r.check == null) {
          continue;
        }
        try {
          r.check.check(r.batch, r.keys);
        } catch (RuntimeException e) {
          it.remove();
          finish(List.of(r), e);
        }
      }
      if (group.isEmpty()) {
        return;
      }
      groupKeys = new HashSet<>();
      for (Request r : group) {
        groupKeys.addAll(r.keys);
      }
    }
    RuntimeException error = null;
    PutReceipt receipt = null;
    try {
      VectorSchemaRoot combined;
      if (group.size() == 1) {
        combined = group.get(0).batch;
      } else {
        List<VectorSchemaRoot> parts = new ArrayList<>();
        group.forEach(r -> parts.add(r.batch));
        try {
          combined = RowCopier.concat(parts, host.allocator());
        } finally {
          parts.forEach(VectorSchemaRoot::close);
        }
        grouped.addAndGet(group.size());
      }
      receipt = putLocked(combined, groupKeys, checkedEpochs == null);
      if (checkedEpochs != null) {
        requireLanesHeldSince(checkedEpochs, receipt.lane());
      }
    } catch (RuntimeException e) {
      error = e;
      receipt = null;
    }
    for (Request r : group) {
      r.complete(receipt, error);
    }
  }

  /** Completes requests that are not put: their batches are freed. */
  private static void finish(List<Request> requests, RuntimeException error) {
    for (Request r : requests) {
      r.batch.close();
      r.complete(null, error);
    }
  }

  /**
   * Makes this JVM the holder of every lane of the bucket before a checked put: opens the lane the put
   * goes to, and claims every lane another writer held since this JVM last did (a lane this JVM closed
   * is still its own: no other writer can write it without claiming it).
   *
   * @return the epoch each lane is held with
   */
  private long[] holdEveryLaneLocked(Collection<String> keys) {
    prepareLocked(keys);
    long[] epochs = new long[lanes.length];
    try {
      for (int l = 0; l < lanes.length; l++) {
        if (!lanes[l].isOpen() && heldByAnother(l)) {
          WalRepair.beforeOpen(host.files(), lanes[l].shardId(), host.allocator(), host.name() + " bucket " + bucket);
          lanes[l].recover();
          ownEpochs[l] = lanes[l].epoch();
          claimedSinceSeed = true;
        }
        epochs[l] = lanes[l].isOpen() ? lanes[l].epoch() : latestEpoch(l);
      }
    } catch (java.io.IOException e) {
      throw new StorageException(host.name() + " bucket " + bucket + ": reading its shard manifests", e);
    }
    return epochs;
  }

  /**
   * After a checked put to lane {@code written}: fails unless every lane is still held with the epoch it
   * had at the check. For the written lane that is its writer's epoch: a put that lost the lane and won
   * it back ({@code LaneWriter} re-claims within {@code write.put-timeout}) holds it with a newer epoch,
   * and another writer may have added the same keys in between.
   */
  private void requireLanesHeldSince(long[] epochs, int written) {
    try {
      for (int l = 0; l < lanes.length; l++) {
        long now = l == written ? lanes[l].epoch() : latestEpoch(l);
        if (now != epochs[l]) {
          throw new FencedWriterException(host.name() + " bucket " + bucket + ": another writer claimed lane " + l
              + " of the bucket between the key check and the put; the rows of this call were not acknowledged (a "
              + "retry checks the keys again)");
        }
      }
    } catch (java.io.IOException e) {
      throw new StorageException(host.name() + " bucket " + bucket + ": reading its shard manifests", e);
    }
  }

  /** The epoch of the lane's newest manifest; 0 for a lane nobody opened (no other writer holds it). */
  private long latestEpoch(int lane) throws java.io.IOException {
    return ShardManifests.latest(host.files(), lanes[lane].shardId()).writerEpoch();
  }

  /** Whether another writer claimed {@code lane} since this JVM last held it (or, if never, at all). */
  private boolean heldByAnother(int lane) throws java.io.IOException {
    long epoch = latestEpoch(lane);
    return epoch != ownEpochs[lane] && epoch != 0;
  }

  private static boolean anyIn(Collection<String> keys, Set<String> set) {
    for (String k : keys) {
      if (set.contains(k)) {
        return true;
      }
    }
    return false;
  }

  /** Moves the puts to the other lane if the open one holds a key of {@code keys}; opens the lane. */
  private void prepareLocked(Collection<String> keys) {
    if (lanes[active].holdsAny(keys)) {
      switchLanesLocked("a key of this put is already in the open generation");
    }
    openActiveLocked();
  }

  /** Puts {@code batch} (taking ownership of it) on the active lane; returns where it went. */
  private PutReceipt putLocked(VectorSchemaRoot batch, Collection<String> keys, boolean reclaim) {
    try {
      prepareLocked(keys);
      stamp(batch, nextSequence());
    } catch (RuntimeException e) {
      batch.close();
      throw e;
    }
    int written = active;
    LaneWriter lane = lanes[active];
    lane.put(batch, keys, reclaim);
    ownEpochs[active] = lane.epoch();
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

  /** How far past the seal thresholds a lane may grow while the other lane is still being sealed. */
  static final int HARD_LIMIT = 4;

  /**
   * Runs {@code close} once the bucket's previous seal ended (or after {@code write.put-timeout}: a
   * close that hangs on a fenced writer must not stop every later seal). Called under the bucket lock.
   */
  private java.util.concurrent.Future<Boolean> chainSeal(java.util.concurrent.Callable<Boolean> close) {
    java.util.concurrent.Future<Boolean> previous = lastSeal;
    long timeoutMillis = host.putTimeout().toMillis();
    lastSeal = sealers.submit(() -> {
      if (previous != null) {
        try {
          previous.get(timeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
          LOG.warn("{} bucket {}: the previous seal did not finish ({}); sealing anyway", host.name(), bucket, e.toString());
        }
      }
      return close.call();
    });
    return lastSeal;
  }

  /**
   * Before this JVM first writes the bucket, and whenever another writer held one of its lanes since:
   * seal what other writers left unsealed in the lanes this JVM does not hold open, the lane with the
   * older rows first, so that a bucket's generations are always flushed (and so merged) in the order
   * their rows were written.
   */
  private void recoverLocked() {
    long[] tails = new long[lanes.length];
    for (int l = 0; l < lanes.length; l++) {
      if (lanes[l].isOpen()) {
        tails[l] = -1;
        continue;
      }
      WalRepair.beforeOpen(host.files(), lanes[l].shardId(), host.allocator(), host.name() + " bucket " + bucket);
      tails[l] = host.tailSequence(lanes[l].shardId());
    }
    Integer[] order = {0, 1};
    java.util.Arrays.sort(order, java.util.Comparator.comparingLong(l -> tails[l]));
    for (int l : order) {
      if (tails[l] >= 0) {
        lanes[l].recover();
        ownEpochs[l] = lanes[l].epoch();
      }
    }
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
    if (lane.isOpen() && lastSequence >= 0) {
      return;
    }
    boolean foreign = lastSequence < 0;
    boolean activeForeign = ownEpochs[active] < 0;
    try {
      for (int l = 0; l < lanes.length; l++) {
        if (!lanes[l].isOpen() && heldByAnother(l)) {
          foreign = true;  // another writer claimed this lane since this JVM last held it
          activeForeign |= l == active;
        }
      }
    } catch (java.io.IOException e) {
      throw new StorageException(host.name() + " bucket " + bucket + ": reading its shard manifests", e);
    }
    if (foreign) {
      // another writer held a lane: seal what it left unsealed, older lane first, before this JVM writes a
      // row of the bucket, so that no older row of a key stays unsealed in one lane while a newer one is
      // merged from the other (reads prefer the fresh tier to the base table)
      recoverLocked();
    }
    if (!lane.isOpen()) {
      if (activeForeign) {
        // only another process can have left an incomplete entry: this JVM's own entries are whole
        WalRepair.beforeOpen(host.files(), lane.shardId(), host.allocator(), host.name() + " bucket " + bucket);
      }
      lane.recover();
      ownEpochs[active] = lane.epoch();
    }
    if (!foreign) {
      // no other writer held a lane of the bucket since this JVM seeded: every stamp in it is this JVM's
      return;
    }
    claimedSinceSeed = false;
    long seed = Math.max(lastSequence, host.maxFreshSequence(bucket));
    // merged rows keep their stamps: a previous owner's clock may have run ahead of this one's
    seed = Math.max(seed, host.maxBaseSequence(bucket, Math.max(seed, clockMicros.getAsLong())));
    lastSequence = seed;
  }

  private long nextSequence() {
    lastSequence = Math.max(clockMicros.getAsLong(), lastSequence + 1);
    return lastSequence;
  }

  private static void stamp(VectorSchemaRoot batch, long sequence) {
    BigIntVector seq = (BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
    for (int i = 0; i < batch.getRowCount(); i++) {
      seq.setSafe(i, sequence);
    }
    seq.setValueCount(batch.getRowCount());
  }

  /** Seals the active lane in the background and moves the puts to the other lane. */
  private void switchLanesLocked(String reason) {
    LaneWriter current = lanes[active];
    if (!current.isOpen()) {
      return;
    }
    current.sealAsync(reason);
    active = (active + 1) % lanes.length;
    switches.incrementAndGet();
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
      LaneWriter lane = lanes[active];
      if (!lane.isOpen()) {
        return;
      }
      long now = System.nanoTime();
      if (lane.entries() > 0 && now - lane.firstPutNanos() >= sealAge.toNanos()) {
        switchLanesLocked("the open generation is older than " + sealAge);
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
      boolean[] foreign = new boolean[lanes.length];
      for (int l = 0; l < lanes.length; l++) {
        foreign[l] = !lanes[l].isOpen() && heldByAnother(l);
      }
      recoverLocked();
      int claimed = 0;
      for (int l = 0; l < lanes.length; l++) {
        if (foreign[l] && lanes[l].isOpen()) {
          claimed++;
        }
      }
      if (claimed > 0) {
        lastSequence = -1;  // the next put re-seeds above what the other writer stamped
      }
      for (LaneWriter lane : lanes) {
        if (!lane.sealNow(reason)) {
          throw new FencedWriterException(host.name() + " bucket " + bucket + ": a lane could not be sealed (" + reason
              + "); another writer may have claimed it");
        }
      }
      return claimed;
    } catch (java.io.IOException e) {
      throw new StorageException(host.name() + " bucket " + bucket + ": reading its shard manifests", e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether this JVM claimed a lane from another writer after the write sequence was last raised above the
   * bucket's fresh tier (that lane may hold the other writer's higher stamps).
   */
  private boolean claimedSinceSeed;

  /** Whether another writer claimed any lane of the bucket since this JVM last held it (an open lane included). */
  private boolean anyLaneHeldByAnother() throws java.io.IOException {
    for (int l = 0; l < lanes.length; l++) {
      if (heldByAnother(l)) {
        return true;
      }
    }
    return false;
  }

  /** The lane epochs a publish claimed the bucket with (null: no publish holds the bucket). */
  private long[] publishEpochs;

  /**
   * Starts a publish of a transaction touching this bucket: takes the bucket's lock (held until
   * {@link #endPublish()}), makes this JVM the holder of every lane (claiming lanes another writer held,
   * which fences it: its next put claims back and re-seeds above every stamp present, the published
   * transaction's included), raises the write sequence above every stamp present for the bucket and
   * returns the next one: the publish sequence every row of the transaction in this bucket reads as.
   * Every put acknowledged before this call is below it, every put of this JVM after it above it.
   */
  public long beginPublish() {
    lock.lock();
    try {
      long[] epochs = holdEveryLaneLocked(List.of());
      if (claimedSinceSeed || anyLaneHeldByAnother()) {
        // a lane claimed after the seed may hold puts of the writer it was claimed from. Otherwise every stamp
        // of the bucket above the seed is this JVM's and below lastSequence: the fresh tier is not read (a
        // snapshot of it costs in proportion to its size, on every publish of the bulk path)
        lastSequence = Math.max(lastSequence, host.maxFreshSequence(bucket));
        claimedSinceSeed = false;
      }
      publishEpochs = epochs;
      return nextSequence();
    } catch (java.io.IOException e) {
      lock.unlock();
      throw new StorageException(host.name() + " bucket " + bucket + ": reading its shard manifests", e);
    } catch (RuntimeException e) {
      lock.unlock();
      throw e;
    }
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
    try {
      long[] epochs = publishEpochs;
      publishEpochs = null;
      if (epochs == null) {
        return true;
      }
      boolean held = true;
      for (int l = 0; l < lanes.length; l++) {
        if (latestEpoch(l) != epochs[l]) {
          held = false;
          lastSequence = -1;
          lanes[l].reclaimIfFenced();
          ownEpochs[l] = lanes[l].epoch();
        }
      }
      return held;
    } catch (java.io.IOException e) {
      throw new StorageException(host.name() + " bucket " + bucket + ": reading its shard manifests", e);
    } finally {
      lock.unlock();
    }
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
    return new long[] {grouped.get(), switches.get()};
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
      sealers.shutdown();
    }
  }

  @Override
  public void close() {
    try {
      seal("closing");
    } catch (LanceContextException e) {
      LOG.warn("{} bucket {}: closing failed: {}", host.name(), bucket, e.getMessage());
    } finally {
      sealers.shutdown();
    }
  }
}
