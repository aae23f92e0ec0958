package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.WriteTimeoutException;
import io.lancecontext.core.internal.lance.LanceErrors;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The wait for a native call a lane runs on its writer thread (lance-core 7.0.0 may block forever in a
 * fenced writer's {@code put} and {@code close}): bounded by {@code deadline}, puts polled for fencing
 * while they run. On failure the lane abandons its writer; if the call is still running then (a put that
 * hangs on a fenced writer), its batch is left to it.
 */
final class WriterThreadCall {
  private static final long FIRST_WAIT_MILLIS = 2;
  private static final long POLL_MILLIS = 10;
  /**
   * A put in flight is polled for fencing (a fenced put may hang) only once it has run this long: each poll
   * is a request on an object store, and a put that completes is checked once after it anyway.
   */
  private static final long POLL_AFTER_MILLIS = 500;

  /** What the wait needs from its lane. */
  interface Lane {
    /** Whether another writer claimed the shard (false without an open writer). */
    boolean isFenced() throws IOException;

    void abandon(String why);

    /** The call still runs with the put's batch: the lane must not close it. */
    void leaveBatchToNative();
  }

  private WriterThreadCall() {}

  static <T> T await(Future<T> future, String what, boolean pollFencing, long deadline, String label,
      Duration putTimeout, Lane lane) throws IOException {
    long pollFrom = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(POLL_AFTER_MILLIS);
    try {
      try {
        return Uninterruptibly.get(future, Math.min(TimeUnit.MILLISECONDS.toNanos(FIRST_WAIT_MILLIS),
            deadline - System.nanoTime()));
      } catch (TimeoutException ignored) {
        // slow path below
      }
      while (true) {
        long untilPolling = pollFrom - System.nanoTime();
        if (pollFencing && untilPolling > 0 && deadline - System.nanoTime() > 0) {
          try {
            return Uninterruptibly.get(future, Math.min(untilPolling, deadline - System.nanoTime()));
          } catch (TimeoutException ignored) {
            continue;
          }
        }
        if (pollFencing && lane.isFenced()) {
          lane.leaveBatchToNative();
          lane.abandon("fenced while a put was in flight");
          throw new FencedWriterException(label + ": the shard was claimed by another writer while '" + what
              + "' was in flight; the rows of this call were not acknowledged");
        }
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          if (pollFencing) {
            lane.leaveBatchToNative();
          }
          lane.abandon("timed out");
          throw new WriteTimeoutException(label + ": '" + what + "' did not complete within " + putTimeout
              + " (write.put-timeout); the rows of this call were not acknowledged");
        }
        try {
          return Uninterruptibly.get(future, Math.min(remaining, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)));
        } catch (TimeoutException ignored) {
          // keep polling
        }
      }
    } catch (ExecutionException e) {
      boolean fenced = isFencedQuietly(lane);
      lane.abandon("'" + what + "' failed");
      Throwable cause = e.getCause();
      if (fenced) {
        throw new FencedWriterException(label + ": '" + what + "' failed after another writer claimed the shard: "
            + cause.getMessage(), cause);
      }
      throw LanceErrors.translate(label + ": " + what, cause);
    } catch (IOException e) {
      lane.abandon("I/O failure while checking fencing");
      throw e;
    }
  }

  private static boolean isFencedQuietly(Lane lane) {
    try {
      return lane.isFenced();
    } catch (IOException e) {
      return false;
    }
  }
}
