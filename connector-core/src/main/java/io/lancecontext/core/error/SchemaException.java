package io.lancecontext.core.error;

import java.util.Optional;

/**
 * A schema spec breaks a rule (unsupported type, reserved name, bad key, ...), or a store was opened
 * with a spec that differs from the one persisted with it. Names the offending column when there is one.
 */
public class SchemaException extends LanceContextException {
  private static final long serialVersionUID = 1L;
  private final String column;

  public SchemaException(String column, String message) {
    super(column == null ? message : "column '" + column + "': " + message);
    this.column = column;
  }

  public SchemaException(String message) {
    this(null, message);
  }

  /** A schema error detected by lance-core ({@code cause}), translated by {@code internal.lance.LanceErrors}. */
  public SchemaException(String message, Throwable cause) {
    super(message, cause);
    this.column = null;
  }

  /** The offending column (dotted path for nested fields), if the error concerns one. */
  public Optional<String> column() {
    return Optional.ofNullable(column);
  }
}
