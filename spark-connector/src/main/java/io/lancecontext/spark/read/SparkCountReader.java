package io.lancecontext.spark.read;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ReadSplit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Counts the splits of a read of no columns (core counts each, from its indexes where it can) side by side, on
 * as many threads as the executor has cores (at most one per split), into one batch of one row: the view's
 * record count, for a pushed-down {@code COUNT(*)}.
 */
final class SparkCountReader implements PartitionReader<ColumnarBatch> {
  private final Map<String, String> options;
  private final List<ReadSplit> splits;
  private ColumnarBatch batch;
  private boolean done;

  SparkCountReader(Map<String, String> options, List<ReadSplit> splits) {
    this.options = options;
    this.splits = splits;
  }

  @Override
  public boolean next() {
    if (done) {
      return false;
    }
    done = true;
    OnHeapColumnVector v = new OnHeapColumnVector(1, DataTypes.LongType);
    v.putLong(0, count());
    batch = new ColumnarBatch(new ColumnVector[] {v}, 1);
    return true;
  }

  private long count() {
    int threads = Math.max(1, Math.min(splits.size(), Runtime.getRuntime().availableProcessors()));
    ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "lancecontext-count");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<Long>> counts = new ArrayList<>();
      for (ReadSplit split : splits) {
        counts.add(pool.submit(() -> count(split)));
      }
      long total = 0;
      for (Future<Long> c : counts) {
        total += c.get();
      }
      return total;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("counting the store was interrupted", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  private long count(ReadSplit split) {
    long n = 0;
    try (ContextStore store = ContextStore.openForSplit(split, options); StoreReader reader = store.read(split)) {
      while (reader.next()) {
        n += reader.batch().getRowCount();
      }
    }
    return n;
  }

  @Override
  public ColumnarBatch get() {
    return batch;
  }

  @Override
  public void close() {
    if (batch != null) {
      batch.close();
    }
  }
}
