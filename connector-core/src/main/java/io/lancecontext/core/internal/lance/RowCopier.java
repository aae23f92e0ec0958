package io.lancecontext.core.internal.lance;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.util.TransferPair;

/** Builds batches from selected rows or columns of another batch. */
public final class RowCopier {
  private RowCopier() {}

  /**
   * A new batch with the {@code columns} of {@code source} (same types) holding the rows
   * {@code rows[0..count)}, in that order. The caller owns the result.
   */
  public static VectorSchemaRoot copy(VectorSchemaRoot source, List<String> columns, int[] rows, int count,
      BufferAllocator allocator) {
    List<FieldVector> out = new ArrayList<>(columns.size());
    List<Field> fields = new ArrayList<>(columns.size());
    try {
      for (String name : columns) {
        FieldVector from = source.getVector(name);
        FieldVector to = from.getField().createVector(allocator);
        out.add(to);
        fields.add(from.getField());
        to.setInitialCapacity(Math.max(count, 1));
        to.allocateNew();
        TransferPair tp = from.makeTransferPair(to);
        for (int i = 0; i < count; i++) {
          copyValue(from, to, tp, rows[i], i);
        }
        to.setValueCount(count);
      }
      return new VectorSchemaRoot(fields, out, count);
    } catch (RuntimeException e) {
      out.forEach(FieldVector::close);
      throw e;
    }
  }

  /** One batch holding every row of {@code parts} (same schema, taken from the first), in order. */
  public static VectorSchemaRoot concat(List<VectorSchemaRoot> parts, BufferAllocator allocator) {
    VectorSchemaRoot out = VectorSchemaRoot.create(parts.get(0).getSchema(), allocator);
    try {
      int total = parts.stream().mapToInt(VectorSchemaRoot::getRowCount).sum();
      for (FieldVector v : out.getFieldVectors()) {
        v.setInitialCapacity(Math.max(total, 1));
        v.allocateNew();
      }
      int at = 0;
      for (VectorSchemaRoot part : parts) {
        for (int c = 0; c < out.getFieldVectors().size(); c++) {
          FieldVector from = part.getVector(c);
          FieldVector to = out.getVector(c);
          TransferPair tp = from.makeTransferPair(to);
          for (int i = 0; i < part.getRowCount(); i++) {
            copyValue(from, to, tp, i, at + i);
          }
        }
        at += part.getRowCount();
      }
      out.setRowCount(total);
      return out;
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
  }

  /**
   * Copies one value. A null list is set null directly: Arrow's list copy builds a writer and a reader for
   * every value, null or not, which made list columns most of a batch's copy cost.
   */
  private static void copyValue(FieldVector from, FieldVector to, TransferPair tp, int fromIndex, int toIndex) {
    if (to instanceof ListVector list && from.isNull(fromIndex)) {
      list.setNull(toIndex);
    } else {
      tp.copyValueSafe(fromIndex, toIndex);
    }
  }

  /** Moves the {@code columns} of {@code source} into a new batch without copying. */
  public static VectorSchemaRoot transfer(VectorSchemaRoot source, List<String> columns, BufferAllocator allocator) {
    List<FieldVector> out = new ArrayList<>(columns.size());
    List<Field> fields = new ArrayList<>(columns.size());
    for (String name : columns) {
      FieldVector from = source.getVector(name);
      TransferPair tp = from.getTransferPair(allocator);
      tp.transfer();
      out.add((FieldVector) tp.getTo());
      fields.add(from.getField());
    }
    return new VectorSchemaRoot(fields, out, source.getRowCount());
  }
}
