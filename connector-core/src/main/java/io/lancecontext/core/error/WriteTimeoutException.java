package io.lancecontext.core.error;

/**
 * A put did not finish within {@code write.put-timeout}. The rows of the call were not acknowledged
 * (see {@link WriteNotAcknowledgedException}); the writer is abandoned (lance-core 7.0.0 can block
 * forever in a put) and the next call claims the shard again.
 */
public class WriteTimeoutException extends WriteNotAcknowledgedException {
  private static final long serialVersionUID = 1L;

  public WriteTimeoutException(String message) {
    super(message);
  }

  public WriteTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
