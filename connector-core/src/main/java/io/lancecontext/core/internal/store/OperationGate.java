package io.lancecontext.core.internal.store;

import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.lance.LanceErrors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Whether a resident store is open, and its operations in flight: an operation runs only while the store
 * is open, closing waits for the operations in flight ({@link #awaitDrained}), and an operation that starts
 * after close began fails with a retryable {@link StoreClosedException}. Thread-safe.
 */
final class OperationGate {
  private final String uri;
  private final String name;
  private volatile boolean closed;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Object drained = new Object();

  OperationGate(String uri, String name) {
    this.uri = uri;
    this.name = name;
  }

  void ensureOpen() {
    if (closed) {
      throw closedUnderneath(null);
    }
  }

  private StoreClosedException closedUnderneath(Throwable cause) {
    return new StoreClosedException("the store " + uri + " was closed in this JVM (closeAllResident, eviction or "
        + "shutdown) under an open handle; nothing of this call was written. Open the store again and retry", true, cause);
  }

  /**
   * Runs one operation of the store (see the class comment). Failures leave as the taxonomy's exceptions
   * ({@link LanceErrors#translate}, the cause kept).
   */
  <T> T run(String action, Supplier<T> body) {
    inFlight.incrementAndGet();
    try {
      ensureOpen();
      return body.get();
    } catch (LanceContextException e) {
      throw e;
    } catch (RejectedExecutionException e) {
      throw closed ? closedUnderneath(e) : LanceErrors.translate(name + ": " + action, e);
    } catch (RuntimeException e) {
      throw LanceErrors.translate(name + ": " + action, e);
    } finally {
      if (inFlight.decrementAndGet() == 0 && closed) {
        synchronized (drained) {
          drained.notifyAll();
        }
      }
    }
  }

  /** Marks the store closed: later operations fail. False if it was closed before. */
  synchronized boolean close() {
    if (closed) {
      return false;
    }
    closed = true;
    return true;
  }

  boolean isClosed() {
    return closed;
  }

  /** Operations in flight now. */
  int inFlight() {
    return inFlight.get();
  }

  /** Waits until no operation is in flight, at most {@code timeoutNanos}; false if some still are. */
  boolean awaitDrained(long timeoutNanos) {
    long end = System.nanoTime() + timeoutNanos;
    boolean interrupted = false;
    try {
      synchronized (drained) {
        while (inFlight.get() > 0) {
          long left = end - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          try {
            drained.wait(Math.max(1, left / 1_000_000));
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
        return true;
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
