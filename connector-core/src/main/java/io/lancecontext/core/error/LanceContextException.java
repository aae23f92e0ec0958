package io.lancecontext.core.error;

/**
 * Root of lancecontext's error taxonomy. Every failure the connectors surface to users is one of its
 * subclasses; lance-core's untyped exceptions are translated once, in {@link LanceErrors}.
 */
public class LanceContextException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LanceContextException(String message) {
    super(message);
  }

  public LanceContextException(String message, Throwable cause) {
    super(message, cause);
  }
}
