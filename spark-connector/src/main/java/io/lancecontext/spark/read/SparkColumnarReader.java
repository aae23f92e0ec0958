package io.lancecontext.spark.read;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.spark.SparkMetrics;
import java.util.Map;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads one split on an executor: opens the store with the read's options (a resident store of the
 * executor's JVM, shared by its tasks; the split itself carries no {@code storage.*} values) and wraps each Arrow batch in Spark column vectors, zero-copy. A
 * batch is valid until the next call to {@link #next()}, as Spark expects.
 */
public final class SparkColumnarReader implements PartitionReader<ColumnarBatch> {
  private final ContextStore store;
  private final StoreReader reader;
  private final StructType schema;
  private final ReadSplit split;
  private ColumnarBatch current;
  private long freshRows;

  SparkColumnarReader(Map<String, String> options, ReadSplit split, StructType schema) {
    this.schema = schema;
    this.split = split;
    this.store = ContextStore.openForSplit(split, options);
    try {
      this.reader = store.read(split);
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
  }

  @Override
  public boolean next() {
    if (!reader.next()) {
      return false;
    }
    VectorSchemaRoot root = reader.batch();
    ColumnVector[] cols = new ColumnVector[schema.fields().length];
    for (int i = 0; i < cols.length; i++) {
      FieldVector v = root.getVector(schema.fields()[i].name());
      if (v == null && schema.fields()[i].name().equals(io.lancecontext.core.read.ScanSpec.DELETED)) {
        // a streaming read's first batch reads the whole view, or a store without tombstones: no row is a deletion
        var none = new org.apache.spark.sql.execution.vectorized.ConstantColumnVector(root.getRowCount(),
            org.apache.spark.sql.types.DataTypes.BooleanType);
        none.setBoolean(false);
        cols[i] = none;
      } else {
        cols[i] = wrap(v);
      }
    }
    current = new ColumnarBatch(cols, root.getRowCount());
    freshRows = Math.max(0, reader.freshRowsRead());
    return true;
  }

  /** Fresh-tier rows returned so far, and the base fragments this split reads. */
  @Override
  public CustomTaskMetric[] currentMetricsValues() {
    long fragments = split.part() == ReadSplit.Part.FRESH || split.fragments() == null ? 0 : split.fragments().size();
    return new CustomTaskMetric[] {SparkMetrics.value(SparkMetrics.FRESH_ROWS_READ, freshRows),
        SparkMetrics.value(SparkMetrics.FRAGMENTS_READ, fragments)};
  }

  /** An Arrow vector as a Spark column vector, zero-copy (vectors as Spark arrays of floats). */
  public static ColumnVector wrap(FieldVector v) {
    return v instanceof FixedSizeListVector f ? new FixedSizeListColumnVector(f) : new ArrowColumnVector(v);
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public void close() {
    try {
      reader.close();
    } finally {
      store.close();
    }
  }
}
