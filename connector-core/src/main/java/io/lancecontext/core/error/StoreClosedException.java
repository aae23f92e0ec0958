package io.lancecontext.core.error;

/**
 * The call used a store that is closed. Either the handle (or writer handle) itself was closed, and the
 * call will fail again on it ({@link #isRetryable()} false); or the JVM's resident store behind an open
 * handle was closed underneath it ({@code ContextStore.closeAllResident()}, JVM shutdown): nothing of
 * the call was written, and the same call through a handle opened again succeeds ({@link #isRetryable()}
 * true: the next open reopens the store).
 */
public class StoreClosedException extends LanceContextException {
  private static final long serialVersionUID = 1L;
  private final boolean retryable;

  public StoreClosedException(String message, boolean retryable) {
    super(message);
    this.retryable = retryable;
  }

  public StoreClosedException(String message, boolean retryable, Throwable cause) {
    super(message, cause);
    this.retryable = retryable;
  }

  @Override
  public boolean isRetryable() {
    return retryable;
  }
}
