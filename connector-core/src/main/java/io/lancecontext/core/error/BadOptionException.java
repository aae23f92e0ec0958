package io.lancecontext.core.error;

/** An option key is unknown, or its value cannot be parsed or is out of range. Names the key. */
public class BadOptionException extends LanceContextException {
  private static final long serialVersionUID = 1L;
  private final String key;

  public BadOptionException(String key, String message) {
    super("option '" + key + "': " + message);
    this.key = key;
  }

  public String key() {
    return key;
  }
}
