package io.lancecontext.core.error;

/**
 * Another writer (usually another process) claimed the shard this writer was writing to. The rows of
 * the failed call were not acknowledged and may be lost; retrying the call is safe because adds upsert
 * by key, and the store re-acquires the shard on the next call.
 */
public class FencedWriterException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public FencedWriterException(String message) {
    super(message);
  }

  public FencedWriterException(String message, Throwable cause) {
    super(message, cause);
  }
}
