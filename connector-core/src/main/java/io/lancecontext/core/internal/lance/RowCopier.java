package io.lancecontext.core.internal.lance;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
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
        gather(from, to, rows, count, 0);
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
        int[] all = new int[part.getRowCount()];
        for (int i = 0; i < all.length; i++) {
          all[i] = i;
        }
        for (int c = 0; c < out.getFieldVectors().size(); c++) {
          gather(part.getVector(c), out.getVector(c), all, all.length, at);
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
   * Copies the values {@code rows[0..count)} of {@code from} into {@code to} (same type; allocated; every
   * position from {@code at} on unset) at {@code at, at+1, ...}. Fixed-width values, strings and binaries are
   * copied as bytes, vectors (fixed-size lists) as runs of their children, structs and lists child by child:
   * Arrow's per-value copy ({@code TransferPair.copyValueSafe}) copies a 64-dim vector as 64 calls and builds a
   * writer and a reader for every list value, which made these copies the largest cost of splitting a batch by
   * bucket. Other types take the per-value copy. Value counts are the caller's to set.
   */
  static void gather(FieldVector from, FieldVector to, int[] rows, int count, int at) {
    if (from instanceof BitVector f) {
      BitVector t = (BitVector) to;
      for (int i = 0; i < count; i++) {
        if (!f.isNull(rows[i])) {
          t.setSafe(at + i, f.get(rows[i]));
        }
      }
    } else if (from instanceof BaseFixedWidthVector f) {
      gatherFixed(f, (BaseFixedWidthVector) to, rows, count, at);
    } else if (from instanceof BaseVariableWidthVector f) {
      BaseVariableWidthVector t = (BaseVariableWidthVector) to;
      ArrowBuf offsets = f.getOffsetBuffer();
      for (int i = 0; i < count; i++) {
        int r = rows[i];
        if (!f.isNull(r)) {
          int start = offsets.getInt((long) r * BaseVariableWidthVector.OFFSET_WIDTH);
          int end = offsets.getInt((long) (r + 1) * BaseVariableWidthVector.OFFSET_WIDTH);
          t.setSafe(at + i, start, end - start, f.getDataBuffer());
        }
      }
    } else if (from instanceof BaseLargeVariableWidthVector f) {
      BaseLargeVariableWidthVector t = (BaseLargeVariableWidthVector) to;
      ArrowBuf offsets = f.getOffsetBuffer();
      for (int i = 0; i < count; i++) {
        int r = rows[i];
        if (!f.isNull(r)) {
          long start = offsets.getLong((long) r * BaseLargeVariableWidthVector.OFFSET_WIDTH);
          long end = offsets.getLong((long) (r + 1) * BaseLargeVariableWidthVector.OFFSET_WIDTH);
          t.setSafe(at + i, start, (int) (end - start), f.getDataBuffer());
        }
      }
    } else if (from instanceof FixedSizeListVector f) {
      FixedSizeListVector t = (FixedSizeListVector) to;
      int size = f.getListSize();
      while (t.getValueCapacity() < at + count) {
        t.reAlloc();
      }
      int[] children = new int[count * size];
      for (int i = 0; i < count; i++) {
        int r = rows[i];
        if (f.isNull(r)) {
          t.setNull(at + i);
        } else {
          t.setNotNull(at + i);
        }
        for (int j = 0; j < size; j++) {
          children[i * size + j] = r * size + j;
        }
      }
      gather(f.getDataVector(), t.getDataVector(), children, children.length, at * size);
    } else if (from instanceof StructVector f && to instanceof StructVector t) {
      while (t.getValueCapacity() < at + count) {
        t.reAlloc();
      }
      for (int i = 0; i < count; i++) {
        if (f.isNull(rows[i])) {
          t.setNull(at + i);
        } else {
          t.setIndexDefined(at + i);
        }
      }
      List<FieldVector> fromChildren = f.getChildrenFromFields();
      List<FieldVector> toChildren = t.getChildrenFromFields();
      for (int c = 0; c < fromChildren.size(); c++) {
        gather(fromChildren.get(c), toChildren.get(c), rows, count, at);
      }
    } else if (from instanceof ListVector f && to instanceof ListVector t) {
      ArrowBuf offsets = f.getOffsetBuffer();
      int childAt = t.getLastSet() < 0 ? 0 : t.getOffsetBuffer().getInt((long) (t.getLastSet() + 1) * ListVector.OFFSET_WIDTH);
      int total = 0;
      for (int i = 0; i < count; i++) {
        int r = rows[i];
        if (!f.isNull(r)) {
          total += offsets.getInt((long) (r + 1) * ListVector.OFFSET_WIDTH) - offsets.getInt((long) r * ListVector.OFFSET_WIDTH);
        }
      }
      int[] children = new int[total];
      int n = 0;
      for (int i = 0; i < count; i++) {
        int r = rows[i];
        if (f.isNull(r)) {
          continue;  // offsets of null values are filled by the next value or by setValueCount
        }
        int start = offsets.getInt((long) r * ListVector.OFFSET_WIDTH);
        int end = offsets.getInt((long) (r + 1) * ListVector.OFFSET_WIDTH);
        t.startNewValue(at + i);
        t.endValue(at + i, end - start);
        for (int k = start; k < end; k++) {
          children[n++] = k;
        }
      }
      FieldVector child = t.getDataVector();
      while (child.getValueCapacity() < childAt + total) {
        child.reAlloc();
      }
      gather(f.getDataVector(), child, children, total, childAt);
      child.setValueCount(childAt + total);
    } else {
      TransferPair tp = from.makeTransferPair(to);
      for (int i = 0; i < count; i++) {
        tp.copyValueSafe(rows[i], at + i);
      }
    }
  }

  /** Fixed-width values as bytes, consecutive source rows in one copy. */
  private static void gatherFixed(BaseFixedWidthVector from, BaseFixedWidthVector to, int[] rows, int count, int at) {
    while (to.getValueCapacity() < at + count) {
      to.reAlloc();
    }
    int width = from.getTypeWidth();
    ArrowBuf fromData = from.getDataBuffer();
    ArrowBuf toData = to.getDataBuffer();
    ArrowBuf fromValid = from.getValidityBuffer();
    ArrowBuf toValid = to.getValidityBuffer();
    boolean noNulls = from.getNullCount() == 0;
    int i = 0;
    while (i < count) {
      int run = 1;
      while (i + run < count && rows[i + run] == rows[i] + run) {
        run++;
      }
      toData.setBytes((long) (at + i) * width, fromData, (long) rows[i] * width, (long) run * width);
      if (noNulls) {
        setBits(toValid, at + i, run);
        i += run;
        continue;
      }
      for (int k = 0; k < run; k++) {
        if (BitVectorHelper.get(fromValid, rows[i] + k) != 0) {
          BitVectorHelper.setBit(toValid, at + i + k);
        } else {
          BitVectorHelper.unsetBit(toValid, at + i + k);
        }
      }
      i += run;
    }
  }

  /** Sets the bits {@code from .. from+count-1} of {@code validity}: whole bytes at once (a vector's children are runs). */
  private static void setBits(ArrowBuf validity, int from, int count) {
    int bit = from;
    int end = from + count;
    for (; bit < end && (bit & 7) != 0; bit++) {
      BitVectorHelper.setBit(validity, bit);
    }
    for (; bit + 8 <= end; bit += 8) {
      validity.setByte(bit >>> 3, 0xFF);
    }
    for (; bit < end; bit++) {
      BitVectorHelper.setBit(validity, bit);
    }
  }

  /**
   * {@code rows} with {@code column} (as many values as {@code rows} has rows) added as the last column: one batch
   * owning both's vectors, so neither is closed on its own afterwards.
   */
  public static VectorSchemaRoot withColumn(VectorSchemaRoot rows, FieldVector column) {
    List<FieldVector> vectors = new ArrayList<>(rows.getFieldVectors());
    vectors.add(column);
    return new VectorSchemaRoot(vectors.stream().map(FieldVector::getField).toList(), vectors, rows.getRowCount());
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
