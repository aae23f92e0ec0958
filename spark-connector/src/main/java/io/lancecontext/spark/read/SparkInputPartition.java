package io.lancecontext.spark.read;

import io.lancecontext.core.read.ReadSplit;
import org.apache.spark.sql.connector.read.InputPartition;

/** One split of a planned read; carries no {@code storage.*} values (the executor supplies its own). */
public record SparkInputPartition(ReadSplit split) implements InputPartition {}
