package io.lancecontext.core.error;

/**
 * An I/O or lance-core failure that fits no more specific category, including a file of the store that
 * was removed underneath a read older than {@code gc.grace}. The original exception is the cause. Not
 * retryable as such: look at the cause first.
 */
public class StorageException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public StorageException(String message, Throwable cause) {
    super(message, cause);
  }
}
