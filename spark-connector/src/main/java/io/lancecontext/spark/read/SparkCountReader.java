package io.lancecontext.spark.read;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ReadSplit;
import java.util.Map;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads a split of no columns (core counts it, from its indexes where it can) into one batch of one row: the
 * split's record count, for a pushed-down {@code COUNT(*)}.
 */
final class SparkCountReader implements PartitionReader<ColumnarBatch> {
  private final Map<String, String> options;
  private final ReadSplit split;
  private ColumnarBatch batch;
  private boolean done;

  SparkCountReader(Map<String, String> options, ReadSplit split) {
    this.options = options;
    this.split = split;
  }

  @Override
  public boolean next() {
    if (done) {
      return false;
    }
    done = true;
    long count = 0;
    try (ContextStore store = ContextStore.openForSplit(split, options); StoreReader reader = store.read(split)) {
      while (reader.next()) {
        count += reader.batch().getRowCount();
      }
    }
    OnHeapColumnVector v = new OnHeapColumnVector(1, DataTypes.LongType);
    v.putLong(0, count);
    batch = new ColumnarBatch(new ColumnVector[] {v}, 1);
    return true;
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
