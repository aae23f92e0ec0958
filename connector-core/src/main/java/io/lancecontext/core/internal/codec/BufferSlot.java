package io.lancecontext.core.internal.codec;

import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;

/**
 * The rows of one bucket in a {@link RowBuffer}: a batch in the store's dataset layout being filled row by row.
 * The row being built sits at index {@link #rows} until it is completed.
 */
final class BufferSlot implements AutoCloseable {
  private static final int INITIAL_ROWS = 64;

  final VectorSchemaRoot root;
  /** The vectors of the spec's columns, by column index. */
  final FieldVector[] vectors;
  /** The tombstone column (null without capability tombstones). */
  final BitVector tombstone;
  /** Completed rows; also the index of the row being built. */
  int rows;
  private byte[] keyBytes = new byte[64];

  BufferSlot(SchemaSpec spec, List<ColumnSpec> columns, BufferAllocator allocator) {
    root = VectorSchemaRoot.create(spec.toArrowSchema(), allocator);
    for (FieldVector v : root.getFieldVectors()) {
      v.setInitialCapacity(INITIAL_ROWS);
    }
    root.allocateNew();
    vectors = new FieldVector[columns.size()];
    for (int i = 0; i < vectors.length; i++) {
      vectors[i] = root.getVector(columns.get(i).name());
    }
    tombstone = (BitVector) root.getVector(SystemColumns.TOMBSTONE);
  }

  /**
   * Copies the row being built in {@code from} (every spec column, each of which the row has set, null or
   * not) to this slot's row being built.
   */
  void copyRow(BufferSlot from) {
    for (int i = 0; i < vectors.length; i++) {
      vectors[i].copyFromSafe(from.rows, rows, from.vectors[i]);
    }
  }

  /** The bucket of the key of the row being built. */
  int keyBucket(int keyColumn, KeyRouter router) {
    VarCharVector key = (VarCharVector) vectors[keyColumn];
    int length = key.getValueLength(rows);
    if (keyBytes.length < length) {
      keyBytes = new byte[Math.max(length, 2 * keyBytes.length)];
    }
    key.getDataBuffer().getBytes(key.getStartOffset(rows), keyBytes, 0, length);
    return router.bucket(keyBytes, 0, length);
  }

  /**
   * Clears every value of row {@code index} to null, struct fields too: a later row built there leaves the
   * columns it does not set as they are (and lance-core 7.0.0 reads struct nulls back from their fields on some
   * paths, see {@code StructNulls}).
   */
  void clearRow(List<ColumnSpec> columns, int index) {
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).type() == ColumnType.STRUCT) {
        clearStruct((StructVector) vectors[i], index, columns.get(i));
      } else if (vectors[i].getValueCapacity() > index) {
        vectors[i].setNull(index);
      }
    }
  }

  private static void clearStruct(StructVector v, int index, ColumnSpec c) {
    for (ColumnSpec f : c.fields()) {
      FieldVector child = (FieldVector) v.getChild(f.name());
      if (f.type() == ColumnType.STRUCT) {
        clearStruct((StructVector) child, index, f);
      } else if (child.getValueCapacity() > index) {
        child.setNull(index);
      }
    }
    if (v.getValueCapacity() > index) {
      v.setNull(index);
    }
  }

  /** The completed rows as a batch; the slot is spent (the caller owns and closes the batch). */
  VectorSchemaRoot take() {
    for (FieldVector v : vectors) {
      // a string or binary column no row set: its offsets, zeroed when allocated and grown, already say so for
      // every row (Arrow would otherwise write them one by one)
      if (v instanceof VariableWidthFieldVector w && w.getLastSet() < 0) {
        w.setLastSet(rows - 1);
      }
    }
    root.setRowCount(rows);
    return root;
  }

  @Override
  public void close() {
    root.close();
  }
}
