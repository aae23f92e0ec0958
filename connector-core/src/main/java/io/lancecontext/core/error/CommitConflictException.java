package io.lancecontext.core.error;

/**
 * A commit to the base table (a merge, a compaction, an index build) lost against concurrent commits
 * and its retries were exhausted. Nothing of it was committed; retrying is safe.
 */
public class CommitConflictException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public CommitConflictException(String message) {
    super(message);
  }

  public CommitConflictException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public boolean isRetryable() {
    return true;
  }
}
