package io.lancecontext.core.error;

/**
 * A read asked for a snapshot the store does not have: a tag no one created (or one dropped), a token that is
 * not a snapshot token of this store, or a snapshot whose data is no longer kept (untagged and older than
 * {@code snapshot.retention} and {@code gc.grace}, so garbage collection may have removed what it read). A
 * read at a snapshot returns exactly the rows of that snapshot or fails with this error, never other rows.
 */
public class SnapshotNotFoundException extends LanceContextException {
  private static final long serialVersionUID = 1L;

  public SnapshotNotFoundException(String message) {
    super(message);
  }
}
