package io.lancecontext.core.internal.txn;

import io.lancecontext.core.internal.lance.RowCopier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The rows of a part this JVM staged, moved out of the writer's batches when the part was written, in the part's
 * row order (row {@code r} here is row offset {@code r} of the part's dataset). A reader in this JVM copies the rows
 * a lookup asks for from here instead of taking them from the part's data file: a take from a part just published
 * cost 4–14 ms, and a lookup of a checkpoint's keys made one per new part. Read by many threads at once, never
 * changed; closed once by its owner.
 */
public final class StagedRows implements AutoCloseable {
  private final List<VectorSchemaRoot> batches;
  private final int[] starts;
  private final int rows;
  private final long bytes;

  private StagedRows(List<VectorSchemaRoot> batches) {
    this.batches = batches;
    this.starts = new int[batches.size()];
    int n = 0;
    long b = 0;
    for (int i = 0; i < batches.size(); i++) {
      starts[i] = n;
      n += batches.get(i).getRowCount();
      for (FieldVector v : batches.get(i).getFieldVectors()) {
        b += v.getBufferSize();
      }
    }
    this.rows = n;
    this.bytes = b;
  }

  /**
   * Moves the vectors of {@code batches} (one part's rows, in order; left empty, still the caller's to close) into
   * new batches of {@code allocator}.
   */
  public static StagedRows moveFrom(List<VectorSchemaRoot> batches, BufferAllocator allocator) {
    List<VectorSchemaRoot> moved = new ArrayList<>(batches.size());
    try {
      for (VectorSchemaRoot b : batches) {
        List<String> names = b.getSchema().getFields().stream().map(Field::getName).toList();
        moved.add(RowCopier.transfer(b, names, allocator));
      }
    } catch (RuntimeException e) {
      moved.forEach(VectorSchemaRoot::close);
      throw e;
    }
    return new StagedRows(moved);
  }

  /** Rows held. */
  public int rows() {
    return rows;
  }

  /** Bytes of the Arrow buffers held. */
  public long bytes() {
    return bytes;
  }

  /** Whether every one of {@code columns} is held (top-level names). */
  public boolean has(Collection<String> columns) {
    if (batches.isEmpty()) {
      return false;
    }
    VectorSchemaRoot first = batches.get(0);
    for (String c : columns) {
      if (first.getVector(c) == null) {
        return false;
      }
    }
    return true;
  }

  /**
   * Calls {@code action} with each kept batch holding any of {@code offsets} (ascending part offsets, each below
   * {@link #rows()}) and those rows' offsets in that batch, in order.
   */
  public void forEachBatch(int[] offsets, BiConsumer<VectorSchemaRoot, int[]> action) {
    int i = 0;
    for (int b = 0; b < batches.size() && i < offsets.length; b++) {
      int end = b + 1 < batches.size() ? starts[b + 1] : rows;
      int first = i;
      while (i < offsets.length && offsets[i] < end) {
        i++;
      }
      if (i > first) {
        int[] local = new int[i - first];
        for (int k = 0; k < local.length; k++) {
          local[k] = offsets[first + k] - starts[b];
        }
        action.accept(batches.get(b), local);
      }
    }
    if (i != offsets.length) {
      throw new IllegalArgumentException("row offset " + offsets[i] + " is beyond the part's " + rows + " rows");
    }
  }

  @Override
  public void close() {
    batches.forEach(VectorSchemaRoot::close);
  }
}
