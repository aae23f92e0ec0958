package io.lancecontext.spark.write;

import io.lancecontext.core.RowAppender;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Copies Spark {@link InternalRow}s into a write handle's {@link RowAppender}, column by column, with the
 * conversions resolved once per write (strings as UTF-8 bytes, timestamps as microseconds, vectors as
 * float arrays); core checks every value against the store's schema.
 */
final class SparkRowWriter {
  @FunctionalInterface
  private interface Setter {
    void set(InternalRow row, int ordinal);
  }

  private final RowAppender rows;
  private final int[] columns;
  private final Setter[] setters;
  /** The fields in the order they are set: the key first (the row then goes straight to its bucket's batch). */
  private final int[] order;

  SparkRowWriter(RowAppender rows, StructType schema, SchemaSpec spec) {
    this.rows = rows;
    StructField[] fields = schema.fields();
    this.columns = new int[fields.length];
    this.setters = new Setter[fields.length];
    for (int i = 0; i < fields.length; i++) {
      columns[i] = rows.column(fields[i].name());
      setters[i] = setter(columns[i], fields[i].dataType(), spec.column(fields[i].name()));
    }
    this.order = rows.keyFirst(java.util.Arrays.asList(schema.fieldNames()));
  }

  void write(InternalRow row) {
    for (int i : order) {
      if (row.isNullAt(i)) {
        rows.setNull(columns[i]);
      } else {
        setters[i].set(row, i);
      }
    }
    rows.endRow();
  }

  private Setter setter(int column, DataType type, ColumnSpec spec) {
    if (type instanceof StringType) {
      return (r, i) -> utf8(column, r.getUTF8String(i));
    } else if (type instanceof LongType) {
      return (r, i) -> rows.setLong(column, r.getLong(i));
    } else if (type instanceof IntegerType) {
      return (r, i) -> rows.setInt(column, r.getInt(i));
    } else if (type instanceof ShortType) {
      return (r, i) -> rows.setInt(column, r.getShort(i));
    } else if (type instanceof ByteType) {
      return (r, i) -> rows.setInt(column, r.getByte(i));
    } else if (type instanceof DoubleType) {
      return (r, i) -> rows.setDouble(column, r.getDouble(i));
    } else if (type instanceof FloatType) {
      return (r, i) -> rows.setFloat(column, r.getFloat(i));
    } else if (type instanceof BooleanType) {
      return (r, i) -> rows.setBoolean(column, r.getBoolean(i));
    } else if (type instanceof BinaryType) {
      return (r, i) -> rows.setBytes(column, r.getBinary(i));
    } else if (type instanceof DateType) {
      return (r, i) -> rows.setDate(column, r.getInt(i));
    } else if (type instanceof TimestampType || type instanceof TimestampNTZType) {
      return (r, i) -> rows.setTimestampMicros(column, r.getLong(i));
    } else if (type instanceof ArrayType a && spec.type() == ColumnType.VECTOR) {
      String name = spec.name();
      return (r, i) -> rows.setVector(column, vector(r.getArray(i), name));
    } else if (type instanceof ArrayType || type instanceof StructType) {
      return (r, i) -> rows.setValue(column, value(r, i, type));
    }
    throw new IllegalArgumentException("column '" + spec.name() + "': Spark type " + type.simpleString()
        + " has no store mapping");
  }

  /** A string's bytes where they lie when they lie in an array (a Spark row's, usually), else a copy of them. */
  private void utf8(int column, UTF8String s) {
    if (s.getBaseObject() instanceof byte[] bytes) {
      rows.setUtf8(column, bytes, (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET), s.numBytes());
    } else {
      rows.setUtf8(column, s.getBytes());
    }
  }

  /**
   * A vector's floats. The table reports vectors as {@code array<float>} with nullable elements, so Spark adds no
   * per-element not-null check to the write plan (an {@code ArrayTransform} boxing every float, over a tenth of a
   * write's Java samples); a null element is refused here instead, naming the column.
   */
  private static float[] vector(ArrayData array, String column) {
    for (int k = 0, n = array.numElements(); k < n; k++) {
      if (array.isNullAt(k)) {
        throw new SchemaException(column, "null element at index " + k + " of a vector; vector elements may not"
            + " be null");
      }
    }
    return array.toFloatArray();
  }

  /** A nested value as a record holds it (lists, maps by field name). */
  private static Object value(Object container, int i, DataType type) {
    boolean isRow = container instanceof InternalRow;
    InternalRow row = isRow ? (InternalRow) container : null;
    ArrayData array = isRow ? null : (ArrayData) container;
    if (isRow ? row.isNullAt(i) : array.isNullAt(i)) {
      return null;
    }
    if (type instanceof StringType) {
      return (isRow ? row.getUTF8String(i) : array.getUTF8String(i)).toString();
    } else if (type instanceof LongType) {
      return isRow ? row.getLong(i) : array.getLong(i);
    } else if (type instanceof IntegerType) {
      return isRow ? row.getInt(i) : array.getInt(i);
    } else if (type instanceof ShortType) {
      return isRow ? row.getShort(i) : array.getShort(i);
    } else if (type instanceof ByteType) {
      return isRow ? row.getByte(i) : array.getByte(i);
    } else if (type instanceof DoubleType) {
      return isRow ? row.getDouble(i) : array.getDouble(i);
    } else if (type instanceof FloatType) {
      return isRow ? row.getFloat(i) : array.getFloat(i);
    } else if (type instanceof BooleanType) {
      return isRow ? row.getBoolean(i) : array.getBoolean(i);
    } else if (type instanceof BinaryType) {
      return isRow ? row.getBinary(i) : array.getBinary(i);
    } else if (type instanceof DateType) {
      return LocalDate.ofEpochDay(isRow ? row.getInt(i) : array.getInt(i));
    } else if (type instanceof TimestampType || type instanceof TimestampNTZType) {
      long micros = isRow ? row.getLong(i) : array.getLong(i);
      return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    } else if (type instanceof ArrayType a) {
      ArrayData items = isRow ? row.getArray(i) : array.getArray(i);
      List<Object> out = new ArrayList<>(items.numElements());
      for (int k = 0; k < items.numElements(); k++) {
        out.add(value(items, k, a.elementType()));
      }
      return out;
    } else if (type instanceof StructType s) {
      InternalRow struct = isRow ? row.getStruct(i, s.size()) : array.getStruct(i, s.size());
      Map<String, Object> out = new LinkedHashMap<>();
      for (int k = 0; k < s.size(); k++) {
        out.put(s.fields()[k].name(), value(struct, k, s.fields()[k].dataType()));
      }
      return out;
    }
    throw new IllegalArgumentException("Spark type " + type.simpleString() + " has no store mapping");
  }
}
