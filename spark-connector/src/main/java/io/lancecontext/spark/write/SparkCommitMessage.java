package io.lancecontext.spark.write;

import io.lancecontext.core.result.WriteSummary;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/** What one task's writer acknowledged (rows, deletes, the shards and WAL positions it wrote). */
public record SparkCommitMessage(int partitionId, long taskId, WriteSummary summary) implements WriterCommitMessage {}
