package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.error.WriteTimeoutException;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.MemWalShardWriter;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import java.io.IOException;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
  private static final long FIRST_WAIT_MILLIS = 2;
  private static final long POLL_MILLIS = 10;
  /**
   * A put in flight is polled for fencing (a fenced put may hang) only once it has run this long: each poll
   * is a request on an object store, and a put that completes is checked once after it anyway.
   */
  private static final long POLL_AFTER_MILLIS = 500;
  /** A put right after a successful fencing check (of the previous put) skips the check before it. */
  private static final long RECHECK_BEFORE_PUT_MILLIS = 1_000;

  private final BucketWriter.Host host;
  private final int bucket;
  private final int lane;
  private final String shardId;
  private final String label;
  private final java.util.function.Function<Callable<Boolean>, Future<Boolean>> sealChain;

  private MemWalShardWriter writer;
  private FencingGuard guard;
  private ExecutorService thread;
  private Future<Boolean> sealing;
  private long sealingSinceNanos;
  private final Set<String> memtableKeys = new HashSet<>();
  private long memtableEntries;
  private long memtableBytes;
  private long memtableRows;
  private long firstPutNanos;
  private long lastUseNanos = System.nanoTime();
  /** When fencing was last checked successfully (an hour before construction: never). */
  private long lastCheckedNanos = System.nanoTime() - TimeUnit.HOURS.toNanos(1);
  private long reclaimAtNanos;
  /** When the back-off would end without the doubling: an add with less time left claims at its last chance. */
  private long earliestReclaimAtNanos;
  private boolean fencedRecently;
  /** Times this lane lost the shard since its last acknowledged put: each doubles the next back-off. */
  private int fencesInARow;
  private boolean batchHeldByNative;
  /** The WAL position the open writer's next put writes (lance-core numbers a shard's entries consecutively). */
  private long nextWalPosition;
  private long lastWalPosition = -1;

  final AtomicLong puts = new AtomicLong();
  final AtomicLong seals = new AtomicLong();
  final AtomicLong opens = new AtomicLong();
  final AtomicLong abandoned = new AtomicLong();
  /** Puts retried after this lane won its shard back from another writer. */
  final AtomicLong reclaimedPuts = new AtomicLong();

  /**
   * {@code sealChain} runs a close after every close the bucket started before it (so that a bucket's
   * generations are flushed in the order they were sealed).
   */
  LaneWriter(BucketWriter.Host host, int bucket, int lane,
      java.util.function.Function<Callable<Boolean>, Future<Boolean>> sealChain) {
    this.host = host;
    this.sealChain = sealChain;
    this.bucket = bucket;
    this.lane = lane;
    this.shardId = ShardIds.forLane(bucket, lane);
    this.label = host.name() + " bucket " + bucket + " lane " + lane;
  }

  String shardId() {
    return shardId;
  }

  boolean isOpen() {
    return writer != null;
  }

  long entries() {
    return memtableEntries;
  }

  long bytes() {
    return memtableBytes;
  }

  long rows() {
    return memtableRows;
  }

  long firstPutNanos() {
    return firstPutNanos;
  }

  long lastUseNanos() {
    return lastUseNanos;
  }

  /** Whether a background seal of this lane is still running. */
  boolean isSealing() {
    Future<Boolean> s = sealing;
    return s != null && !s.isDone();
  }

  long epoch() {
    return guard == null ? -1 : guard.epoch();
  }

  /** The WAL position of this lane's last acknowledged put (-1 before the first). */
  long lastWalPosition() {
    return lastWalPosition;
  }

  /** Whether any of {@code keys} is in the open generation. */
  boolean holdsAny(Collection<String> keys) {
    if (writer == null) {
      return false;
    }
    for (String k : keys) {
      if (memtableKeys.contains(k)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Writes {@code batch} (dataset schema, keys unique and not in the open generation, write sequence
   * stamped) durably, winning the shard back from another writer within {@code write.put-timeout} if
   * needed (see the class comment). Takes ownership of {@code batch}: it is closed here, or deliberately
   * leaked if a native put of it is stuck.
   */
  void put(VectorSchemaRoot batch, Collection<String> keys) {
    put(batch, keys, true);
  }

  /**
   * As {@link #put(VectorSchemaRoot, Collection)}; with {@code reclaim} false a put that finds another
   * writer holding the shard fails at once (not acknowledged) instead of winning it back: a put whose
   * rows were checked against the store (unique-ids) must be checked again after another writer held it.
   */
  void put(VectorSchemaRoot batch, Collection<String> keys, boolean reclaim) {
    batchHeldByNative = false;
    try {
      withShard(deadline -> attempt(batch, keys, deadline, !reclaim), reclaim);
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
          if (!canRetryBefore(deadline)) {
            throw new FencedWriterException(label + ": another writer holds the shard and this JVM did not win it back "
                + "within " + host.putTimeout() + " (write.put-timeout); the rows of this call were not acknowledged",
                e);
          }
          reclaimedPuts.incrementAndGet();
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
  private void attempt(VectorSchemaRoot batch, Collection<String> keys, long deadline, boolean alwaysCheck)
      throws IOException {
    lastUseNanos = System.nanoTime();
    if (writer == null) {
      backOffAfterFencing(deadline);
      openLocked(deadline);
    }
    if (alwaysCheck || System.nanoTime() - lastCheckedNanos > TimeUnit.MILLISECONDS.toNanos(RECHECK_BEFORE_PUT_MILLIS)) {
      checkFenced();
    }
    long bytes = bytes(batch);
    BufferAllocator allocator = host.allocator();
    MemWalShardWriter w = writer;
    runOnWriterThread("put " + batch.getRowCount() + " rows", () -> {
      w.put(batch, allocator);
      return null;
    }, true, deadline);
    checkFenced();
    fencesInARow = 0;
    lastWalPosition = nextWalPosition++;
    if (memtableEntries == 0) {
      firstPutNanos = System.nanoTime();
    }
    memtableKeys.addAll(keys);
    memtableEntries++;
    memtableRows += batch.getRowCount();
    memtableBytes += bytes;
    puts.incrementAndGet();
    lastUseNanos = System.nanoTime();
  }

  /**
   * Whether the back-off after losing the shard ends early enough to try again before {@code deadline}:
   * with at least an eighth of {@code write.put-timeout} left for the claim and the put (a claim abandoned
   * for lack of time would still fence the other writer, for nothing).
   */
  private boolean canRetryBefore(long deadline) {
    long at = fencedRecently ? earliestReclaimAtNanos : System.nanoTime();
    return at < lastClaimStart(deadline);
  }

  private long lastClaimStart(long deadline) {
    return deadline - host.putTimeout().toNanos() / 8;
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
    long entries = memtableEntries;
    long started = System.nanoTime();
    ExecutorService t = thread;
    sealingSinceNanos = started;
    sealing = sealChain.apply(() -> {
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
    withShard(deadline -> {
      if (writer == null) {
        backOffAfterFencing(deadline);
        openLocked(deadline);
      }
    });
  }

  /**
   * Claims the shard back if another writer claimed it since this writer held it (after the jittered
   * {@code write.fence-backoff}), so that writer re-seeds its write sequence when it claims the shard again.
   */
  void reclaimIfFenced() {
    withShard(deadline -> {
      if (writer == null) {
        backOffAfterFencing(deadline);
        openLocked(deadline);
      }
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
    return awaitSealing(System.nanoTime() + host.putTimeout().toNanos());
  }

  private boolean awaitSealing(long deadline) {
    Future<Boolean> s = sealing;
    if (s == null) {
      return true;
    }
    try {
      boolean ok = getUninterruptibly(s, deadline - System.nanoTime());
      sealing = null;
      return ok;
    } catch (TimeoutException e) {
      if (System.nanoTime() - sealingSinceNanos >= host.putTimeout().toNanos()) {
        // a close that hangs (lance-core 7.0.0 blocks in a fenced writer's close) must not hold the lane forever
        LOG.warn("{}: a background seal did not finish within {}; claiming the shard anyway", label, host.putTimeout());
        sealing = null;
      }
      return false;
    } catch (ExecutionException e) {
      sealing = null;
      return false;
    }
  }

  /**
   * After losing the shard, wait (a jittered, doubling {@code write.fence-backoff}, at most a quarter of
   * {@code write.put-timeout}) before claiming it back: a claim fences the other writer, and two writers
   * re-claiming on every add would never let either seal the WAL tail it replayed (lance-core re-logs a
   * replayed tail when the writer next writes, so it would double), nor put anything.
   *
   * @throws FencedWriterException if the back-off ends after {@code deadline}
   */
  private void backOffAfterFencing(long deadline) {
    if (!fencedRecently) {
      return;
    }
    long now = System.nanoTime();
    if (earliestReclaimAtNanos >= lastClaimStart(deadline)) {
      throw new FencedWriterException(label + ": another writer claimed the shard; this JVM claims it back in "
          + (earliestReclaimAtNanos - now) / 1_000_000 + " ms (write.fence-backoff), after write.put-timeout ends");
    }
    // a doubled back-off never costs an add its last chance to claim within write.put-timeout
    sleepUninterruptibly(Math.min(reclaimAtNanos, lastClaimStart(deadline) - 1) - now);
    fencedRecently = false;
  }

  /**
   * Starts the back-off after losing the shard: {@code write.fence-backoff}, doubled for every further loss
   * before this lane's next acknowledged put. Two writers that keep claiming a shard whose replayed WAL
   * tail neither could seal in time (each claim fences the other's seal, and every fenced seal leaves the
   * tail one copy longer) thus soon give one of them the time a seal takes.
   */
  private void markFenced() {
    int doublings = Math.min(fencesInARow++, 10);
    long cap = host.putTimeout().toNanos() / 4;
    long base = Math.min(host.fenceBackoff().toNanos(), cap);
    double jitter = 0.5 + ThreadLocalRandom.current().nextDouble();
    long now = System.nanoTime();
    fencedRecently = true;
    reclaimAtNanos = now + (long) (Math.min(base << doublings, cap) * jitter);
    earliestReclaimAtNanos = now + (long) (base * jitter);
  }

  private void openLocked(long deadline) throws IOException {
    if (!awaitSealing(deadline) && sealing != null) {
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
      guard = FencingGuard.afterOpen(host.files(), shardId, before);
    } catch (FencedWriterException e) {
      abandon("lost a race to claim the shard");
      throw e;
    }
    opens.incrementAndGet();
    resetMemtable();
    long[] walState = walState();
    long tail = walState[0];
    if (tail > 0) {
      // lance-core replayed the previous owner's unsealed WAL entries into this memtable. Seal them into
      // a generation before the first put: otherwise that put re-logs every replayed batch in one new
      // entry, the next claimant replays both copies, and the tail doubles with every claim until the
      // memtable's batch store overflows ("MemTable batch store is full"). Their keys are unknown here too.
      LOG.info("{}: the previous writer left {} unsealed WAL entries; sealing them", label, tail);
      awaitSealing(deadline);
      sealAsync("replayed WAL tail");
      if (!awaitSealing(deadline) || unsealedTail() > 0) {
        markFenced();
        throw new FencedWriterException(label + ": could not seal the replayed WAL tail (another writer is claiming "
            + "the shard); the rows of this call were not acknowledged");
      }
      openLocked(deadline);
      return;
    }
    nextWalPosition = walState[1];
    LOG.debug("{}: writer open, epoch {}, next WAL position {}", label, guard.epoch(), nextWalPosition);
  }

  /** WAL entries above the replay position of the newest manifest: what a new writer replays. */
  private long unsealedTail() throws IOException {
    return walState()[0];
  }

  /**
   * The unsealed tail's length (entries above the newest manifest's replay position) and the position
   * the next entry takes: one above both the replay position and the newest entry present.
   */
  private long[] walState() throws IOException {
    long replayAfter = ShardManifests.latest(host.files(), shardId).replayAfter();
    List<Long> positions = WalEntry.positions(host.files(), shardId);
    long tail = positions.stream().filter(p -> p > replayAfter).count();
    long newest = positions.isEmpty() ? 0 : positions.get(positions.size() - 1);
    return new long[] {tail, Math.max(replayAfter, newest) + 1};
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
   * while they run. On failure the writer is abandoned; if the call is still running then (a put that
   * hangs on a fenced writer), its batch is left to it.
   */
  private <T> T runOnWriterThread(String what, Callable<T> call, boolean pollFencing, long deadline) throws IOException {
    Future<T> future = thread.submit(call);
    long pollFrom = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(POLL_AFTER_MILLIS);
    try {
      try {
        return getUninterruptibly(future, Math.min(TimeUnit.MILLISECONDS.toNanos(FIRST_WAIT_MILLIS),
            deadline - System.nanoTime()));
      } catch (TimeoutException ignored) {
        // slow path below
      }
      while (true) {
        long untilPolling = pollFrom - System.nanoTime();
        if (pollFencing && untilPolling > 0 && deadline - System.nanoTime() > 0) {
          try {
            return getUninterruptibly(future, Math.min(untilPolling, deadline - System.nanoTime()));
          } catch (TimeoutException ignored) {
            continue;
          }
        }
        if (pollFencing && guard != null && guard.isFenced()) {
          batchHeldByNative = true;
          abandon("fenced while a put was in flight");
          throw new FencedWriterException(label + ": the shard was claimed by another writer while '" + what
              + "' was in flight; the rows of this call were not acknowledged");
        }
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          batchHeldByNative |= pollFencing;
          abandon("timed out");
          throw new WriteTimeoutException(label + ": '" + what + "' did not complete within " + host.putTimeout()
              + " (write.put-timeout); the rows of this call were not acknowledged");
        }
        try {
          return getUninterruptibly(future, Math.min(remaining, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)));
        } catch (TimeoutException ignored) {
          // keep polling
        }
      }
    } catch (ExecutionException e) {
      boolean fenced = isFencedQuietly();
      abandon("'" + what + "' failed");
      Throwable cause = e.getCause();
      if (fenced) {
        throw new FencedWriterException(label + ": '" + what + "' failed after another writer claimed the shard: "
            + cause.getMessage(), cause);
      }
      throw LanceErrors.translate(label + ": " + what, cause);
    } catch (IOException e) {
      abandon("I/O failure while checking fencing");
      throw e;
    }
  }

  /**
   * {@link Future#get} that an interrupt does not cut short: the waits of a put are bounded anyway, and a
   * put abandoned because its caller was interrupted would fail every other caller sharing it (group
   * commit) and give up the shard. The interrupt status is restored.
   */
  private static <T> T getUninterruptibly(Future<T> future, long timeoutNanos)
      throws ExecutionException, TimeoutException {
    boolean interrupted = false;
    long end = System.nanoTime() + Math.max(0, timeoutNanos);
    try {
      while (true) {
        try {
          return future.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void sleepUninterruptibly(long nanos) {
    boolean interrupted = false;
    long end = System.nanoTime() + nanos;
    try {
      for (long left = nanos; left > 0; left = end - System.nanoTime()) {
        try {
          TimeUnit.NANOSECONDS.sleep(left);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private boolean isFencedQuietly() {
    try {
      return guard != null && guard.isFenced();
    } catch (IOException e) {
      return false;
    }
  }

  /** Drops the writer without closing it (close blocks forever on a fenced writer in 7.0.0). */
  /** {@link BucketWriter#discard}: abandons the writer, unsealed. Called under the bucket lock. */
  void discard(String why) {
    abandon(why);
  }

  private void abandon(String why) {
    if (writer == null && thread == null) {
      return;
    }
    markFenced();
    LOG.warn("{}: abandoning the shard writer ({}); the shard is claimed again after {} ms", label, why,
        (reclaimAtNanos - System.nanoTime()) / 1_000_000);
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
    memtableKeys.clear();
    memtableEntries = 0;
    memtableBytes = 0;
    memtableRows = 0;
  }

  /**
   * The memory a put of {@code batch} pins until its generation is sealed: lance-core 7.0.0 keeps the
   * imported Arrow buffers of every put in its memtable, at their allocated capacity, not their used
   * size (a one-row batch encoded at Arrow's default capacity of about 4,000 rows pins about 1.6 MB for
   * the 36-column rollout schema).
   */
  private static long bytes(VectorSchemaRoot batch) {
    long b = 0;
    for (var v : batch.getFieldVectors()) {
      for (org.apache.arrow.memory.ArrowBuf buf : v.getBuffers(false)) {
        b += buf.capacity();
      }
    }
    return b;
  }
}
