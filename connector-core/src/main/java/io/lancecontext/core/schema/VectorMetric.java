package io.lancecontext.core.schema;

import java.util.Arrays;
import java.util.Optional;

/** Distance metric recorded with a vector column (used by vector indexes and searches). */
public enum VectorMetric {
  L2("l2"),
  COSINE("cosine"),
  DOT("dot");

  private final String jsonName;

  VectorMetric(String jsonName) {
    this.jsonName = jsonName;
  }

  public String jsonName() {
    return jsonName;
  }

  /** The metric named {@code name}, in any case ({@code L2}, {@code l2}, {@code Cosine}). */
  public static Optional<VectorMetric> fromJsonName(String name) {
    return name == null ? Optional.empty()
        : Arrays.stream(values()).filter(m -> m.jsonName.equalsIgnoreCase(name.trim())).findFirst();
  }

  @Override
  public String toString() {
    return jsonName;
  }
}
