package io.lancecontext.core.error;

/** No store exists at the given location, and the caller did not ask for one to be created. */
public class StoreNotFoundException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public StoreNotFoundException(String location, Throwable cause) {
    super("no lancecontext store at " + location, cause);
  }
}
