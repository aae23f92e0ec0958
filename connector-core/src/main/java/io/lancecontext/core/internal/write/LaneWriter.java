package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.error.WriteTimeoutException;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.MemWalShardWriter;
import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One lane of a bucket: the resident lance-core shard writer ({@link MemWalShardWriter}) of one MemWAL shard in
 * this JVM, opened on first use and re-opened after it is sealed, fenced or idle-closed. Not thread-safe: its
 * {@link BucketWriter} calls it under the bucket's lock (only a seal's close runs on another thread,
 * on a writer it has already let go of).
 *
 * <p>Contract of {@link #put}: when it returns, the rows are in a durable WAL entry that other
 * processes read, and this writer still owned the shard after the entry was written, so a later owner
 * replays it. A writer that finds the shard claimed by another writer is abandoned, never closed
 * (lance-core 7.0.0 blocks forever in a fenced writer's {@code put} and {@code close}); the put then
 * waits a jittered back-off and claims the shard back, and puts the same batch (same write sequence)
 * again, as often as {@code write.put-timeout} allows. Only when that budget is spent does it throw
 * {@link FencedWriterException} (or {@link WriteTimeoutException} for a put that hangs), and the rows
 * are not acknowledged. A put that fails otherwise throws what {@link LanceErrors} makes of it.
 *
 * <p>Interrupts of the calling thread do not abandon the writer: the waits of a put continue (they are
 * bounded by {@code write.put-timeout}) and the interrupt status is restored for the caller to act on.
 *
 * <p>lance-core's own memtable rotation is never reached (it acknowledges puts before their WAL entry
 * exists); a lane is sealed by closing its writer, which flushes the memtable into a generation.
 */
final class LaneWriter {
  private static final Logger LOG = LoggerFactory.getLogger(LaneWriter.class);
  /** A put right after a successful fencing check (of the previous put) skips the check before it. */
  private static final long RECHECK_BEFORE_PUT_MILLIS = 1_000;

  private final BucketWriter.Host host;
  private final int bucket;
  private final int lane;
  private final String shardId;
  private final String label;
  private final LaneSeal seal;
  private final LaneMemtable memtable = new LaneMemtable();
  private final FenceBackoff backoff;

  private MemWalShardWriter writer;
  private FencingGuard guard;
  private ExecutorService thread;
  private long lastUseNanos = System.nanoTime();
  /** When fencing was last checked successfully (an hour before construction: never). */
  private long lastCheckedNanos = System.nanoTime() - TimeUnit.HOURS.toNanos(1);
  private boolean batchHeldByNative;
  /** The WAL position the open writer's next put writes (lance-core numbers a shard's entries consecutively). */
  private long nextWalPosition;
  private long lastWalPosition = -1;

  final AtomicLong puts = new AtomicLong();
  final AtomicLong seals = new AtomicLong();
  final AtomicLong opens = new AtomicLong();
  final AtomicLong abandoned = new AtomicLong();

  /**
   * {@code sealChain} runs a close after every close the bucket started before it (so that a bucket's
   * generations are flushed in the order they were sealed).
   */
  LaneWriter(BucketWriter.Host host, int bucket, int lane,
      java.util.function.Function<Callable<Boolean>, Future<Boolean>> sealChain) {
    this.host = host;
    this.bucket = bucket;
    this.lane = lane;
    this.shardId = ShardIds.forLane(bucket, lane);
    this.label = host.name() + " bucket " + bucket + " lane " + lane;
    this.seal = new LaneSeal(host, label, sealChain);
    this.backoff = new FenceBackoff(host, label);
  }

  String shardId() {
    return shardId;
  }

  boolean isOpen() {
    return writer != null;
  }

  long entries() {
    return memtable.entries();
  }

  long bytes() {
    return memtable.bytes();
  }

  long rows() {
    return memtable.rows();
  }

  long firstPutNanos() {
    return memtable.firstPutNanos();
  }

  long lastUseNanos() {
    return lastUseNanos;
  }

  /** Whether a background seal of this lane is still running. */
  boolean isSealing() {
    return seal.isRunning();
  }

  long epoch() {
    return guard == null ? -1 : guard.epoch();
  }

  /** The WAL position of this lane's last acknowledged put (-1 before the first). */
  long lastWalPosition() {
    return lastWalPosition;
  }

  /** Whether a key of those hashes ({@code keyHashes}, see {@link KeyRoute}) is in the open generation. */
  boolean holdsAny(long[] keyHashes) {
    return writer != null && memtable.holdsAny(keyHashes);
  }

  /**
   * Writes {@code batch} (dataset schema, keys unique and not in the open generation, write sequence
   * stamped) durably, winning the shard back from another writer within {@code write.put-timeout} if
   * needed (see the class comment). Takes ownership of {@code batch}: it is closed here, or deliberately
   * leaked if a native put of it is stuck. With {@code reclaim} false a put that finds another writer
   * holding the shard fails at once (not acknowledged) instead of winning it back: a put whose rows were
   * checked against the store (unique-ids) must be checked again after another writer held it.
   */
  void put(VectorSchemaRoot batch, long[] keyHashes, boolean reclaim) {
    batchHeldByNative = false;
    try {
      withShard(deadline -> attempt(batch, keyHashes, deadline, !reclaim), reclaim);
    } finally {
      if (!batchHeldByNative) {
        batch.close();
      }
    }
  }

  /** One step that needs the shard; throws {@link FencedWriterException} when another writer has it. */
  @FunctionalInterface
  private interface ShardStep {
    void run(long deadline) throws IOException;
  }

  /**
   * Runs {@code step} until it succeeds, re-claiming the shard after a jittered back-off each time it
   * finds another writer holding it, within {@code write.put-timeout}.
   */
  private void withShard(ShardStep step) {
    withShard(step, true);
  }

  private void withShard(ShardStep step, boolean reclaim) {
    long deadline = System.nanoTime() + host.putTimeout().toNanos();
    try {
      while (true) {
        try {
          step.run(deadline);
          return;
        } catch (FencedWriterException e) {
          if (!reclaim) {
            throw e;
          }
          if (!backoff.canRetryBefore(deadline)) {
            throw new FencedWriterException(label + ": another writer holds the shard and this JVM did not win it back "
                + "within " + host.putTimeout() + " (write.put-timeout); the rows of this call were not acknowledged",
                e);
          }
          LOG.debug("{}: claiming the shard back after: {}", label, e.getMessage());
        }
      }
    } catch (IOException e) {
      abandon("I/O failure while checking the shard manifest");
      throw new StorageException(label + ": reading its manifest", e);
    }
  }

  /**
   * One try: (re-)claim the shard if needed, check fencing unless it was checked within
   * {@link #RECHECK_BEFORE_PUT_MILLIS} (or always, with {@code alwaysCheck}), put, check fencing again. For
   * a plain put only the check after it decides the acknowledgement (another writer may claim the shard
   * right after any check before it); the one before spares a put to a writer fenced while it was idle. A
   * put whose keys were checked against the store (unique-ids) always checks before: its caller took this
   * lane's epoch as the one the keys were checked under, and a stale writer's put must not become durable
   * under it (two racing writers could then both find the other's unacknowledged row).
   */
  private void attempt(VectorSchemaRoot batch, long[] keyHashes, long deadline, boolean alwaysCheck)
      throws IOException {
    lastUseNanos = System.nanoTime();
    openIfClosed(deadline);
    if (alwaysCheck || System.nanoTime() - lastCheckedNanos > TimeUnit.MILLISECONDS.toNanos(RECHECK_BEFORE_PUT_MILLIS)) {
      checkFenced();
    }
    long bytes = LaneMemtable.bytes(batch);
    BufferAllocator allocator = host.allocator();
    MemWalShardWriter w = writer;
    runOnWriterThread("put " + batch.getRowCount() + " rows", () -> {
      w.put(batch, allocator);
      return null;
    }, true, deadline);
    checkFenced();
    backoff.acknowledged();
    lastWalPosition = nextWalPosition++;
    memtable.add(keyHashes, batch.getRowCount(), bytes);
    puts.incrementAndGet();
    lastUseNanos = System.nanoTime();
  }

  /**
   * Seals the open generation in the background: the writer is let go at once and closed (its memtable
   * flushed into a generation) in the background, after the bucket's earlier seals, so that the
   * generations of a bucket's lanes are flushed in the order they were sealed; the lane re-opens only
   * after that finished.
   */
  void sealAsync(String reason) {
    if (writer == null) {
      return;
    }
    MemWalShardWriter w = writer;
    long entries = memtable.entries();
    long started = System.nanoTime();
    ExecutorService t = thread;
    seal.start(started, () -> {
      try {
        w.close();
        seals.incrementAndGet();
        LOG.debug("{}: sealed {} entries in {} ms ({})", label, entries, (System.nanoTime() - started) / 1_000_000, reason);
        return true;
      } catch (RuntimeException e) {
        // the rows stay in the WAL; the next writer of this lane replays and seals them
        LOG.warn("{}: sealing {} entries failed ({}); the next writer replays them", label, entries, e.toString());
        return false;
      }
    });
    t.shutdown();
    writer = null;
    guard = null;
    thread = null;
    resetMemtable();
  }

  /**
   * Opens the lane, which seals a WAL tail left by a previous owner (winning the shard back from another
   * writer within {@code write.put-timeout} if needed).
   */
  void recover() {
    withShard(this::openIfClosed);
  }

  /**
   * Claims the shard back if another writer claimed it since this writer held it (after the jittered
   * {@code write.fence-backoff}), so that writer re-seeds its write sequence when it claims the shard again.
   */
  void reclaimIfFenced() {
    withShard(deadline -> {
      openIfClosed(deadline);
      checkFenced();
    });
  }

  /** Seals now and waits; false if it failed (the writer is then abandoned). */
  boolean sealNow(String reason) {
    if (writer == null) {
      return awaitSealing();
    }
    awaitSealing();
    sealAsync(reason);
    return awaitSealing();
  }

  /**
   * Waits for a background seal of this lane, bounded by {@code write.put-timeout}; false if it did not
   * end or failed.
   */
  boolean awaitSealing() {
    return seal.await(System.nanoTime() + host.putTimeout().toNanos());
  }

  /** Claims the shard (after the back-off if this lane lost it) unless the lane's writer is open. */
  private void openIfClosed(long deadline) throws IOException {
    if (writer == null) {
      backoff.backOff(deadline);
      openLocked(deadline);
    }
  }

  private void openLocked(long deadline) throws IOException {
    if (!seal.await(deadline) && seal.isPending()) {
      throw new WriteTimeoutException(label + ": the lane's previous seal did not finish within " + host.putTimeout()
          + " (write.put-timeout); the rows of this call were not acknowledged");
    }
    long before = FencingGuard.versionBeforeOpen(host.files(), shardId);
    thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "lancecontext-" + host.name() + "-" + bucket + "." + lane);
      t.setDaemon(true);
      return t;
    });
    LanceDataset base = host.baseDataset();
    writer = runOnWriterThread("open the shard writer", () -> MemWalShardWriter.open(base, shardId), false,
        deadline);
    try {
      guard = FencingGuard.afterOpen(host.files(), shardId, before, host.gcGrace());
    } catch (FencedWriterException e) {
      abandon("lost a race to claim the shard");
      throw e;
    }
    opens.incrementAndGet();
    resetMemtable();
    WalTail walState = WalTail.of(host.files(), shardId);
    long tail = walState.unsealed();
    if (tail > 0) {
      // lance-core replayed the previous owner's unsealed WAL entries into this memtable. Seal them into
      // a generation before the first put: otherwise that put re-logs every replayed batch in one new
      // entry, the next claimant replays both copies, and the tail doubles with every claim until the
      // memtable's batch store overflows ("MemTable batch store is full"). Their keys are unknown here too.
      LOG.info("{}: the previous writer left {} unsealed WAL entries; sealing them", label, tail);
      seal.await(deadline);
      sealAsync("replayed WAL tail");
      if (!seal.await(deadline) || WalTail.of(host.files(), shardId).unsealed() > 0) {
        backoff.markFenced();
        throw new FencedWriterException(label + ": could not seal the replayed WAL tail (another writer is claiming "
            + "the shard); the rows of this call were not acknowledged");
      }
      openLocked(deadline);
      return;
    }
    nextWalPosition = walState.nextPosition();
    LOG.debug("{}: writer open, epoch {}, next WAL position {}", label, guard.epoch(), nextWalPosition);
  }

  private void checkFenced() throws IOException {
    try {
      guard.check();
      lastCheckedNanos = System.nanoTime();
    } catch (FencedWriterException e) {
      abandon("fenced");
      throw e;
    }
  }

  /**
   * Runs a native call on the lane's thread, bounded by {@code deadline}; puts are polled for fencing
   * while they run (see {@link WriterThreadCall}).
   */
  private <T> T runOnWriterThread(String what, Callable<T> call, boolean pollFencing, long deadline) throws IOException {
    Future<T> future = thread.submit(call);
    return WriterThreadCall.await(future, what, pollFencing, deadline, label, host.putTimeout(), callWaits);
  }

  /** How a native call's wait sees and gives up this lane's writer. */
  private final WriterThreadCall.Lane callWaits = new WriterThreadCall.Lane() {
    @Override
    public boolean isFenced() throws IOException {
      return guard != null && guard.isFenced();
    }

    @Override
    public void abandon(String why) {
      LaneWriter.this.abandon(why);
    }

    @Override
    public void leaveBatchToNative() {
      batchHeldByNative = true;
    }
  };

  /**
   * {@link BucketWriter#discard}: abandons the writer, unsealed (dropped without closing it: close blocks
   * forever on a fenced writer in 7.0.0). Called under the bucket lock.
   */
  void discard(String why) {
    abandon(why);
  }

  private void abandon(String why) {
    if (writer == null && thread == null) {
      return;
    }
    backoff.markFenced();
    LOG.warn("{}: abandoning the shard writer ({}); the shard is claimed again after {} ms", label, why,
        backoff.millisUntilReclaim());
    writer = null;
    guard = null;
    if (thread != null) {
      thread.shutdown();
      thread = null;
    }
    resetMemtable();
    abandoned.incrementAndGet();
  }

  private void resetMemtable() {
    memtable.reset();
  }
}
