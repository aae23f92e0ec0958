package io.lancecontext.spark.read;

import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Creates columnar readers on executors: core's Arrow batches handed to Spark without copying. */
final class SparkPartitionReaderFactory implements PartitionReaderFactory {
  private final Map<String, String> options;
  private final StructType schema;

  /** {@code options}: the store options of the read, {@code storage.*} included (splits carry none). */
  SparkPartitionReaderFactory(Map<String, String> options, StructType schema) {
    this.options = Map.copyOf(options);
    this.schema = schema;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("lancecontext reads are columnar");
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    if (partition instanceof SparkCountPartition count) {  // a pushed-down COUNT(*): one row, the count
      return new SparkCountReader(options, count.splits());
    }
    return new SparkColumnarReader(options, ((SparkInputPartition) partition).split(), schema);
  }
}
