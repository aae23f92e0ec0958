package io.lancecontext.core.wal;

import io.lancecontext.core.arrow.SingleBatchReader;
import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.LanceErrors;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.error.WriteTimeoutException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.memwal.ShardWriter;
import org.lance.memwal.ShardWriterConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One lane of a bucket: the resident lance-core {@code ShardWriter} of one MemWAL shard in this JVM,
 * opened on first use and re-opened after it is sealed, fenced or idle-closed. Not thread-safe: its
 * {@link BucketWriter} calls it under the bucket's lock (only a seal's close runs on another thread,
 * on a writer it has already let go of).
 *
 * <p>Contract of {@link #put}: when it returns, the rows are in a durable WAL entry that other
 * processes read, and this writer still owned the shard after the entry was written, so a later owner
 * replays it. Otherwise it throws {@link FencedWriterException} (another writer claimed the shard, or
 * the put failed) or {@link WriteTimeoutException}, and the rows are not acknowledged. The writer is
 * then abandoned, never closed: lance-core 7.0.0 blocks forever in a fenced writer's {@code put} and
 * {@code close}.
 *
 * <p>lance-core's own memtable rotation is never reached (it acknowledges puts before their WAL entry
 * exists); a lane is sealed by closing its writer, which flushes the memtable into a generation.
 */
final class LaneWriter {
  private static final Logger LOG = LoggerFactory.getLogger(LaneWriter.class);
  private static final long FIRST_WAIT_MILLIS = 2;
  private static final long POLL_MILLIS = 10;

  private final BucketWriter.Host host;
  private final int bucket;
  private final int lane;
  private final String shardId;
  private final String label;
  private final java.util.function.Function<Callable<Boolean>, Future<Boolean>> sealChain;

  private ShardWriter writer;
  private FencingGuard guard;
  private ExecutorService thread;
  private Future<Boolean> sealing;
  private final Set<String> memtableKeys = new HashSet<>();
  private long memtableEntries;
  private long memtableBytes;
  private long memtableRows;
  private long firstPutNanos;
  private long lastUseNanos = System.nanoTime();
  private long fencedAtNanos;
  private boolean fencedRecently;

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
   * Writes {@code batch} (dataset schema, keys unique and not in the open generation) durably. Takes
   * ownership of {@code batch}: it is closed here, or deliberately leaked if the native put is stuck.
   */
  void put(VectorSchemaRoot batch, Collection<String> keys) {
    boolean release = true;
    try {
      lastUseNanos = System.nanoTime();
      if (writer == null) {
        backOffAfterFencing();
        openLocked();
      }
      checkFenced();
      long bytes = bytes(batch);
      BufferAllocator allocator = host.allocator();
      ShardWriter w = writer;
      release = false;
      runOnWriterThread("put " + batch.getRowCount() + " rows", () -> {
        try (ArrowReader reader = new SingleBatchReader(batch, allocator)) {
          w.put(reader);
        }
        return null;
      }, true);
      release = true;
      checkFenced();
      if (memtableEntries == 0) {
        firstPutNanos = System.nanoTime();
      }
      memtableKeys.addAll(keys);
      memtableEntries++;
      memtableRows += batch.getRowCount();
      memtableBytes += bytes;
      puts.incrementAndGet();
      lastUseNanos = System.nanoTime();
    } catch (IOException e) {
      abandon("I/O failure while checking the shard manifest");
      throw new StorageException(label + ": reading its manifest", e);
    } finally {
      if (release) {
        batch.close();
      }
    }
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
    ShardWriter w = writer;
    long entries = memtableEntries;
    long started = System.nanoTime();
    ExecutorService t = thread;
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

  /** Opens the lane (which seals a WAL tail left by a previous owner) and closes it again. */
  void recover() {
    try {
      if (writer == null) {
        backOffAfterFencing();
        openLocked();
      }
    } catch (IOException e) {
      abandon("I/O failure while recovering");
      throw new StorageException(label + ": recovering the WAL tail", e);
    }
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
    Future<?> s = sealing;
    if (s == null) {
      return true;
    }
    try {
      boolean ok = (Boolean) s.get(host.putTimeout().toMillis(), TimeUnit.MILLISECONDS);
      sealing = null;
      return ok;
    } catch (TimeoutException e) {
      LOG.warn("{}: a background seal did not finish within {}; claiming the shard anyway", label, host.putTimeout());
      sealing = null;
      return false;
    } catch (ExecutionException e) {
      sealing = null;
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FencedWriterException(label + ": interrupted while waiting for a seal", e);
    }
  }

  /**
   * After losing the shard, wait {@code write.fence-backoff} before claiming it back: a claim fences the
   * other writer, and two writers re-claiming on every add would never let either seal the WAL tail it
   * replayed (lance-core re-logs a replayed tail when the writer next writes, so it would double).
   */
  private void backOffAfterFencing() {
    if (!fencedRecently) {
      return;
    }
    long waited = System.nanoTime() - fencedAtNanos;
    long backoff = host.fenceBackoff().toNanos();
    if (waited < backoff) {
      throw new FencedWriterException(label + ": another writer claimed the shard " + waited / 1_000_000
          + " ms ago; this JVM claims it back after " + host.fenceBackoff().toMillis()
          + " ms (write.fence-backoff); the rows of this call were not written");
    }
    fencedRecently = false;
  }

  private void openLocked() throws IOException {
    awaitSealing();
    long before = FencingGuard.versionBeforeOpen(host.files(), shardId);
    thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "lancecontext-" + host.name() + "-" + bucket + "." + lane);
      t.setDaemon(true);
      return t;
    });
    Dataset base = host.baseDataset();
    writer = runOnWriterThread("open the shard writer", () -> base.memWalWriter(shardId, writerConfig()), false);
    try {
      guard = FencingGuard.afterOpen(host.files(), shardId, before);
    } catch (FencedWriterException e) {
      abandon("lost a race to claim the shard");
      throw e;
    }
    opens.incrementAndGet();
    resetMemtable();
    long tail = unsealedTail();
    if (tail > 0) {
      // lance-core replayed the previous owner's unsealed WAL entries into this memtable. Seal them into
      // a generation before the first put: otherwise that put re-logs every replayed batch in one new
      // entry, the next claimant replays both copies, and the tail doubles with every claim until the
      // memtable's batch store overflows ("MemTable batch store is full"). Their keys are unknown here too.
      LOG.info("{}: the previous writer left {} unsealed WAL entries; sealing them", label, tail);
      if (!sealNow("replayed WAL tail") || unsealedTail() > 0) {
        throw new FencedWriterException(label + ": could not seal the replayed WAL tail (another writer is claiming "
            + "the shard); the rows of this call were not acknowledged");
      }
      openLocked();
      return;
    }
    LOG.debug("{}: writer open, epoch {}", label, guard.epoch());
  }

  /** WAL entries above the replay position of the newest manifest: what a new writer replays. */
  private long unsealedTail() throws IOException {
    long replayAfter = ShardManifests.latest(host.files(), shardId).replayAfter();
    return WalEntry.positions(host.files(), shardId).stream().filter(p -> p > replayAfter).count();
  }

  static ShardWriterConfig writerConfig() {
    // durable puts; lance-core's own memtable rotation stays out of reach of the store's seal thresholds
    // (at most 4,096 puts, see BucketWriter.HARD_LIMIT), because 7.0.0 acknowledges puts before their WAL
    // entry exists once it has rotated: 8,000 batches (its pre-allocated batch store), and a size limit
    // far above any memtable the store lets grow
    return new ShardWriterConfig().withDurableWrite(true).withMaxMemtableBatches(8_000)
        .withMaxMemtableSize(MEMTABLE_SIZE_LIMIT).withMaxUnflushedMemtableBytes(2 * MEMTABLE_SIZE_LIMIT);
  }

  /** lance-core's memtable size limit as lancecontext sets it: never reached. */
  static final long MEMTABLE_SIZE_LIMIT = 16L << 30;

  private void checkFenced() throws IOException {
    try {
      guard.check();
    } catch (FencedWriterException e) {
      abandon("fenced");
      throw e;
    }
  }

  /**
   * Runs a native call on the lane's thread. Puts are polled for fencing while they run; all calls are
   * bounded by {@code write.put-timeout}. On failure the writer is abandoned.
   */
  private <T> T runOnWriterThread(String what, Callable<T> call, boolean pollFencing) {
    Future<T> future = thread.submit(call);
    long deadline = System.nanoTime() + host.putTimeout().toNanos();
    try {
      try {
        return future.get(FIRST_WAIT_MILLIS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException ignored) {
        // slow path below
      }
      while (true) {
        if (pollFencing && guard != null && guard.isFenced()) {
          abandon("fenced while a put was in flight");
          throw new FencedWriterException(label + ": the shard was claimed by another writer while '" + what
              + "' was in flight; the rows of this call were not acknowledged");
        }
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          abandon("timed out");
          throw new WriteTimeoutException(label + ": '" + what + "' did not complete within " + host.putTimeout()
              + " (write.put-timeout); the rows of this call were not acknowledged");
        }
        try {
          return future.get(Math.min(TimeUnit.NANOSECONDS.toMillis(remaining) + 1, POLL_MILLIS), TimeUnit.MILLISECONDS);
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
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abandon("interrupted");
      throw new FencedWriterException(label + ": interrupted during '" + what + "'", e);
    } catch (IOException e) {
      abandon("I/O failure while checking fencing");
      throw new UncheckedIOException(e);
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
  private void abandon(String why) {
    if (writer == null && thread == null) {
      return;
    }
    LOG.warn("{}: abandoning the shard writer ({}); the shard is claimed again after {} ms", label, why,
        host.fenceBackoff().toMillis());
    fencedRecently = true;
    fencedAtNanos = System.nanoTime();
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

  private static long bytes(VectorSchemaRoot batch) {
    long b = 0;
    for (var v : batch.getFieldVectors()) {
      b += v.getBufferSize();
    }
    return b;
  }
}
