package io.lancecontext.core.internal.write;

import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.schema.SystemColumns;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Stages the deletion of keys as parts of a transaction, on every store, whatever its capabilities: each
 * part is a Lance dataset of tombstone rows (the key, {@code _lc_tombstone} true, every other column null) in
 * the {@linkplain #schema deletion schema}, the store's dataset schema with the tombstone column added where
 * the store has none and every non-key column nullable. The fresh tier reads a part's tombstones from its
 * own schema, and a merge turns them into deleted base rows (into tombstone rows only on stores with the
 * {@code tombstones} capability), so a store without that capability never holds a tombstone outside the
 * parts of a published, unmerged transaction. A replacing publish ({@code ReplacePublish}) is what uses it.
 *
 * <p>Memory: at most {@code rowsPerPart} keys per bucket; a bucket that reaches it is written as a part
 * and the next keys of it go to the next part (a transaction's parts of one bucket hold different keys
 * here, so their order does not matter). Not thread-safe.
 */
public final class DeletionParts {
  private final StoreWrites writes;
  private final String txid;
  private final String partId;
  private final int rowsPerPart;
  private final Schema schema;
  private final Map<Integer, List<String>> pending = new TreeMap<>();
  private final List<WriteSummary.StagedPart> written = new ArrayList<>();
  private int nextIndex;
  private long deletes;

  DeletionParts(StoreWrites writes, String txid, String partId, int rowsPerPart) {
    this.writes = writes;
    this.txid = txid;
    this.partId = partId;
    this.rowsPerPart = rowsPerPart;
    this.schema = schema(writes.datasetSchema(), writes.spec().key());
  }

  /**
   * The schema of a deletion part: {@code datasetSchema} with every field but {@code key} nullable and the
   * tombstone column appended when it is missing.
   */
  static Schema schema(Schema datasetSchema, String key) {
    List<Field> fields = new ArrayList<>();
    boolean flagged = false;
    for (Field f : datasetSchema.getFields()) {
      flagged |= f.getName().equals(SystemColumns.TOMBSTONE);
      fields.add(f.getName().equals(key) || f.isNullable() ? f
          : new Field(f.getName(), new FieldType(true, f.getType(), f.getDictionary(), f.getMetadata()), f.getChildren()));
    }
    if (!flagged) {
      fields.add(Field.nullable(SystemColumns.TOMBSTONE, ArrowType.Bool.INSTANCE));
    }
    return new Schema(fields, datasetSchema.getCustomMetadata());
  }

  /** Stages the deletion of {@code key} (each key once per transaction). */
  public void add(String key) {
    int bucket = writes.bucketOf(key);
    List<String> keys = pending.computeIfAbsent(bucket, b -> new ArrayList<>());
    keys.add(key);
    if (keys.size() >= rowsPerPart) {
      write(bucket);
    }
  }

  /** Writes what is pending and returns the summary of every part written, for the publish. */
  public WriteSummary finish() {
    for (int bucket : new ArrayList<>(pending.keySet())) {
      write(bucket);
    }
    return new WriteSummary(0, deletes, List.of(), txid, List.copyOf(written));
  }

  private void write(int bucket) {
    List<String> keys = pending.remove(bucket);
    String name = TxnIds.newPartName(partId, nextIndex, System.currentTimeMillis());
    try (VectorSchemaRoot rows = tombstones(keys, writes.allocator())) {
      writes.writePart(txid, bucket, name, List.of(rows));
    }
    written.add(new WriteSummary.StagedPart(bucket, name, partId, nextIndex++, 0, keys.size()));
    deletes += keys.size();
  }

  private VectorSchemaRoot tombstones(List<String> keys, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    try {
      root.allocateNew();  // validity zeroed: every column but the two set below is null
      VarCharVector key = (VarCharVector) root.getVector(writes.spec().key());
      BitVector flag = (BitVector) root.getVector(SystemColumns.TOMBSTONE);
      for (int r = 0; r < keys.size(); r++) {
        key.setSafe(r, keys.get(r).getBytes(StandardCharsets.UTF_8));
        flag.setSafe(r, 1);
      }
      root.setRowCount(keys.size());
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }
}
