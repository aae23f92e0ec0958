package io.lancecontext.core.wal;

import io.lancecontext.core.arrow.SingleBatchReader;
import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.LanceErrors;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.error.WriteTimeoutException;
import io.lancecontext.core.io.StoreFiles;
import io.lancecontext.core.read.RowCopier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Collection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.lance.Dataset;
import org.lance.memwal.ShardWriter;
import org.lance.memwal.ShardWriterConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resident writer of one shard in this JVM: at most one per (store, shard), shared by every task
 * of the JVM, opened on first use and re-opened after it is sealed, fenced or idle-closed.
 *
 * <p>Contract of {@link #put}: when it returns, the rows are in a durable WAL entry that other
 * processes read (the store's fresh tier), and this writer still owned the shard after the entry was
 * written, so the next owner replays it. Otherwise it throws {@link FencedWriterException} (another
 * writer claimed the shard, or the put failed) or {@link WriteTimeoutException}, and the rows are not
 * acknowledged. The writer is then abandoned, never closed, because lance-core 7.0.0 blocks forever
 * in a fenced writer's {@code put} and {@code close}; the next put claims the shard anew.
 *
 * <p>lance-core 7.0.0 resolves a key written twice inside one generation to the older row, and cannot
 * merge such a generation; so a put whose keys are already in the open memtable first seals it.
 * Memtable rotation inside lance-core is never triggered (it acknowledges puts before their WAL
 * entry exists); sealing is always {@code close()}, by this class.
 *
 * <p>Thread-safe: calls are serialized by a lock; the native calls run on the slot's own thread so
 * that they can be timed out.
 */
public final class ShardWriterSlot implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShardWriterSlot.class);
  private static final long FIRST_WAIT_MILLIS = 2;
  private static final long POLL_MILLIS = 10;

  /** What a slot needs from its store. */
  public interface Host {
    Dataset baseDataset();

    StoreFiles files();

    BufferAllocator allocator();

    Duration putTimeout();

    /** How long to leave a shard alone after another writer claimed it. */
    Duration fenceBackoff();

    String name();
  }

  private final Host host;
  private final int bucket;
  private final String shardId;
  private final ReentrantLock lock = new ReentrantLock();

  private ShardWriter writer;
  private FencingGuard guard;
  private ExecutorService thread;
  private final Set<String> memtableKeys = new HashSet<>();
  private long memtableEntries;
  private long memtableBytes;
  private long memtableRows;
  private long firstPutNanos;
  private volatile long lastUseNanos = System.nanoTime();
  private long fencedAtNanos;
  private boolean fencedRecently;

  private final AtomicLong puts = new AtomicLong();
  private final AtomicLong seals = new AtomicLong();
  private final AtomicLong opens = new AtomicLong();
  private final AtomicLong abandoned = new AtomicLong();
  private final AtomicLong grouped = new AtomicLong();
  private final ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>();
  /** Largest group of callers' rows combined into one put. */
  static final long MAX_GROUP_ROWS = 65_536;

  public ShardWriterSlot(Host host, int bucket) {
    this.host = host;
    this.bucket = bucket;
    this.shardId = ShardIds.forBucket(bucket);
  }

  public int bucket() {
    return bucket;
  }

  public String shardId() {
    return shardId;
  }

  /**
   * Writes {@code batch} (in the dataset schema, keys unique, all in this shard) durably. Takes
   * ownership of {@code batch}: it is closed here, or deliberately leaked if the native put is stuck.
   *
   * <p>Group commit: calls that arrive while a put is in flight are combined into the next put (one WAL
   * entry), as long as no key repeats among them; each call returns once the put holding its rows was
   * acknowledged, or throws what that put threw.
   */
  public void put(VectorSchemaRoot batch, Collection<String> keys) {
    Request request = new Request(batch, keys);
    queue.add(request);
    lock.lock();
    try {
      while (!request.done) {
        putNextGroupLocked();
      }
    } finally {
      lock.unlock();
    }
    if (request.error != null) {
      throw request.error;
    }
  }

  /** One caller's rows waiting for a put. */
  private static final class Request {
    final VectorSchemaRoot batch;
    final Collection<String> keys;
    boolean done;
    RuntimeException error;

    Request(VectorSchemaRoot batch, Collection<String> keys) {
      this.batch = batch;
      this.keys = keys;
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
      queue.poll();
      group.add(head);
      groupKeys.addAll(head.keys);
      rows += head.batch.getRowCount();
    }
    if (group.isEmpty()) {
      return;
    }
    RuntimeException error = null;
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
      putLocked(combined, groupKeys);
    } catch (RuntimeException e) {
      error = e;
    }
    for (Request r : group) {
      r.error = error;
      r.done = true;
    }
  }

  private static boolean anyIn(Collection<String> keys, Set<String> set) {
    for (String k : keys) {
      if (set.contains(k)) {
        return true;
      }
    }
    return false;
  }

  /** One durable, fence-checked put; takes ownership of {@code batch}. */
  private void putLocked(VectorSchemaRoot batch, Collection<String> keys) {
    boolean release = true;
    try {
      lastUseNanos = System.nanoTime();
      if (writer != null && anyInMemtable(keys)) {
        sealLocked("a key of this put is already in the open generation");
      }
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
      abandonLocked("I/O failure while checking the shard manifest");
      throw new StorageException("shard " + shardId + ": reading its manifest", e);
    } finally {
      if (release) {
        batch.close();
      }
    }
  }

  /** Seals the open generation (close, which flushes it), if there is one. */
  public void seal(String reason) {
    lock.lock();
    try {
      sealLocked(reason);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Seals when the open generation is big or old enough, or closes the writer when it has been idle.
   * Non-blocking: does nothing if a put holds the slot.
   */
  public void maintain(long sealEntries, long sealBytes, Duration sealAge, Duration idle) {
    if (!lock.tryLock()) {
      return;
    }
    try {
      if (writer == null) {
        return;
      }
      long now = System.nanoTime();
      if (memtableEntries >= sealEntries || memtableBytes >= sealBytes) {
        sealLocked("the open generation holds " + memtableEntries + " WAL entries, " + memtableBytes + " bytes");
      } else if (memtableEntries > 0 && now - firstPutNanos >= sealAge.toNanos()) {
        sealLocked("the open generation is older than " + sealAge);
      } else if (now - lastUseNanos >= idle.toNanos()) {
        sealLocked("idle for " + idle);
      }
    } finally {
      lock.unlock();
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
      throw new FencedWriterException(host.name() + " shard " + bucket + ": another writer claimed the shard "
          + waited / 1_000_000 + " ms ago; this JVM claims it back after " + host.fenceBackoff().toMillis()
          + " ms (write.fence-backoff); the rows of this call were not written");
    }
    fencedRecently = false;
  }

  private boolean anyInMemtable(Collection<String> keys) {
    for (String k : keys) {
      if (memtableKeys.contains(k)) {
        return true;
      }
    }
    return false;
  }

  private void openLocked() throws IOException {
    long before = FencingGuard.versionBeforeOpen(host.files(), shardId);
    thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "lancecontext-shard-" + bucket + "-" + host.name());
      t.setDaemon(true);
      return t;
    });
    Dataset base = host.baseDataset();
    writer = runOnWriterThread("open the shard writer", () -> base.memWalWriter(shardId, writerConfig()), false);
    try {
      guard = FencingGuard.afterOpen(host.files(), shardId, before);
    } catch (FencedWriterException e) {
      abandonLocked("lost a race to claim the shard");
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
      LOG.info("{} shard {}: the previous writer left {} unsealed WAL entries; sealing them", host.name(), bucket, tail);
      if (!sealLocked("replayed WAL tail") || unsealedTail() > 0) {
        throw new FencedWriterException(host.name() + " shard " + bucket + ": could not seal the replayed WAL tail "
            + "(another writer is claiming the shard); the rows of this call were not acknowledged");
      }
      openLocked();
      return;
    }
    LOG.debug("{} shard {}: writer open, epoch {}", host.name(), bucket, guard.epoch());
  }

  /** WAL entries above the replay position of the newest manifest: what a new writer replays. */
  private long unsealedTail() throws IOException {
    long replayAfter = ShardManifests.latest(host.files(), shardId).replayAfter();
    return WalEntry.positions(host.files(), shardId).stream().filter(p -> p > replayAfter).count();
  }

  static ShardWriterConfig writerConfig() {
    // durable puts; lance-core's own memtable rotation stays out of reach (8,000 batches / 256 MiB are
    // far above the store's seal thresholds), because 7.0.0 acknowledges puts before their WAL entry
    // exists once it has rotated
    return new ShardWriterConfig().withDurableWrite(true).withMaxMemtableBatches(8_000)
        .withMaxMemtableSize(256L << 20);
  }

  /** Seals (closes) the writer; false if it failed (the writer is then abandoned). */
  private boolean sealLocked(String reason) {
    if (writer == null) {
      return true;
    }
    ShardWriter w = writer;
    long entries = memtableEntries;
    long started = System.nanoTime();
    try {
      runOnWriterThread("seal the open generation", () -> {
        w.close();
        return null;
      }, false);
    } catch (LanceContextException e) {
      LOG.warn("{} shard {}: sealing failed ({}); abandoning the writer", host.name(), bucket, e.getMessage());
      return false;
    }
    writer = null;
    guard = null;
    thread.shutdown();
    thread = null;
    resetMemtable();
    seals.incrementAndGet();
    LOG.debug("{} shard {}: sealed {} entries in {} ms ({})", host.name(), bucket, entries,
        (System.nanoTime() - started) / 1_000_000, reason);
    return true;
  }

  private void checkFenced() throws IOException {
    try {
      guard.check();
    } catch (FencedWriterException e) {
      abandonLocked("fenced");
      throw e;
    }
  }

  /**
   * Runs a native call on the slot's thread. Puts are polled for fencing while they run; all calls are
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
          abandonLocked("fenced while a put was in flight");
          throw new FencedWriterException(host.name() + " shard " + bucket + ": the shard was claimed by another "
              + "writer while '" + what + "' was in flight; the rows of this call were not acknowledged");
        }
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          abandonLocked("timed out");
          throw new WriteTimeoutException(host.name() + " shard " + bucket + ": '" + what + "' did not complete within "
              + host.putTimeout() + " (write.put-timeout); the rows of this call were not acknowledged");
        }
        try {
          return future.get(Math.min(TimeUnit.NANOSECONDS.toMillis(remaining) + 1, POLL_MILLIS), TimeUnit.MILLISECONDS);
        } catch (TimeoutException ignored) {
          // keep polling
        }
      }
    } catch (ExecutionException e) {
      boolean fenced = isFencedQuietly();
      abandonLocked("'" + what + "' failed");
      Throwable cause = e.getCause();
      if (fenced) {
        throw new FencedWriterException(host.name() + " shard " + bucket + ": '" + what + "' failed after another writer "
            + "claimed the shard: " + cause.getMessage(), cause);
      }
      throw LanceErrors.translate(host.name() + " shard " + bucket + ": " + what, cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abandonLocked("interrupted");
      throw new FencedWriterException(host.name() + " shard " + bucket + ": interrupted during '" + what + "'", e);
    } catch (IOException e) {
      abandonLocked("I/O failure while checking fencing");
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
  private void abandonLocked(String why) {
    if (writer == null && thread == null) {
      return;
    }
    LOG.warn("{} shard {}: abandoning the shard writer ({}); the shard is claimed again after {} ms", host.name(),
        bucket, why, host.fenceBackoff().toMillis());
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

  public boolean isOpen() {
    return writer != null;
  }

  public long lastUseNanos() {
    return lastUseNanos;
  }

  /** Counters for stats. */
  public Stats stats() {
    lock.lock();
    try {
      return new Stats(bucket, shardId, writer != null, guard == null ? -1 : guard.epoch(), memtableEntries, memtableRows,
          puts.get(), grouped.get(), seals.get(), opens.get(), abandoned.get());
    } finally {
      lock.unlock();
    }
  }

  /** A slot's counters. */
  public record Stats(int bucket, String shardId, boolean open, long epoch, long openEntries, long openRows,
      long puts, long groupedCalls, long seals, long opens, long abandoned) {}

  /** Seals and closes the writer (used on idle eviction and at JVM exit). */
  @Override
  public void close() {
    seal("closing");
  }
}
