package io.lancecontext.core.error;

/**
 * An add (or delete) that was not acknowledged: the writer was fenced, the put timed out, or the calling
 * thread was interrupted. The rows of the call may or may not be durable (some may be visible to readers
 * already, some may never be); nothing about them was promised. Retrying the same call is safe, because
 * adds are upserts by key: a retry writes the same rows again and the newest row of each key wins.
 */
public abstract class WriteNotAcknowledgedException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  protected WriteNotAcknowledgedException(String message) {
    super(message);
  }

  protected WriteNotAcknowledgedException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Always true: retrying the same add is safe. */
  @Override
  public final boolean isRetryable() {
    return true;
  }
}
