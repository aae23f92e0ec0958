package io.lancecontext.spark.read;

import io.lancecontext.core.read.ReadSplit;
import java.util.List;
import org.apache.spark.sql.connector.read.InputPartition;

/** Every split of a pushed-down {@code COUNT(*)}, counted by one task ({@link SparkCountReader}). */
public record SparkCountPartition(List<ReadSplit> splits) implements InputPartition {
  public SparkCountPartition {
    splits = List.copyOf(splits);
  }
}
