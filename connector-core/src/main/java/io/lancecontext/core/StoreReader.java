package io.lancecontext.core;

import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.RowScan;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The result of a scan: Arrow batches of the LSM view, produced lazily from one consistent snapshot.
 * Each batch is valid until the next call to {@link #next()}. Close it to release the snapshot. Not
 * thread-safe.
 */
public final class StoreReader implements AutoCloseable {
  private final LsmSnapshot snapshot;
  private final RowScan scan;
  private final RecordCodec codec;

  StoreReader(LsmSnapshot snapshot, RowScan scan, RecordCodec codec) {
    this.snapshot = snapshot;
    this.scan = scan;
    this.codec = codec;
  }

  /** A reader of the scan {@code scan} makes over {@code snapshot}; the snapshot is closed if that fails. */
  static StoreReader over(LsmSnapshot snapshot, java.util.function.Supplier<? extends RowScan> scan, RecordCodec codec) {
    try {
      return new StoreReader(snapshot, scan.get(), codec);
    } catch (RuntimeException e) {
      snapshot.close();
      throw e;
    }
  }

  /** Advances to the next batch; false at the end. */
  public boolean next() {
    try {
      return scan.next();
    } catch (LanceContextException e) {
      throw e;
    } catch (RuntimeException e) {
      throw LanceErrors.translate("read the store", e);
    }
  }

  public VectorSchemaRoot batch() {
    return scan.batch();
  }

  public List<String> columns() {
    return scan.columns();
  }

  /**
   * Base-table fragments an incremental read ({@link io.lancecontext.core.read.ScanSpec#between}) scanned, of
   * both snapshots: those the two do not share unchanged (0 when only the fresh tier changed between them);
   * -1 for a read of the whole view.
   */
  public long baseFragmentsRead() {
    return scan.baseFragmentsRead();
  }

  /**
   * Rows this read returned from the fresh tier so far (a split's, or a whole view's); -1 for an incremental
   * read, which does not tell them apart.
   */
  public long freshRowsRead() {
    return scan.freshRowsRead();
  }

  /** The base-table version this read sees. */
  public long baseVersion() {
    return snapshot.base().version();
  }

  /** Reads every remaining batch as records. */
  public List<Map<String, Object>> records() {
    List<Map<String, Object>> out = new ArrayList<>();
    while (next()) {
      try {
        out.addAll(codec.decode(batch(), columns()));
      } catch (LanceContextException e) {
        throw e;
      } catch (RuntimeException e) {
        throw LanceErrors.translate("decode the rows read", e);
      }
    }
    return out;
  }

  @Override
  public void close() {
    try {
      scan.close();
    } finally {
      snapshot.close();
    }
  }
}
