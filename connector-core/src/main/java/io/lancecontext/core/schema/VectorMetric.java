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

  public static Optional<VectorMetric> fromJsonName(String name) {
    return Arrays.stream(values()).filter(m -> m.jsonName.equals(name)).findFirst();
  }

  @Override
  public String toString() {
    return jsonName;
  }
}
