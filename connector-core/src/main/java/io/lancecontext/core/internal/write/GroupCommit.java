package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.WriteInterruptedException;
import io.lancecontext.core.internal.lance.RowCopier;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Group commit of one bucket: calls that arrive while a put is in flight are combined into the next put (one
 * WAL entry), as long as no key repeats among them; each call returns once the put holding its rows was
 * acknowledged, or throws what that put threw. The caller that finds the bucket's lock free leads: it puts
 * the queued calls, wakes their callers when the put returns, and, letting go of the lock, wakes the caller
 * first in line to lead the next put. A caller whose rows a leader put therefore returns without taking the
 * lock itself (waiting for it behind the next leader's whole put is what kept groups small). Thread-safe.
 */
final class GroupCommit {
  /** Largest group of callers' rows combined into one put. */
  static final long MAX_GROUP_ROWS = 65_536;
  /** The longest a waiting caller sleeps before it looks at its request and the bucket's lock again. */
  private static final long FOLLOWER_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final BucketWriter.Host host;
  private final int bucket;
  private final ReentrantLock lock;
  private final BucketLanes lanes;
  private final ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>();
  private final AtomicLong grouped = new AtomicLong();

  /** {@code lock} is the bucket's: a leader holds it while it puts a group on {@code lanes}. */
  GroupCommit(BucketWriter.Host host, int bucket, ReentrantLock lock, BucketLanes lanes) {
    this.host = host;
    this.bucket = bucket;
    this.lock = lock;
    this.lanes = lanes;
  }

  /** See {@link BucketWriter#put(VectorSchemaRoot, long[], BucketWriter.KeyCheck)}. */
  PutReceipt put(VectorSchemaRoot batch, long[] keyHashes, BucketWriter.KeyCheck check) {
    if (Thread.currentThread().isInterrupted()) {
      batch.close();
      throw interrupted("before its rows were handed to a put; nothing was written");
    }
    Request request = new Request(batch, keyHashes, check);
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
      LockSupport.parkNanos(this, FOLLOWER_PARK_NANOS);
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
  private WriteInterruptedException interrupted(String when) {
    return new WriteInterruptedException(host.name() + " bucket " + bucket
        + ": the calling thread was interrupted " + when);
  }

  /**
   * One caller's rows waiting for a put. {@code error} and {@code receipt} are written before {@code done}
   * (volatile), which the caller reads without the bucket's lock.
   */
  private static final class Request {
    final VectorSchemaRoot batch;
    final long[] keyHashes;
    final BucketWriter.KeyCheck check;
    final Thread caller = Thread.currentThread();
    volatile boolean done;
    RuntimeException error;
    PutReceipt receipt;

    Request(VectorSchemaRoot batch, long[] keyHashes, BucketWriter.KeyCheck check) {
      this.batch = batch;
      this.keyHashes = keyHashes;
      this.check = check;
    }

    /** Marks the request complete and wakes its caller. */
    void complete(PutReceipt receipt, RuntimeException error) {
      this.receipt = receipt;
      this.error = error;
      done = true;
      LockSupport.unpark(caller);
    }
  }

  /** Calls whose rows wait for a put (not yet taken into one). */
  int queuedCalls() {
    return queue.size();
  }

  /** Calls combined into a shared put since the bucket writer was created. */
  long grouped() {
    return grouped.get();
  }

  /** After a leader let go of the lock: the caller first in line takes it and puts the next group. */
  private void wakeNextLeader() {
    Request next = queue.peek();
    if (next != null) {
      LockSupport.unpark(next.caller);
    }
  }

  /** Takes the longest run of queued requests without a repeated key and puts them as one entry. */
  private void putNextGroupLocked() {
    List<Request> group = new ArrayList<>();
    LongSet groupKeys = new LongSet(64);  // grows with the group
    long rows = 0;
    for (Request head = queue.peek(); head != null; head = queue.peek()) {
      if (!group.isEmpty() && (rows + head.batch.getRowCount() > MAX_GROUP_ROWS
          || groupKeys.containsAny(head.keyHashes))) {
        break;  // a repeated key (or a collision of two keys' hashes) waits for the next put
      }
      if (!queue.remove(head)) {
        continue;  // its caller was interrupted and withdrew it
      }
      group.add(head);
      groupKeys.addAll(head.keyHashes);
      rows += head.batch.getRowCount();
    }
    if (group.isEmpty()) {
      return;
    }
    long[] checkedEpochs = null;
    if (group.stream().anyMatch(r -> r.check != null)) {
      try {
        checkedEpochs = lanes.holdEveryLaneLocked(keyHashesOf(group));
      } catch (RuntimeException e) {
        finish(group, e);
        return;
      }
      for (Iterator<Request> it = group.iterator(); it.hasNext(); ) {
        Request r = it.next();
        if (r.check == null) {
          continue;
        }
        try {
          r.check.check(r.batch);
        } catch (RuntimeException e) {
          it.remove();
          finish(List.of(r), e);
        }
      }
      if (group.isEmpty()) {
        return;
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
      receipt = lanes.putLocked(combined, keyHashesOf(group), checkedEpochs == null);
      if (checkedEpochs != null) {
        lanes.requireLanesHeldSince(checkedEpochs, receipt.lane());
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

  /** The key hashes of a group's requests, one array. */
  private static long[] keyHashesOf(List<Request> group) {
    if (group.size() == 1) {
      return group.get(0).keyHashes;
    }
    int n = 0;
    for (Request r : group) {
      n += r.keyHashes.length;
    }
    long[] all = new long[n];
    int at = 0;
    for (Request r : group) {
      System.arraycopy(r.keyHashes, 0, all, at, r.keyHashes.length);
      at += r.keyHashes.length;
    }
    return all;
  }
}
