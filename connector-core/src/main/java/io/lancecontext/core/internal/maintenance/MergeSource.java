package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.BlobMaterializer;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Streams the winning rows ({@link NewestRows#winner}) of every input, in input order, in the dataset schema
 * (blobs as bytes), a transaction part's rows stamped with its publish sequence: what a merge writes.
 */
final class MergeSource extends ArrowReader {
  private final SchemaSpec spec;
  private final Schema schema;
  private final List<MergeInput> inputs;
  private final NewestRows winners;
  private final BufferAllocator allocator;
  private final List<String> columns;
  private int input = -1;
  private ScanHandle scan;
  private java.util.Set<Integer> skipped = java.util.Set.of();
  /** Whether the base keeps tombstone rows (capability tombstones); else they are left out of the rows written. */
  private final boolean keepTombstones;
  /** Whether the current input has the tombstone column. */
  private boolean flagged;
  long tombstones;

  MergeSource(SchemaSpec spec, Schema schema, List<MergeInput> inputs, NewestRows winners, BufferAllocator allocator) {
    super(allocator);
    this.spec = spec;
    this.schema = schema;
    this.inputs = inputs;
    this.winners = winners;
    this.allocator = allocator;
    this.columns = schema.getFields().stream().map(f -> f.getName()).toList();
    this.keepTombstones = spec.has(Capability.TOMBSTONES);
  }

  /** Leaves these inputs out (their rows reach the base another way). Before the first batch. */
  void skip(List<Integer> inputIndexes) {
    skipped = java.util.Set.copyOf(inputIndexes);
  }

  /** Whether any input is left to read. */
  boolean hasInputs() {
    return skipped.size() < inputs.size();
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    try {
      while (true) {
        if (scan == null) {
          do {
            if (++input >= inputs.size()) {
              return false;
            }
          } while (skipped.contains(input));
          flagged = NewestRows.hasTombstones(inputs.get(input).dataset());
          List<String> read = columns;
          if (flagged && !columns.contains(SystemColumns.TOMBSTONE)) {
            read = new ArrayList<>(columns);
            read.add(SystemColumns.TOMBSTONE);
          }
          scan = inputs.get(input).dataset().scan(ScanRequest.of(read).withRowId(true));
        }
        if (!scan.reader().loadNextBatch()) {
          closeInput();
          continue;
        }
        VectorSchemaRoot in = scan.reader().getVectorSchemaRoot();
        VarCharVector key = (VarCharVector) in.getVector(spec.key());
        var rowIds = in.getVector(RowIds.ROW_ID);
        BitVector tomb = flagged ? (BitVector) in.getVector(SystemColumns.TOMBSTONE) : null;
        int[] rows = new int[in.getRowCount()];
        int count = 0;
        for (int r = 0; r < in.getRowCount(); r++) {
          long offset = RowIds.get(rowIds, r);
          long w = winners.winner(new String(key.get(r), StandardCharsets.UTF_8));
          if (w >= 0 && w == (((long) input << 32) | offset)) {
            if (tomb != null && !tomb.isNull(r) && tomb.get(r) != 0) {
              tombstones++;
              if (!keepTombstones) {
                continue;  // a base without the tombstone column loses the key's row (deleted by key) instead
              }
            }
            rows[count++] = r;
          }
        }
        if (count == 0) {
          continue;
        }
        List<String> withIds = new ArrayList<>(columns);
        withIds.add(RowIds.ROW_ID);
        LanceDataset ds = inputs.get(input).dataset();
        try (VectorSchemaRoot picked = stamped(RowCopier.copy(in, withIds, rows, count, allocator),
            inputs.get(input).sequence());
            VectorSchemaRoot out = BlobMaterializer.materialize(ds, spec, picked, columns, allocator);
            ArrowRecordBatch batch = new VectorUnloader(out).getRecordBatch()) {
          loadRecordBatch(batch);
        }
        return true;
      }
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException(e);
    }
  }

  private void closeInput() {
    ScanHandle s = scan;
    scan = null;
    if (s != null) {
      s.close();
    }
  }

  @Override
  public long bytesRead() {
    return 0;
  }

  @Override
  protected void closeReadSource() throws IOException {
    closeInput();
  }

  @Override
  protected Schema readSchema() {
    return schema;
  }

  /** Sets every row's write sequence to {@code sequence} (a transaction part's publish sequence), unless -1. */
  private static VectorSchemaRoot stamped(VectorSchemaRoot rows, long sequence) {
    if (sequence >= 0) {
      BigIntVector seq = (BigIntVector) rows.getVector(SystemColumns.SEQUENCE);
      for (int i = 0; i < rows.getRowCount(); i++) {
        seq.setSafe(i, sequence);
      }
      seq.setValueCount(rows.getRowCount());
    }
    return rows;
  }
}
