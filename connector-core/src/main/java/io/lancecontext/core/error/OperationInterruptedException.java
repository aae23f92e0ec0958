package io.lancecontext.core.error;

/**
 * The calling thread was interrupted while it waited in an operation that writes no rows (opening a
 * store that another thread or process is creating or closing). Nothing changed; the thread's
 * interrupt status is kept set. Retrying is safe. An interrupted add raises
 * {@link WriteInterruptedException} instead.
 */
public class OperationInterruptedException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public OperationInterruptedException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public boolean isRetryable() {
    return true;
  }
}
