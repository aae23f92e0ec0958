package io.lancecontext.spark.write;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.spark.SparkMetrics;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;

/**
 * Writes one task's partition through a core write handle: rows are copied into the handle's Arrow
 * buffer as they arrive and put every {@code write.batch-rows} rows ({@code immediate} mode: each put is
 * durable and visible when it returns); {@link #commit()} puts the rest and returns what the handle
 * acknowledged. Keys missing from rows are derived from {@code idSeed} ({@code <write id>/<partition>}, for a
 * stream {@code <query id>/<epoch>/<partition>}) and the row's ordinal, so a retried or speculative attempt, or
 * a replayed epoch, writes the same keys and never duplicates. Reports the rows and bytes handed to it
 * ({@link SparkMetrics}).
 */
final class SparkDataWriter implements DataWriter<InternalRow> {
  private final int partitionId;
  private final long taskId;
  private final ContextStore store;
  private final StoreWriter writer;
  private final SparkRowWriter rows;
  private long bytes;
  private long handed;

  /** {@code transactionId}: stage under it (atomic mode), or null to put rows as they come (immediate). */
  SparkDataWriter(Map<String, String> options, StructType schema, String idSeed, String transactionId, int partitionId,
      long taskId) {
    this.partitionId = partitionId;
    this.taskId = taskId;
    this.store = ContextStore.open(options);
    try {
      WriterOptions.Builder b = WriterOptions.builder().idSeed(idSeed);
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
    handed++;
    if (row instanceof UnsafeRow u) {
      bytes += u.getSizeInBytes();
    }
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
    return new CustomTaskMetric[] {SparkMetrics.value(SparkMetrics.ROWS_WRITTEN, handed),
        SparkMetrics.value(SparkMetrics.BYTES_WRITTEN, bytes)};
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
