package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.BlobMaterializer;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.RowIds;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The output side of a scan: projection to the output columns, blob materialisation, and the offset and
 * limit Java still applies (counted across every tier the scan reads).
 */
final class ScanOutput {
  private final ScanRules rules;
  private final BufferAllocator allocator;
  private long toSkip;
  private long remaining;

  /** {@code skip}: rows Java skips (0 when Lance applied the offset). */
  ScanOutput(ScanRules rules, BufferAllocator allocator, long skip) {
    this.rules = rules;
    this.allocator = allocator;
    this.toSkip = skip;
    // counted here even when pushed: Lance reads a limit of 0 as no limit
    this.remaining = rules.scan.hasLimit() ? rules.scan.limit() : Long.MAX_VALUE;
  }

  /** Whether the limit is used up. */
  boolean exhausted() {
    return remaining <= 0;
  }

  /** Counts a batch handed to the caller against the limit. */
  void returned(int rows) {
    remaining -= rows;
  }

  /**
   * Builds an output batch from the selected rows (after offset), materializing blob columns from
   * {@code blobSource} when the batch holds Lance blob descriptors. {@code transferable}: the input
   * batch is the scan's own (a Lance reader's), not a cached WAL batch, so whole batches may be moved
   * instead of copied. Null when nothing is left.
   */
  VectorSchemaRoot emit(VectorSchemaRoot in, int[] rows, int count, LanceDataset blobSource, boolean transferable) {
    int start = 0;
    if (toSkip > 0) {
      int skip = (int) Math.min(toSkip, count);
      toSkip -= skip;
      start = skip;
    }
    int take = (int) Math.min(count - start, remaining);
    if (take <= 0) {
      return null;
    }
    int[] selected = rows;
    if (start > 0) {
      selected = new int[take];
      System.arraycopy(rows, start, selected, 0, take);
    }
    boolean blobs = blobSource != null && rules.hasBlobs();
    List<String> copyColumns = new ArrayList<>(rules.columns);
    if (blobs) {
      copyColumns.add(RowIds.ROW_ID);
    }
    boolean everything = start == 0 && take == in.getRowCount() && isIdentity(rows, take);
    VectorSchemaRoot picked = everything && transferable
        ? RowCopier.transfer(in, copyColumns, allocator)
        : RowCopier.copy(in, copyColumns, selected, take, allocator);
    if (!blobs) {
      return picked;
    }
    try (VectorSchemaRoot withDescriptors = picked) {
      return BlobMaterializer.materialize(blobSource, rules.spec, withDescriptors, rules.columns, allocator);
    }
  }

  /** A batch of no columns and {@code rows} rows (a count-only read's counted rows). */
  VectorSchemaRoot emitCount(int rows) {
    return new VectorSchemaRoot(List.of(), List.of(), rows);
  }

  private static boolean isIdentity(int[] rows, int n) {
    for (int i = 0; i < n; i++) {
      if (rows[i] != i) {
        return false;
      }
    }
    return true;
  }
}
