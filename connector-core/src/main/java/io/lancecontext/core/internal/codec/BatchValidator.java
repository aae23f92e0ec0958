package io.lancecontext.core.internal.codec;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The one validation entry point every write path goes through (records, Arrow batches from Spark or
 * Flink, tombstones) before anything reaches storage: the batch must be in the store's dataset schema
 * (names, order, types, nullability; metadata is not compared), the key must be non-null,
 * non-empty and valid UTF-8 (keys are compared as text in every tier), non-nullable columns and
 * struct fields must hold no nulls, and vectors no null elements.
 */
public final class BatchValidator {
  private BatchValidator() {}

  /** Throws {@link SchemaException} or {@link InvalidRecordException} if the batch cannot be stored. */
  public static void validate(SchemaSpec spec, VectorSchemaRoot root) {
    checkSchema(spec, root);
    VarCharVector key = (VarCharVector) root.getVector(spec.key());
    int rows = root.getRowCount();
    java.nio.charset.CharsetDecoder decoder = Utf8.decoder();
    byte[] scratch = new byte[64];
    for (int row = 0; row < rows; row++) {
      if (key.isNull(row)) {
        throw new InvalidRecordException(spec.key(), row, "the key is null");
      }
      int length = key.getValueLength(row);
      if (length == 0) {
        throw new InvalidRecordException(spec.key(), row, "the key is empty");
      }
      if (scratch.length < length) {
        scratch = new byte[Math.max(length, scratch.length * 2)];
      }
      key.getDataBuffer().getBytes(key.getStartOffset(row), scratch, 0, length);
      if (!Utf8.valid(decoder, scratch, 0, length)) {
        throw new InvalidRecordException(spec.key(), row, "the key is not valid UTF-8");
      }
    }
    for (ColumnSpec c : spec.columns()) {
      checkColumn(root.getVector(c.name()), c, c.name(), rows);
    }
  }

  private static void checkSchema(SchemaSpec spec, VectorSchemaRoot root) {
    List<Field> expected = spec.toArrowSchema().getFields();
    List<Field> actual = root.getSchema().getFields();
    for (int i = 0; i < expected.size(); i++) {
      Field e = expected.get(i);
      if (i >= actual.size()) {
        throw new SchemaException(e.getName(), "the batch lacks this column (a batch must be in the store's dataset schema)");
      }
      Field a = actual.get(i);
      if (!a.getName().equals(e.getName())) {
        throw new SchemaException(a.getName(), "expected column '" + e.getName() + "' at position " + i
            + " (a batch must be in the store's dataset schema)");
      }
      if (!sameShape(e, a)) {
        throw new SchemaException(a.getName(), "expected Arrow type " + describe(e) + ", got " + describe(a));
      }
    }
    if (actual.size() > expected.size()) {
      throw new SchemaException(actual.get(expected.size()).getName(), "unknown column; the store's columns are "
          + spec.columnNames());
    }
  }

  private static boolean sameShape(Field e, Field a) {
    if (!e.getType().equals(a.getType()) || e.isNullable() != a.isNullable()
        || e.getChildren().size() != a.getChildren().size()) {
      return false;
    }
    for (int i = 0; i < e.getChildren().size(); i++) {
      Field ec = e.getChildren().get(i);
      Field ac = a.getChildren().get(i);
      boolean listItem = e.getType() instanceof org.apache.arrow.vector.types.pojo.ArrowType.List
          || e.getType() instanceof org.apache.arrow.vector.types.pojo.ArrowType.FixedSizeList;
      if ((!listItem && !ec.getName().equals(ac.getName())) || !sameShape(ec, ac)) {
        return false;
      }
    }
    return true;
  }

  private static String describe(Field f) {
    StringBuilder sb = new StringBuilder(f.getType().toString());
    if (!f.getChildren().isEmpty()) {
      sb.append('<');
      for (int i = 0; i < f.getChildren().size(); i++) {
        Field c = f.getChildren().get(i);
        sb.append(i == 0 ? "" : ", ").append(c.getName()).append(": ").append(describe(c));
      }
      sb.append('>');
    }
    return sb.append(f.isNullable() ? "" : " not null").toString();
  }

  /**
   * Checks one column of {@code rows} rows. Only what can fail is looked at row by row: a nullable column of
   * scalars cannot, and a column, struct field, list item or vector element with no null anywhere (Arrow's null
   * count) cannot either; what is left goes through {@link #checkSlot}, as before.
   */
  private static void checkColumn(FieldVector v, ColumnSpec c, String path, int rows) {
    if (!mayFail(v, c)) {
      return;
    }
    for (int row = 0; row < rows; row++) {
      checkSlot(v, row, c, path, row);
    }
  }

  /** Whether some slot of {@code v} may break a rule of {@code c} (false: none can). */
  private static boolean mayFail(FieldVector v, ColumnSpec c) {
    if (!c.nullable() && v.getNullCount() > 0) {
      return true;
    }
    if (c.type() == ColumnType.STRUCT) {
      StructVector s = (StructVector) v;
      for (ColumnSpec f : c.fields()) {
        if (mayFail((FieldVector) s.getChild(f.name()), f)) {
          return true;
        }
      }
      return false;
    } else if (c.type() == ColumnType.LIST) {
      return mayFail(((ListVector) v).getDataVector(), c.item());
    } else if (c.type() == ColumnType.VECTOR) {
      return ((FixedSizeListVector) v).getDataVector().getNullCount() > 0;
    }
    return false;
  }

  private static void checkSlot(FieldVector v, int index, ColumnSpec c, String path, int row) {
    if (v.isNull(index)) {
      if (!c.nullable()) {
        throw new InvalidRecordException(path, row, "null in a non-nullable " + c.type() + " column");
      }
      return;
    }
    if (c.type() == ColumnType.STRUCT) {
      StructVector s = (StructVector) v;
      for (ColumnSpec f : c.fields()) {
        checkSlot((FieldVector) s.getChild(f.name()), index, f, path + "." + f.name(), row);
      }
    } else if (c.type() == ColumnType.LIST) {
      ListVector l = (ListVector) v;
      int start = l.getElementStartIndex(index);
      int end = l.getElementEndIndex(index);
      for (int i = start; i < end; i++) {
        checkSlot(l.getDataVector(), i, c.item(), path + "[" + (i - start) + "]", row);
      }
    } else if (c.type() == ColumnType.VECTOR) {
      FixedSizeListVector f = (FixedSizeListVector) v;
      FieldVector data = f.getDataVector();
      for (int i = 0; i < c.dim(); i++) {
        if (data.isNull(index * c.dim() + i)) {
          throw new InvalidRecordException(path, row, "vector element " + i + " is null");
        }
      }
    }
  }
}
