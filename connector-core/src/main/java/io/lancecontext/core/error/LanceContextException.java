package io.lancecontext.core.error;

/**
 * Root of lancecontext's error taxonomy. Every failure that a public call of lancecontext surfaces is one
 * of its subclasses (argument errors of the Java API itself, such as a null argument, excepted);
 * lance-core's untyped exceptions are translated once, in {@code internal.lance.LanceErrors}, and the original
 * exception is kept as the cause.
 */
public class LanceContextException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LanceContextException(String message) {
    super(message);
  }

  public LanceContextException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * Whether repeating the same call unchanged is safe and may succeed: it cannot duplicate or corrupt
   * anything (adds are upserts by key), and the condition that failed it can pass (another writer, a
   * timeout, an interrupt, a closed store that the next open reopens). False when the same call would
   * fail the same way again (a bad schema, record or option; a missing store) or when a failure must be
   * looked at first.
   */
  public boolean isRetryable() {
    return false;
  }
}
