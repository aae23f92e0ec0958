package io.lancecontext.core.error;

/**
 * The thread calling an add was interrupted (a cancelled task). Only that call fails: the shard stays
 * owned, and other threads adding to the same shard (whose rows may share the same put) are not
 * affected. The rows of the call were not acknowledged (see {@link WriteNotAcknowledgedException}): if
 * the interrupt came before its rows were handed to a put, nothing was written; if it came while that
 * put was in flight, the call waited for it, so the rows of a shard are either all durable or none. The
 * thread's interrupt status is kept set.
 */
public class WriteInterruptedException extends WriteNotAcknowledgedException {
  private static final long serialVersionUID = 1L;

  public WriteInterruptedException(String message) {
    super(message);
  }

  public WriteInterruptedException(String message, Throwable cause) {
    super(message, cause);
  }
}
