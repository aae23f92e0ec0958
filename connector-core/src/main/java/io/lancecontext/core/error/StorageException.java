package io.lancecontext.core.error;

/** An I/O or lance-core failure that fits no more specific category. */
public class StorageException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public StorageException(String message, Throwable cause) {
    super(message, cause);
  }
}
