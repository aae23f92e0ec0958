package io.lancecontext.core.internal.lance;

import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.lance.BlobFile;
import org.lance.Dataset;

/**
 * Lance scans return a blob-encoded column as a struct of {@code (position, size)} descriptors, not
 * its bytes. This replaces those descriptor columns with the binary column of the store's schema,
 * filled through {@link Dataset#takeBlobs}. Needs the scan to include {@value RowIds#ROW_ID}.
 * A zero-length descriptor reads as null in a nullable column (see {@code ResidentStore#add}).
 */
public final class BlobMaterializer {
  private BlobMaterializer() {}

  /**
   * Builds a new batch holding {@code columns} of {@code scanned} (in that order), with blob columns
   * materialized. Non-blob vectors are transferred, so {@code scanned} is left empty. The caller
   * closes both roots.
   */
  public static VectorSchemaRoot materialize(LanceDataset dataset, SchemaSpec spec, VectorSchemaRoot scanned,
      List<String> columns, BufferAllocator allocator) {
    FieldVector ids = scanned.getVector(RowIds.ROW_ID);
    return materialize(dataset, spec, scanned, columns, ids == null ? null : i -> RowIds.get(ids, i), allocator);
  }

  /** As above, with the row id of each row given by {@code rowIds} instead of a {@code _rowid} column. */
  public static VectorSchemaRoot materialize(LanceDataset dataset, SchemaSpec spec, VectorSchemaRoot scanned,
      List<String> columns, java.util.function.IntToLongFunction rowIds, BufferAllocator allocator) {
    int rows = scanned.getRowCount();
    List<FieldVector> out = new ArrayList<>(columns.size());
    try {
      for (String name : columns) {
        ColumnSpec c = spec.column(name);
        FieldVector in = scanned.getVector(name);
        if (c != null && c.blob()) {
          out.add(readBlobs(dataset, spec, c, in, requireRowIds(rowIds), rows, allocator));
        } else {
          FieldVector copy = (FieldVector) in.getTransferPair(allocator).getTo();
          in.makeTransferPair(copy).transfer();
          out.add(copy);
        }
      }
    } catch (RuntimeException e) {
      out.forEach(FieldVector::close);
      throw e;
    }
    List<Field> fields = out.stream().map(FieldVector::getField).toList();
    return new VectorSchemaRoot(fields, out, rows);
  }

  private static java.util.function.IntToLongFunction requireRowIds(java.util.function.IntToLongFunction ids) {
    if (ids == null) {
      throw new IllegalStateException("a scan with blob columns must include " + RowIds.ROW_ID);
    }
    return ids;
  }

  private static FieldVector readBlobs(LanceDataset dataset, SchemaSpec spec, ColumnSpec c, FieldVector descriptors,
      java.util.function.IntToLongFunction rowIds, int rows, BufferAllocator allocator) {
    Field field = spec.toArrowSchema().findField(c.name());
    VariableWidthFieldVector target = (VariableWidthFieldVector) field.createVector(allocator);
    try {
      target.setInitialCapacity(rows);
      target.allocateNew();
      List<Long> ids = new ArrayList<>();
      List<Integer> slots = new ArrayList<>();
      FieldVector sizes = descriptors instanceof StructVector sv ? (FieldVector) sv.getChild("size") : null;
      for (int i = 0; i < rows; i++) {
        if (descriptors.isNull(i)) {
          target.setNull(i);
        } else if (sizes != null && ((Number) sizes.getObject(i)).longValue() == 0) {
          // lance-core 7.0.0's merge writes a null blob as a zero-length one: the store keeps no empty
          // blobs in nullable columns (they are written as nulls), so zero length reads as null there
          if (c.nullable()) {
            target.setNull(i);
          } else {
            target.setSafe(i, new byte[0]);
          }
        } else {
          ids.add(rowIds.applyAsLong(i));
          slots.add(i);
        }
      }
      if (!ids.isEmpty()) {
        List<BlobFile> blobs = LanceErrors.call("read blob column '" + c.name() + "'", () -> dataset.lance().takeBlobs(ids, c.name()));
        try {
          for (int k = 0; k < slots.size(); k++) {
            target.setSafe(slots.get(k), blobs.get(k).read());
          }
        } catch (IOException e) {
          throw LanceErrors.translate("read blob column '" + c.name() + "'", e);
        } finally {
          for (BlobFile b : blobs) {
            try {
              b.close();
            } catch (IOException ignored) {
              // closing a read handle; nothing to recover
            }
          }
        }
      }
      target.setValueCount(rows);
      return target;
    } catch (RuntimeException e) {
      target.close();
      throw e;
    }
  }
}
