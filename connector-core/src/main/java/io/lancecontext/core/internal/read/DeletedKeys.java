package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** The rows an incremental read returns for deleted keys, and its {@link ScanSpec#DELETED} column. */
final class DeletedKeys {
  private DeletedKeys() {}

  /** A batch of {@code columns} holding {@code keys} in the key column (if asked for) and nulls elsewhere. */
  static VectorSchemaRoot rows(SchemaSpec spec, List<String> columns, List<String> keys, BufferAllocator allocator) {
    List<Field> fields = new ArrayList<>();
    for (String c : columns) {
      Field f = spec.toArrowSchema().findField(c);
      fields.add(new Field(f.getName(), new FieldType(true, f.getType(), f.getDictionary(), f.getMetadata()),
          f.getChildren()));
    }
    VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(fields), allocator);
    try {
      root.allocateNew();
      if (columns.contains(spec.key())) {
        VarCharVector key = (VarCharVector) root.getVector(spec.key());
        for (int i = 0; i < keys.size(); i++) {
          key.setSafe(i, keys.get(i).getBytes(StandardCharsets.UTF_8));
        }
      }
      for (FieldVector v : root.getFieldVectors()) {
        v.setValueCount(keys.size());
      }
      root.setRowCount(keys.size());
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /** {@code out} with a {@link ScanSpec#DELETED} column of {@code value} added (takes {@code out}'s vectors). */
  static VectorSchemaRoot flagged(VectorSchemaRoot out, boolean value, BufferAllocator allocator) {
    BitVector flag = new BitVector(new Field(ScanSpec.DELETED, FieldType.notNullable(ArrowType.Bool.INSTANCE), null),
        allocator);
    int n = out.getRowCount();
    flag.allocateNew(Math.max(1, n));
    for (int i = 0; i < n; i++) {
      flag.set(i, value ? 1 : 0);
    }
    flag.setValueCount(n);
    return RowCopier.withColumn(out, flag);
  }
}
