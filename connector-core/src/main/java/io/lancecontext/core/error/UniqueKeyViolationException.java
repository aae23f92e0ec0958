package io.lancecontext.core.error;

import java.util.List;

/**
 * An add to a store with the {@code unique-ids} capability named keys that already exist with other
 * content. Not retryable: the same add fails again. (Re-adding a row identical to the stored one is
 * not a violation, so retrying an add that failed for another reason is safe.)
 */
public class UniqueKeyViolationException extends LanceContextException {
  private static final long serialVersionUID = 1L;
  private final List<String> keys;

  public UniqueKeyViolationException(String message, List<String> keys) {
    super(message);
    this.keys = List.copyOf(keys);
  }

  /** The keys that already exist (all of them, in the order of the add). */
  public List<String> keys() {
    return keys;
  }
}
