package io.lancecontext.core.error;

/**
 * A put did not finish within {@code write.put-timeout}. Handled like a fenced writer: the rows of
 * the call are not acknowledged, the writer is abandoned, and the next call re-acquires the shard.
 */
public class WriteTimeoutException extends FencedWriterException {
  private static final long serialVersionUID = 1L;

  public WriteTimeoutException(String message) {
    super(message);
  }
}
