package io.lancecontext.core.internal.read;

import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A read producing Arrow batches lazily: a scan of the LSM view ({@link StoreScan}) or of what changed between
 * two snapshots ({@link IncrementalScan}). Each batch is valid until the next call to {@link #next()}. Not
 * thread-safe.
 */
public interface RowScan extends AutoCloseable {
  /** Advances to the next non-empty batch; false at the end. */
  boolean next();

  VectorSchemaRoot batch();

  /** The columns of every batch, in order. */
  List<String> columns();

  /** Base-table fragments this read scanned; -1 when it does not count them (a scan of the whole view). */
  default long baseFragmentsRead() {
    return -1;
  }

  /** Rows this read returned from the fresh tier so far; -1 when it does not tell them apart. */
  default long freshRowsRead() {
    return -1;
  }

  @Override
  void close();
}
