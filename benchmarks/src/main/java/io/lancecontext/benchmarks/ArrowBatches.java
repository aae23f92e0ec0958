package io.lancecontext.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What a lance-core user writes by hand for the baselines: records to an Arrow batch, and an {@link ArrowReader}
 * over batches (lance-core takes its input as readers). Only the value types the benchmarks' records hold
 * ({@link Bench#rolloutAdd}): strings, int32, int64, float64, bool, timestamps ({@link Instant}), lists of int32
 * and vectors ({@code float[]}); a column a record lacks is null. No validation: the baselines write what the
 * benchmark generated.
 */
final class ArrowBatches {
  private ArrowBatches() {}

  /** A new batch of {@code schema} holding {@code records} (by column name); the caller closes it. */
  static VectorSchemaRoot encode(Schema schema, List<? extends Map<String, ?>> records, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    try {
      for (FieldVector v : root.getFieldVectors()) {
        v.setInitialCapacity(Math.max(1, records.size()));  // sized for the rows, not Arrow's default ~4,000
      }
      root.allocateNew();
      for (int row = 0; row < records.size(); row++) {
        for (FieldVector v : root.getFieldVectors()) {
          Object value = records.get(row).get(v.getName());
          if (value == null) {
            v.setNull(row);
          } else {
            set(v, row, value);
          }
        }
      }
      root.setRowCount(records.size());
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  private static void set(FieldVector v, int row, Object value) {
    if (v instanceof VarCharVector s) {
      s.setSafe(row, value.toString().getBytes(StandardCharsets.UTF_8));
    } else if (v instanceof LargeVarCharVector s) {
      s.setSafe(row, value.toString().getBytes(StandardCharsets.UTF_8));
    } else if (v instanceof IntVector i) {
      i.setSafe(row, ((Number) value).intValue());
    } else if (v instanceof BigIntVector i) {
      i.setSafe(row, ((Number) value).longValue());
    } else if (v instanceof Float8Vector f) {
      f.setSafe(row, ((Number) value).doubleValue());
    } else if (v instanceof BitVector b) {
      b.setSafe(row, (Boolean) value ? 1 : 0);
    } else if (v instanceof TimeStampMicroTZVector t) {
      Instant i = (Instant) value;
      t.setSafe(row, i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000);
    } else if (v instanceof FixedSizeListVector l && l.getDataVector() instanceof Float4Vector data) {
      float[] f = (float[]) value;
      l.setNotNull(row);
      for (int d = 0; d < f.length; d++) {
        data.setSafe(row * l.getListSize() + d, f[d]);
      }
    } else if (v instanceof ListVector l && l.getDataVector() instanceof IntVector data) {
      List<?> items = (List<?>) value;
      int start = l.startNewValue(row);
      for (int i = 0; i < items.size(); i++) {
        data.setSafe(start + i, ((Number) items.get(i)).intValue());
      }
      l.endValue(row, items.size());
    } else {
      throw new IllegalArgumentException("the benchmarks do not encode " + v.getField());
    }
  }

  /**
   * A reader of {@code batches} (at least one, of one schema), in order, sharing their buffers; the batches stay
   * the caller's and must outlive the reader.
   */
  static ArrowReader reader(List<VectorSchemaRoot> batches, BufferAllocator allocator) {
    java.util.Iterator<VectorSchemaRoot> next = batches.iterator();
    return reader(batches.get(0).getSchema(), () -> next.hasNext() ? next.next() : null, false, allocator);
  }

  /**
   * A reader of the batches {@code next} supplies (null: no more) in {@code schema}; with {@code owned}, each is
   * closed once loaded (generated batches).
   */
  static ArrowReader reader(Schema schema, java.util.function.Supplier<VectorSchemaRoot> next, boolean owned,
      BufferAllocator allocator) {
    return new ArrowReader(allocator) {
      @Override
      public boolean loadNextBatch() throws IOException {
        ensureInitialized();
        VectorSchemaRoot batch = next.get();
        if (batch == null) {
          return false;
        }
        try (ArrowRecordBatch b = new VectorUnloader(batch).getRecordBatch()) {
          loadRecordBatch(b);
        } finally {
          if (owned) {
            batch.close();
          }
        }
        return true;
      }

      @Override
      public long bytesRead() {
        return 0;
      }

      @Override
      protected void closeReadSource() {}

      @Override
      protected Schema readSchema() {
        return schema;
      }
    };
  }
}
