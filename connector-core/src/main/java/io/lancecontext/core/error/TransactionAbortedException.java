package io.lancecontext.core.error;

/**
 * A publish of a transaction that was aborted ({@code ContextStore.abort}), or an abort of one already
 * published. A transaction is decided once; not retryable.
 */
public class TransactionAbortedException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public TransactionAbortedException(String message) {
    super(message, null);
  }
}
