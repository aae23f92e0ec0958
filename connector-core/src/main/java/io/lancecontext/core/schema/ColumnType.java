package io.lancecontext.core.schema;

import java.util.Arrays;
import java.util.Optional;

/** The column types a {@link SchemaSpec} supports, by their JSON names. */
public enum ColumnType {
  BOOL("bool"),
  INT8("int8"),
  INT16("int16"),
  INT32("int32"),
  INT64("int64"),
  FLOAT32("float32"),
  FLOAT64("float64"),
  STRING("string"),
  LARGE_STRING("large_string"),
  BINARY("binary"),
  LARGE_BINARY("large_binary"),
  DATE("date"),
  /** Microseconds since the epoch, UTC. */
  TIMESTAMP("timestamp"),
  LIST("list"),
  STRUCT("struct"),
  /** Fixed-size list of float32 with a declared dimension and distance metric. */
  VECTOR("vector");

  private final String jsonName;

  ColumnType(String jsonName) {
    this.jsonName = jsonName;
  }

  public String jsonName() {
    return jsonName;
  }

  public boolean isBinary() {
    return this == BINARY || this == LARGE_BINARY;
  }

  public boolean isString() {
    return this == STRING || this == LARGE_STRING;
  }

  public boolean isInteger() {
    return this == INT8 || this == INT16 || this == INT32 || this == INT64;
  }

  public boolean isNested() {
    return this == LIST || this == STRUCT || this == VECTOR;
  }

  public static Optional<ColumnType> fromJsonName(String name) {
    return Arrays.stream(values()).filter(t -> t.jsonName.equals(name)).findFirst();
  }

  public static String supportedNames() {
    return String.join(", ", Arrays.stream(values()).map(ColumnType::jsonName).toList());
  }

  @Override
  public String toString() {
    return jsonName;
  }
}
