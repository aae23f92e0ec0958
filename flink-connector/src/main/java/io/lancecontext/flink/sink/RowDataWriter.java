package io.lancecontext.flink.sink;

import io.lancecontext.core.RowAppender;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;

/**
 * Copies Flink {@link RowData} into a write handle's {@link RowAppender}, column by column, with the
 * conversions resolved once (strings as UTF-8 bytes, timestamps as microseconds UTC, vectors as float
 * arrays); core checks every value against the store's schema.
 */
final class RowDataWriter {
  /** Sets one column and returns its estimated encoded size in bytes. */
  @FunctionalInterface
  private interface Setter {
    int set(RowData row, int pos);
  }

  private final RowAppender rows;
  private final int[] columns;
  private final Setter[] setters;
  /** The fields in the order they are set: the key first (the row then goes straight to its bucket's batch). */
  private final int[] order;

  RowDataWriter(RowAppender rows, RowType type, SchemaSpec spec) {
    this.rows = rows;
    int n = type.getFieldCount();
    this.columns = new int[n];
    this.setters = new Setter[n];
    for (int i = 0; i < n; i++) {
      String name = type.getFieldNames().get(i);
      columns[i] = rows.column(name);
      setters[i] = setter(columns[i], type.getTypeAt(i), spec.column(name).type() == ColumnType.VECTOR);
    }
    this.order = rows.keyFirst(type.getFieldNames());
  }

  /**
   * Sets a string column from the bytes of {@code s} where they lie when they lie in one heap segment
   * ({@link SinkFormat#inOneHeapSegment}), else from a copy; returns their length.
   */
  private int utf8(int column, StringData s) {
    BinaryStringData b = SinkFormat.inOneHeapSegment(s);
    if (b != null) {
      rows.setUtf8(column, b.getSegments()[0].getArray(), b.getOffset(), b.getSizeInBytes());
      return b.getSizeInBytes();
    }
    byte[] utf8 = s.toBytes();
    rows.setUtf8(column, utf8);
    return utf8.length;
  }

  /** Writes one row (an upsert) and returns its estimated encoded size in bytes. */
  long write(RowData row) {
    long bytes = 0;
    for (int i : order) {
      if (row.isNullAt(i)) {
        rows.setNull(columns[i]);
        bytes++;
      } else {
        bytes += setters[i].set(row, i);
      }
    }
    rows.endRow();
    return bytes;
  }

  private Setter setter(int column, LogicalType t, boolean vector) {
    return switch (t.getTypeRoot()) {
      case CHAR, VARCHAR -> (r, i) -> utf8(column, r.getString(i)) + 4;
      case BIGINT -> (r, i) -> {
        rows.setLong(column, r.getLong(i));
        return 8;
      };
      case INTEGER -> (r, i) -> {
        rows.setInt(column, r.getInt(i));
        return 4;
      };
      case SMALLINT -> (r, i) -> {
        rows.setInt(column, r.getShort(i));
        return 4;
      };
      case TINYINT -> (r, i) -> {
        rows.setInt(column, r.getByte(i));
        return 4;
      };
      case DOUBLE -> (r, i) -> {
        rows.setDouble(column, r.getDouble(i));
        return 8;
      };
      case FLOAT -> (r, i) -> {
        rows.setFloat(column, r.getFloat(i));
        return 4;
      };
      case BOOLEAN -> (r, i) -> {
        rows.setBoolean(column, r.getBoolean(i));
        return 1;
      };
      case BINARY, VARBINARY -> (r, i) -> {
        byte[] b = r.getBinary(i);
        rows.setBytes(column, b);
        return b.length + 4;
      };
      case DATE -> (r, i) -> {
        rows.setDate(column, r.getInt(i));
        return 4;
      };
      case TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE -> {
        int precision = precision(t);
        yield (r, i) -> {
          rows.setTimestampMicros(column, micros(r.getTimestamp(i, precision)));
          return 8;
        };
      }
      case ARRAY -> vector
          ? (r, i) -> {
            float[] v = r.getArray(i).toFloatArray();
            rows.setVector(column, v);
            return 4 * v.length;
          }
          : (r, i) -> {
            ArrayData a = r.getArray(i);
            rows.setValue(column, list(a, ((ArrayType) t).getElementType()));
            return 8 + 8 * a.size();
          };
      case ROW -> (r, i) -> {
        rows.setValue(column, struct(r.getRow(i, ((RowType) t).getFieldCount()), (RowType) t));
        return 8 * ((RowType) t).getFieldCount();
      };
      default -> throw new IllegalArgumentException("Flink type " + t.asSummaryString() + " has no store mapping");
    };
  }

  private static int precision(LogicalType t) {
    return t instanceof TimestampType ts ? ts.getPrecision() : ((LocalZonedTimestampType) t).getPrecision();
  }

  private static long micros(TimestampData ts) {
    return Math.multiplyExact(ts.getMillisecond(), 1000L) + ts.getNanoOfMillisecond() / 1000;
  }

  private static Map<String, Object> struct(RowData row, RowType type) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < type.getFieldCount(); i++) {
      out.put(type.getFieldNames().get(i), row.isNullAt(i) ? null : value(RowData.createFieldGetter(type.getTypeAt(i), i)
          .getFieldOrNull(row), type.getTypeAt(i)));
    }
    return out;
  }

  private static List<Object> list(ArrayData array, LogicalType item) {
    ArrayData.ElementGetter getter = ArrayData.createElementGetter(item);
    List<Object> out = new ArrayList<>(array.size());
    for (int i = 0; i < array.size(); i++) {
      Object v = getter.getElementOrNull(array, i);
      out.add(v == null ? null : value(v, item));
    }
    return out;
  }

  /** A Flink internal value as a record holds it. */
  private static Object value(Object v, LogicalType t) {
    return switch (t.getTypeRoot()) {
      case CHAR, VARCHAR -> v.toString();
      case DATE -> LocalDate.ofEpochDay((Integer) v);
      case TIMESTAMP_WITHOUT_TIME_ZONE -> ((TimestampData) v).toLocalDateTime().toInstant(java.time.ZoneOffset.UTC);
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE -> ((TimestampData) v).toInstant();
      case ARRAY -> list((ArrayData) v, ((ArrayType) t).getElementType());
      case ROW -> struct((RowData) v, (RowType) t);
      default -> v;  // numbers, booleans, byte[]
    };
  }
}
