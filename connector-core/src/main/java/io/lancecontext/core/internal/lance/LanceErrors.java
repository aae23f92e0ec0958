package io.lancecontext.core.internal.lance;

import io.lancecontext.core.error.CommitConflictException;
import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.StorageException;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * The one place where lance-core's exceptions are translated into lancecontext's taxonomy.
 *
 * <p>lance-core 7.0.0's JNI layer raises untyped {@link IllegalArgumentException},
 * {@link java.io.IOException} and {@link RuntimeException}s whose only structure is the message text
 * of the Rust error. Matching that text happens here and nowhere else.
 */
public final class LanceErrors {
  private LanceErrors() {}

  /** A call into lance-core. */
  @FunctionalInterface
  public interface LanceCall<T> extends Callable<T> {}

  /** Runs {@code call}, translating anything it throws; {@code action} says what was being done. */
  public static <T> T call(String action, LanceCall<T> call) {
    try {
      return call.call();
    } catch (LanceContextException e) {
      throw e;
    } catch (Exception e) {
      throw translate(action, e);
    }
  }

  /** Runs {@code call}, translating anything it throws. */
  public static void run(String action, LanceRunnable call) {
    call(action, () -> {
      call.run();
      return null;
    });
  }

  /** A void call into lance-core. */
  @FunctionalInterface
  public interface LanceRunnable {
    void run() throws Exception;
  }

  /** Translates a lance-core (or I/O) failure that happened while doing {@code action}. */
  public static LanceContextException translate(String action, Throwable t) {
    if (t instanceof LanceContextException lce) {
      return lce;
    }
    String message = String.valueOf(t.getMessage());
    String m = message.toLowerCase(Locale.ROOT);
    String text = action + ": " + firstLine(message);
    if (m.contains("writer fenced") || m.contains("failed to claim shard") || m.contains("another writer claimed")
        || m.contains("wal replay aborted") && m.contains("claimed epoch")) {
      // "WAL replay aborted: entry at position .. has writer_epoch .. > our claimed epoch ..": another writer
      // claimed the shard while this one opened it
      return new FencedWriterException(text, t);
    }
    if (m.contains("commit conflict") || m.contains("retryable commit") || m.contains("too many concurrent writers")
        || m.contains("conflicting transaction")) {
      return new CommitConflictException(text, t);
    }
    if (isNotFound(m)) {
      // a missing store is detected before it is opened (StoreCreation); a file missing later was removed
      // underneath the caller: by garbage collection of a read older than gc.grace, or by hand
      return new StorageException(text + " (a file of the store is missing: removed by garbage collection while "
          + "a read older than gc.grace used it, or by hand)", t);
    }
    if (m.contains("schema doesn't match") || m.contains("schema error") || m.contains("no field named")) {
      return new SchemaException(text, t);
    }
    return new StorageException(text, t, isTransient(m));
  }

  /**
   * Whether an object store's answer passes with time (what lance-core's object store client reports once its
   * own retries are spent): throttling, 503 and 500 answers, reset or timed-out connections.
   */
  private static boolean isTransient(String lowerMessage) {
    for (String marker : TRANSIENT) {
      if (lowerMessage.contains(marker)) {
        return true;
      }
    }
    return false;
  }

  private static final List<String> TRANSIENT = List.of("503 service unavailable",
      "service unavailable", "slow down", "slowdown", "429 too many requests", "too many requests",
      "500 internal server error", "connection reset", "broken pipe", "timed out", "error sending request",
      "connection closed before message completed");

  private static boolean isNotFound(String lowerMessage) {
    return lowerMessage.contains("was not found") || lowerMessage.contains("not found:")
        || lowerMessage.contains("datasetnotfound") || lowerMessage.contains("no such file");
  }

  private static String firstLine(String message) {
    int nl = message.indexOf('\n');
    String first = nl < 0 ? message : message.substring(0, nl);
    return first.length() > 500 ? first.substring(0, 500) + "..." : first;
  }
}
