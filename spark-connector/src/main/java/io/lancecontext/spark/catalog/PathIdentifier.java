package io.lancecontext.spark.catalog;

import java.util.Arrays;
import java.util.Map;
import org.apache.spark.sql.connector.catalog.Identifier;

/**
 * A store named by its location, as {@code format("lancecontext").load(p)} / {@code .save(p)} name it: no
 * namespace, the path as the name; it also carries the read's or write's options (for {@link PathCatalog}),
 * which {@link #toString()} never shows ({@code storage.*} values are secrets).
 */
final class PathIdentifier implements Identifier {
  private final String path;
  private final Map<String, String> options;

  PathIdentifier(String path, Map<String, String> options) {
    this.path = path;
    this.options = Map.copyOf(options);
  }

  Map<String, String> options() {
    return options;
  }

  @Override
  public String[] namespace() {
    return new String[0];
  }

  @Override
  public String name() {
    return path;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Identifier i && i.namespace().length == 0 && i.name().equals(path);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(new Object[] {path});
  }

  @Override
  public String toString() {
    return path;
  }
}
