package io.lancecontext.flink.sink;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.schema.SchemaSpec;
import java.io.Serializable;
import java.util.Map;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/** How the sink's input elements become store rows: {@link RowData} of a row type, or records of a converter. */
abstract class SinkFormat<IN> implements Serializable {
  private static final long serialVersionUID = 1L;

  /** An element's changelog kind (records are always upserts). */
  abstract RowKind kind(IN element);

  /** An element's key, or null if it has none. */
  abstract String key(IN element);

  /**
   * The bucket of an element's key in a store of {@code shards} buckets ({@link ContextStore#bucketOf(String, int)}),
   * bucket 0 without a key.
   */
  int bucket(IN element, int shards) {
    String key = key(element);
    return key == null ? 0 : ContextStore.bucketOf(key, shards);
  }

  /** Writes elements into {@code handle}. */
  abstract Bound<IN> bind(StoreWriter handle, SchemaSpec spec);

  interface Bound<IN> {
    /** Writes one element (an upsert) and returns its estimated encoded size in bytes. */
    long write(IN element);
  }

  /**
   * {@code s} when its UTF-8 bytes lie in one heap segment (a row that came over the network, usually): they are
   * {@code getSegments()[0].getArray()} from {@code getOffset()}, {@code getSizeInBytes()} long, to be read where they
   * lie; null when they do not ({@code s.toBytes()} then copies them).
   */
  static BinaryStringData inOneHeapSegment(StringData s) {
    if (s instanceof BinaryStringData b) {
      b.ensureMaterialized();
      MemorySegment[] segments = b.getSegments();
      if (segments.length == 1 && !segments[0].isOffHeap()) {
        return b;
      }
    }
    return null;
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

    /** From the key's UTF-8 bytes, not decoded to a {@code String}. */
    @Override
    int bucket(RowData row, int shards) {
      if (keyPos < 0 || row.isNullAt(keyPos)) {
        return 0;
      }
      StringData key = row.getString(keyPos);
      BinaryStringData b = inOneHeapSegment(key);
      if (b != null) {
        return ContextStore.bucketOf(b.getSegments()[0].getArray(), b.getOffset(), b.getSizeInBytes(), shards);
      }
      byte[] utf8 = key.toBytes();
      return ContextStore.bucketOf(utf8, 0, utf8.length, shards);
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
