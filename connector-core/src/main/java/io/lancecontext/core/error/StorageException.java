package io.lancecontext.core.error;

/**
 * An I/O or lance-core failure that fits no more specific category, including a file of the store that
 * was removed underneath a read older than {@code gc.grace}. The original exception is the cause. Retryable
 * only when the object store answered with a transient condition (throttling, 503/500, a reset connection or
 * a timeout) after its client's own retries; otherwise look at the cause first.
 */
public class StorageException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  private final boolean transientFailure;

  public StorageException(String message, Throwable cause) {
    this(message, cause, false);
  }

  /** {@code transientFailure}: the object store reported a condition that passes (see the class comment). */
  public StorageException(String message, Throwable cause, boolean transientFailure) {
    super(message, cause);
    this.transientFailure = transientFailure;
  }

  @Override
  public boolean isRetryable() {
    return transientFailure;
  }
}
