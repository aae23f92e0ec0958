package io.lancecontext.core.error;

/**
 * A commit lost against a concurrent commit and retries were exhausted, or an add violated the
 * store's {@code unique-ids} capability (its key already exists).
 */
public class CommitConflictException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public CommitConflictException(String message) {
    super(message);
  }

  public CommitConflictException(String message, Throwable cause) {
    super(message, cause);
  }
}
