package io.lancecontext.core.error;

/**
 * Another writer (usually another process) held the shard this call had to write to, and this JVM did
 * not win it back within {@code write.put-timeout}; or a put failed after another writer claimed the
 * shard. The rows of the call were not acknowledged (see {@link WriteNotAcknowledgedException}); the
 * store claims the shard again on a later call.
 */
public class FencedWriterException extends WriteNotAcknowledgedException {
  private static final long serialVersionUID = 1L;

  public FencedWriterException(String message) {
    super(message);
  }

  public FencedWriterException(String message, Throwable cause) {
    super(message, cause);
  }
}
