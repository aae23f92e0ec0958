package io.lancecontext.core.internal.store;

import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.read.ReadSplit;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The options of a handle that reads a split in a process that did not plan it: the split's store path and
 * the reading side's own {@code storage.*} entries, nothing else (every other option then takes the value of
 * the store resident in that JVM, or its default).
 */
public final class SplitOptions {
  private SplitOptions() {}

  /** The options to open {@code split}'s store with; other keys of {@code options} are ignored. */
  public static Map<String, String> of(ReadSplit split, Map<String, String> options) {
    Map<String, String> merged = new LinkedHashMap<>();
    merged.put(StoreOptions.PATH.key(), split.config().get(StoreOptions.PATH));
    options.forEach((k, v) -> {
      if (k.startsWith(StoreOptions.STORAGE_PREFIX)) {
        merged.put(k, v);
      }
    });
    return merged;
  }
}
