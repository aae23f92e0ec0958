package io.lancecontext.core;

import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.options.StoreOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A write handle for one task: feed it records or batches, then {@link #commit()}. It puts buffered
 * rows once {@code write.batch-rows} rows or {@code write.batch-bytes} bytes are buffered; what
 * {@link #commit()} returns for is durable, visible to every process and was written by writers that
 * still owned their shards. A Spark task commit or a Flink checkpoint maps to {@code commit()}. Rows
 * of a failed call may be partly stored: retrying is safe because adds upsert by key. Not thread-safe.
 */
public final class StoreWriter implements AutoCloseable {
  private final ContextStore store;
  private final int batchRows;
  private final long batchBytes;
  private final List<Map<String, ?>> buffer = new ArrayList<>();
  private long bufferedBytes;
  private long committedRows;
  private long writtenRows;
  private boolean closed;

  StoreWriter(ContextStore store) {
    this.store = store;
    this.batchRows = store.config().get(StoreOptions.BATCH_ROWS);
    this.batchBytes = store.config().get(StoreOptions.BATCH_BYTES);
  }

  /** Buffers one record (validated when it is put). */
  public void write(Map<String, ?> record) {
    check();
    buffer.add(record);
    bufferedBytes += estimate(record);
    if (buffer.size() >= batchRows || bufferedBytes >= batchBytes) {
      flush();
    }
  }

  /** Puts a batch in the dataset schema right away (after any buffered records). */
  public void write(VectorSchemaRoot batch) {
    check();
    flush();
    writtenRows += store.add(batch);
  }

  /** Puts everything buffered; on return all rows written through this handle are durable and visible. */
  public long commit() {
    check();
    flush();
    committedRows += writtenRows;
    long n = writtenRows;
    writtenRows = 0;
    return n;
  }

  /** Discards buffered, not yet put records. */
  public void abort() {
    buffer.clear();
    bufferedBytes = 0;
  }

  /** Rows committed through this handle so far. */
  public long committedRows() {
    return committedRows;
  }

  private void flush() {
    if (buffer.isEmpty()) {
      return;
    }
    List<Map<String, ?>> rows = new ArrayList<>(buffer);
    buffer.clear();
    bufferedBytes = 0;
    writtenRows += store.add(rows);
  }

  private void check() {
    if (closed) {
      throw new StoreClosedException("this writer handle of " + store.uri() + " is closed", false);
    }
  }

  private static long estimate(Map<String, ?> record) {
    long b = 16;
    for (Object v : record.values()) {
      if (v instanceof CharSequence s) {
        b += s.length();
      } else if (v instanceof byte[] a) {
        b += a.length;
      } else if (v instanceof float[] f) {
        b += 4L * f.length;
      } else {
        b += 8;
      }
    }
    return b;
  }

  /** Closes without committing: buffered records are discarded. */
  @Override
  public void close() {
    abort();
    closed = true;
  }
}
