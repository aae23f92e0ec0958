package io.lancecontext.flink;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/** Core's decoded records (lookups) as Flink {@link RowData} of a declared row type. */
public final class RecordRows {
  private RecordRows() {}

  public static RowData toRow(Map<String, Object> record, RowType type) {
    GenericRowData row = new GenericRowData(type.getFieldCount());
    for (int i = 0; i < type.getFieldCount(); i++) {
      row.setField(i, internal(record.get(type.getFieldNames().get(i)), type.getTypeAt(i)));
    }
    return row;
  }

  @SuppressWarnings("unchecked")
  static Object internal(Object v, LogicalType t) {
    if (v == null) {
      return null;
    }
    if (v instanceof String s) {
      return StringData.fromString(s);
    }
    if (v instanceof Instant i) {
      return TimestampData.fromInstant(i);
    }
    if (v instanceof LocalDate d) {
      return (int) d.toEpochDay();
    }
    if (v instanceof float[] f) {
      Float[] out = new Float[f.length];
      for (int i = 0; i < f.length; i++) {
        out[i] = f[i];
      }
      return new GenericArrayData(out);
    }
    if (v instanceof List<?> list) {
      LogicalType item = ((ArrayType) t).getElementType();
      Object[] out = new Object[list.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = internal(list.get(i), item);
      }
      return new GenericArrayData(out);
    }
    if (v instanceof Map<?, ?> struct) {
      return toRow((Map<String, Object>) struct, (RowType) t);
    }
    return v;  // Boolean, Byte, Short, Integer, Long, Float, Double, byte[]: Flink's internal types already
  }
}
