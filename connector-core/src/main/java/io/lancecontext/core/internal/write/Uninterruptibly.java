package io.lancecontext.core.internal.write;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits of a lane that an interrupt does not cut short: the waits of a put are bounded by
 * {@code write.put-timeout} anyway, and a put abandoned because its caller was interrupted would fail every
 * other caller sharing it (group commit) and give up the shard. The interrupt status is restored.
 */
final class Uninterruptibly {
  private Uninterruptibly() {}

  /** {@link Future#get} that an interrupt does not cut short (see the class comment). */
  static <T> T get(Future<T> future, long timeoutNanos) throws ExecutionException, TimeoutException {
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

  static void sleep(long nanos) {
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
}
