package io.lancecontext.core.error;

/**
 * A publish of a transaction that garbage collection aborted because no owner renewed it within its
 * {@code txn.timeout} (a job that failed and was restored, or replayed, later than that): its staged rows are
 * gone. The message names the option that keeps such transactions longer. Not retryable.
 */
public class TransactionExpiredException extends TransactionAbortedException {
  private static final long serialVersionUID = 1L;

  public TransactionExpiredException(String message) {
    super(message);
  }
}
