package io.lancecontext.spark;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.StoreConfig;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Spark's options for a store, mapped onto core's {@link StoreConfig}: the same keys as in core and Flink
 * (docs/options.md). Spark hands DataSource options over case-insensitively; core keys are lower case, so
 * they are matched lower-cased, except the values of {@code storage.*} keys, which are passed as given.
 * Unknown keys fail with {@link BadOptionException} naming them.
 */
public final class SparkOptions {
  private SparkOptions() {}

  /** Core options from Spark's (case-preserving) option map. */
  public static StoreConfig toConfig(Map<String, String> sparkOptions) {
    Map<String, String> options = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : sparkOptions.entrySet()) {
      options.put(e.getKey().toLowerCase(java.util.Locale.ROOT), e.getValue());
    }
    if (!options.containsKey("path")) {
      throw new BadOptionException("path", "is required: .option(\"path\", p), .load(p) or .save(p)");
    }
    return StoreConfig.of(options);
  }
}
