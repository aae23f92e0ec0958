package io.lancecontext.spark.write;

import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.ContextStore;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import io.lancecontext.spark.catalog.BucketFunction;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A batch write (append = upsert by key) in {@code immediate} mode: every task puts its rows through core
 * write handles, durable and visible as each put returns, so rows of tasks that ran stay if the job fails
 * (a rerun upserts the same keys; keyless rows get the same derived keys). The driver's commit only
 * reports what the tasks acknowledged.
 */
public final class SparkWrite implements RequiresDistributionAndOrdering, BatchWrite {
  private static final Logger LOG = LoggerFactory.getLogger(SparkWrite.class);

  private final StoreConfig config;
  private final StructType schema;
  private final String writeId;
  private final String key;
  private final int clusterBuckets;
  private final boolean atomic;

  SparkWrite(StoreConfig config, StructType schema, String writeId, String key, int clusterBuckets) {
    this.config = config;
    this.schema = schema;
    this.writeId = writeId;
    this.key = key;
    this.clusterBuckets = clusterBuckets;
    // batch writes are atomic unless write.commit says otherwise
    String mode = config.asMap().get(StoreOptions.WRITE_COMMIT.key());
    this.atomic = mode == null || WriterOptions.CommitMode.parse(mode) == WriterOptions.CommitMode.ATOMIC;
  }

  /** The transaction every task of this write stages under (atomic mode). */
  private String transactionId() {
    return "spark-" + writeId;
  }

  /**
   * Through the catalog: rows clustered by {@code bucket(shards, key)} into {@code shards} tasks, so each
   * task writes one bucket (one shard writer per task, no two tasks contending for a shard). Path-based
   * writes have no function catalog to resolve the bucket function, and are not clustered.
   */
  @Override
  public Distribution requiredDistribution() {
    if (clusterBuckets <= 0) {
      return Distributions.unspecified();
    }
    return Distributions.clustered(new Expression[] {
        Expressions.apply(BucketFunction.NAME, Expressions.literal(clusterBuckets), Expressions.column(key))});
  }

  @Override
  public int requiredNumPartitions() {
    return Math.max(clusterBuckets, 0);
  }

  @Override
  public SortOrder[] requiredOrdering() {
    return new SortOrder[0];
  }

  @Override
  public String toString() {
    return description();
  }

  @Override
  public BatchWrite toBatch() {
    return this;
  }

  @Override
  public String description() {
    return "lancecontext append (" + (atomic ? "atomic" : "immediate") + ") into " + config.uri();
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
    return new Factory(config.asMap(), schema, writeId, atomic ? transactionId() : null);
  }

  /** Atomic: one attempt per partition commits, and only its part is published. */
  @Override
  public boolean useCommitCoordinator() {
    return atomic;
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {
    long rows = 0;
    long deletes = 0;
    for (WriterCommitMessage m : messages) {
      if (m instanceof SparkCommitMessage c) {
        WriteSummary s = c.summary();
        rows += s.rowsWritten();
        deletes += s.keysDeleted();
      }
    }
    if (atomic) {
      List<WriteSummary> summaries = new ArrayList<>();
      for (WriterCommitMessage m : messages) {
        if (m instanceof SparkCommitMessage c) {
          summaries.add(c.summary());
        }
      }
      try (ContextStore store = ContextStore.open(config)) {
        PublishResult published = store.publish(transactionId(), summaries);
        LOG.info("Published {} rows ({} deletes) of {} tasks into {} at once ({})", published.rows(),
            published.keysDeleted(), messages.length, config.uri(), transactionId());
      }
      return;
    }
    LOG.info("Wrote {} rows ({} deletes) into {} from {} tasks", rows, deletes, config.uri(), messages.length);
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    if (atomic) {
      try (ContextStore store = ContextStore.open(config)) {
        store.abort(transactionId());
      }
      LOG.warn("Write into {} aborted: nothing of it is visible ({} aborted; its staged data is collected after "
          + "gc.grace)", config.uri(), transactionId());
      return;
    }
    LOG.warn("Write into {} aborted: in immediate mode the rows of tasks that completed stay visible; "
        + "rerunning the job upserts the same keys", config.uri());
  }

  /** Creates task writers on executors; carries the store options (the write's own, as Spark ships them). */
  private record Factory(Map<String, String> options, StructType schema, String writeId, String transactionId)
      implements DataWriterFactory {
    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new SparkDataWriter(options, schema, writeId, transactionId, partitionId, taskId);
    }
  }
}
