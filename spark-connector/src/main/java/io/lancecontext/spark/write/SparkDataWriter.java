package io.lancecontext.spark.write;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.result.WriteSummary;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;

/**
 * Writes one task's partition through a core write handle: rows are copied into the handle's Arrow
 * buffer as they arrive and put every {@code write.batch-rows} rows ({@code immediate} mode: each put is
 * durable and visible when it returns); {@link #commit()} puts the rest and returns what the handle
 * acknowledged. Keys missing from rows are derived from {@code <write id>/<partition>} and the row's
 * ordinal, so a retried or speculative attempt writes the same keys and never duplicates.
 */
final class SparkDataWriter implements DataWriter<InternalRow> {
  private final int partitionId;
  private final long taskId;
  private final ContextStore store;
  private final StoreWriter writer;
  private final SparkRowWriter rows;

  /** {@code transactionId}: stage under it (atomic mode), or null to put rows as they come (immediate). */
  SparkDataWriter(Map<String, String> options, StructType schema, String writeId, String transactionId, int partitionId,
      long taskId) {
    this.partitionId = partitionId;
    this.taskId = taskId;
    this.store = ContextStore.open(options);
    try {
      WriterOptions.Builder b = WriterOptions.builder().idSeed(writeId + "/" + partitionId);
      if (transactionId != null) {
        b.transaction(transactionId, String.format("%06d-%d", partitionId, taskId));
      } else {
        b.commitMode(WriterOptions.CommitMode.IMMEDIATE);
      }
      this.writer = store.newWriter(b.build());
      this.rows = new SparkRowWriter(writer.rows(), schema, store.spec());
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
  }

  @Override
  public void write(InternalRow row) {
    rows.write(row);
  }

  @Override
  public WriterCommitMessage commit() {
    WriteSummary summary = writer.commit();
    return new SparkCommitMessage(partitionId, taskId, summary);
  }

  @Override
  public void abort() {
    writer.abort();
  }

  @Override
  public CustomTaskMetric[] currentMetricsValues() {
    return new CustomTaskMetric[0];
  }

  @Override
  public void close() {
    try {
      writer.close();
    } finally {
      store.close();
    }
  }
}
