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
  private final boolean counting;

  /**
   * {@code options}: the store options of the read, {@code storage.*} included (splits carry none); {@code counting}:
   * each split is read into one row, its record count (a pushed-down {@code COUNT(*)}).
   */
  SparkPartitionReaderFactory(Map<String, String> options, StructType schema, boolean counting) {
    this.options = Map.copyOf(options);
    this.schema = schema;
    this.counting = counting;
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
    if (counting) {
      return new SparkCountReader(options, ((SparkCountPartition) partition).splits());
    }
    return new SparkColumnarReader(options, ((SparkInputPartition) partition).split(), schema);
  }
}
