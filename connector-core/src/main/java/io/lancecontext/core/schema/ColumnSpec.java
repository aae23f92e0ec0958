package io.lancecontext.core.schema;

import java.util.List;
import java.util.Objects;

/**
 * One declared column (or a list item / struct field) of a {@link SchemaSpec}. A plain immutable
 * value: the rules are checked when a {@link SchemaSpec} is built, so that errors can name the column
 * by its full path.
 *
 * @param name column or field name; {@code "item"} for list items
 * @param type the column type
 * @param nullable whether nulls are allowed
 * @param blob Lance blob encoding (binary columns only)
 * @param dim vector dimension (vectors only, otherwise 0)
 * @param metric vector distance metric (vectors only, otherwise null)
 * @param fields struct fields (structs only, otherwise empty)
 * @param item list item (lists only, otherwise null)
 */
public record ColumnSpec(
    String name,
    ColumnType type,
    boolean nullable,
    boolean blob,
    int dim,
    VectorMetric metric,
    List<ColumnSpec> fields,
    ColumnSpec item) {

  public static final String LIST_ITEM_NAME = "item";

  public ColumnSpec {
    Objects.requireNonNull(type, "type");
    fields = fields == null ? List.of() : List.copyOf(fields);
    if (item != null && item.name() == null) {
      item = item.withName(LIST_ITEM_NAME);
    }
  }

  /** A nullable column of a scalar type. */
  public static ColumnSpec of(String name, ColumnType type) {
    return new ColumnSpec(name, type, true, false, 0, null, List.of(), null);
  }

  public static ColumnSpec string(String name) {
    return of(name, ColumnType.STRING);
  }

  public static ColumnSpec vector(String name, int dim, VectorMetric metric) {
    return new ColumnSpec(name, ColumnType.VECTOR, true, false, dim, metric, List.of(), null);
  }

  public static ColumnSpec struct(String name, ColumnSpec... fields) {
    return new ColumnSpec(name, ColumnType.STRUCT, true, false, 0, null, List.of(fields), null);
  }

  public static ColumnSpec list(String name, ColumnSpec item) {
    return new ColumnSpec(name, ColumnType.LIST, true, false, 0, null, List.of(), item);
  }

  /** A list item of the given type (items carry no name of their own). */
  public static ColumnSpec item(ColumnType type) {
    return of(LIST_ITEM_NAME, type);
  }

  /** A list item that is a struct. */
  public static ColumnSpec structItem(ColumnSpec... fields) {
    return struct(LIST_ITEM_NAME, fields);
  }

  /** A binary column stored with Lance's blob encoding (read lazily, kept out of scans' hot path). */
  public static ColumnSpec blob(String name, ColumnType binaryType) {
    return new ColumnSpec(name, binaryType, true, true, 0, null, List.of(), null);
  }

  public ColumnSpec withNullable(boolean nullable) {
    return new ColumnSpec(name, type, nullable, blob, dim, metric, fields, item);
  }

  public ColumnSpec withName(String newName) {
    return new ColumnSpec(newName, type, nullable, blob, dim, metric, fields, item);
  }

  /** Looks up a struct field by name. */
  public ColumnSpec field(String fieldName) {
    for (ColumnSpec f : fields) {
      if (f.name().equals(fieldName)) {
        return f;
      }
    }
    return null;
  }
}
