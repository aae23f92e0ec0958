package io.lancecontext.spark.read;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.Predicate;
import java.io.IOException;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A {@code COUNT(*)} (without {@code GROUP BY}) Spark pushed down, with the filters core evaluates: core counts
 * the LSM view of one snapshot on the driver when Spark asks for the partitions ({@link ContextStore#count}:
 * base fragments and fresh shards counted from what the JVM holds in memory where it can, read otherwise), and one
 * partition returns the one row. Spark aggregates nothing itself.
 */
final class SparkCountScan implements Scan, Batch {
  private final StoreConfig config;
  private final Predicate filter;
  private final int columns;
  private final org.apache.spark.sql.connector.expressions.filter.Predicate[] pushed;

  /** {@code columns}: how many {@code COUNT(*)} the query has (each gets the count). */
  SparkCountScan(StoreConfig config, Predicate filter, int columns,
      org.apache.spark.sql.connector.expressions.filter.Predicate[] pushed) {
    this.config = config;
    this.filter = filter;
    this.columns = columns;
    this.pushed = pushed;
  }

  @Override
  public StructType readSchema() {
    StructType schema = new StructType();
    for (int i = 0; i < columns; i++) {
      schema = schema.add(i == 0 ? "count(*)" : "count(*)#" + i, DataTypes.LongType, false);
    }
    return schema;
  }

  @Override
  public String description() {
    return "count(*) pushed=[" + Arrays.stream(pushed).map(Object::toString).collect(Collectors.joining(", ")) + "]";
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    try (ContextStore store = ContextStore.open(config)) {
      return new InputPartition[] {new Counted(store.count(filter), columns)};
    }
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new CountReaderFactory();
  }

  /** The count, made on the driver. */
  record Counted(long count, int columns) implements InputPartition {}

  private static final class CountReaderFactory implements PartitionReaderFactory {
    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      Counted counted = (Counted) partition;
      Object[] values = new Object[counted.columns()];
      Arrays.fill(values, counted.count());
      return new PartitionReader<>() {
        private boolean returned;

        @Override
        public boolean next() {
          if (returned) {
            return false;
          }
          returned = true;
          return true;
        }

        @Override
        public InternalRow get() {
          return new GenericInternalRow(values);
        }

        @Override
        public void close() throws IOException {}
      };
    }
  }
}
