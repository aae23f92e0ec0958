package io.lancecontext.core.options;

import java.util.Locale;

/** The scalar index kept on the key column (option {@code index.key}). */
public enum KeyIndexType {
  BTREE,
  ZONEMAP,
  NONE;

  static KeyIndexType parse(String text) {
    try {
      return valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("expected btree, zonemap or none");
    }
  }

  public String lanceName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
