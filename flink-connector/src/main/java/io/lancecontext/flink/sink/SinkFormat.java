package io.lancecontext.flink.sink;

import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.schema.SchemaSpec;
import java.io.Serializable;
import java.util.Map;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/** How the sink's input elements become store rows: {@link RowData} of a row type, or records of a converter. */
abstract class SinkFormat<IN> implements Serializable {
  private static final long serialVersionUID = 1L;

  /** An element's changelog kind (records are always upserts). */
  abstract RowKind kind(IN element);

  /** An element's key, or null if it has none. */
  abstract String key(IN element);

  /** Writes elements into {@code handle}. */
  abstract Bound<IN> bind(StoreWriter handle, SchemaSpec spec);

  interface Bound<IN> {
    /** Writes one element (an upsert) and returns its estimated encoded size in bytes. */
    long write(IN element);
  }

  static SinkFormat<RowData> rows(RowType type, String keyColumn) {
    return new Rows(type, type.getFieldNames().indexOf(keyColumn));
  }

  static <T> SinkFormat<T> records(RecordConverter<T> converter, String keyColumn) {
    return new Records<>(converter, keyColumn);
  }

  private static final class Rows extends SinkFormat<RowData> {
    private static final long serialVersionUID = 1L;
    private final RowType type;
    private final int keyPos;

    Rows(RowType type, int keyPos) {
      this.type = type;
      this.keyPos = keyPos;
    }

    @Override
    RowKind kind(RowData row) {
      return row.getRowKind();
    }

    @Override
    String key(RowData row) {
      return keyPos < 0 || row.isNullAt(keyPos) ? null : row.getString(keyPos).toString();
    }

    @Override
    Bound<RowData> bind(StoreWriter handle, SchemaSpec spec) {
      return new RowDataWriter(handle.rows(), type, spec)::write;
    }
  }

  private static final class Records<T> extends SinkFormat<T> {
    private static final long serialVersionUID = 1L;
    private final RecordConverter<T> converter;
    private final String keyColumn;

    Records(RecordConverter<T> converter, String keyColumn) {
      this.converter = converter;
      this.keyColumn = keyColumn;
    }

    @Override
    RowKind kind(T element) {
      return RowKind.INSERT;
    }

    @Override
    String key(T element) {
      Object key = converter.toRecord(element).get(keyColumn);
      return key == null ? null : key.toString();
    }

    @Override
    Bound<T> bind(StoreWriter handle, SchemaSpec spec) {
      return element -> {
        Map<String, ?> record = converter.toRecord(element);
        handle.write(record);
        return estimate(record);
      };
    }

    private static long estimate(Object v) {
      if (v == null) {
        return 1;
      } else if (v instanceof CharSequence s) {
        return s.length();
      } else if (v instanceof byte[] b) {
        return b.length;
      } else if (v instanceof float[] f) {
        return 4L * f.length;
      } else if (v instanceof Map<?, ?> m) {
        long n = 0;
        for (Object x : m.values()) {
          n += estimate(x);
        }
        return n;
      } else if (v instanceof Iterable<?> it) {
        long n = 0;
        for (Object x : it) {
          n += estimate(x);
        }
        return n;
      }
      return 8;
    }
  }
}
