package io.lancecontext.spark.write;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.TransactionLease;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.spark.SparkMetrics;
import io.lancecontext.spark.catalog.BucketTaskFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A batch write (upsert by key, or a replace of the contents) and the factory of streaming writes.
 *
 * <p>{@code atomic} (the default): every task stages its rows under the job's transaction
 * {@code spark-<queryId>}, and the driver's commit publishes the parts of the committed attempts at once
 * (Spark's commit coordinator lets one attempt per partition commit); a failed job is aborted and leaves
 * nothing visible. A replace publishes with core's {@code publishReplacing}. {@code immediate}: every task
 * puts its rows through core write handles, durable and visible as each put returns, so rows of tasks that
 * ran stay if the job fails (a rerun upserts the same keys; keyless rows get the same derived keys); the
 * driver's commit only reports.
 */
public final class SparkWrite implements RequiresDistributionAndOrdering, BatchWrite {
  private static final Logger LOG = LoggerFactory.getLogger(SparkWrite.class);

  private final StoreConfig config;
  private final StructType schema;
  private final String writeId;
  private final String key;
  private final int clusterBuckets;
  private final int tasks;
  private final boolean atomic;
  private final boolean replace;
  private volatile long published;
  private volatile long puts;
  private volatile long stagedParts;
  /** Atomic: the driver keeps the job's transaction alive from the writer factory to commit or abort. */
  private ContextStore holder;
  private TransactionLease lease;

  SparkWrite(StoreConfig config, StructType schema, String writeId, String key, int clusterBuckets, int tasks,
      boolean atomic, boolean replace) {
    this.config = config;
    this.schema = schema;
    this.writeId = writeId;
    this.key = key;
    this.clusterBuckets = clusterBuckets;
    this.tasks = tasks;
    this.atomic = atomic;
    this.replace = replace;
  }

  /** The transaction every task of this write stages under (atomic mode). */
  private String transactionId() {
    return "spark-" + writeId;
  }

  /**
   * Clustered tables (catalog and path-based batch writes): rows clustered by {@code bucket_task(tasks, shards,
   * key)} into {@code write.tasks} tasks (default: {@code shards}), so task {@code b mod tasks} writes all of
   * bucket {@code b} (with the default, one bucket and one shard writer per task, no two tasks contending for a
   * shard, and every task busy). Unclustered (streaming): Spark's own partitioning, or {@code write.tasks} tasks
   * round-robin.
   */
  @Override
  public Distribution requiredDistribution() {
    if (clusterBuckets <= 0) {
      return Distributions.unspecified();
    }
    return Distributions.clustered(new Expression[] {Expressions.apply(BucketTaskFunction.NAME,
        Expressions.literal(requiredNumPartitions()), Expressions.literal(clusterBuckets), Expressions.column(key))});
  }

  @Override
  public int requiredNumPartitions() {
    return tasks > 0 ? tasks : Math.max(clusterBuckets, 0);
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
  public StreamingWrite toStreaming() {
    return new SparkStreamingWrite(config, schema, writeId, replace);
  }

  @Override
  public String description() {
    return "lancecontext " + (replace ? "overwrite" : "append") + " (" + (atomic ? "atomic" : "immediate") + ") into "
        + config.uri();
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return SparkMetrics.write();
  }

  @Override
  public CustomTaskMetric[] reportDriverMetrics() {
    return new CustomTaskMetric[] {SparkMetrics.value(SparkMetrics.PUBLISHED_TRANSACTIONS, published),
        SparkMetrics.value(SparkMetrics.PUTS, puts), SparkMetrics.value(SparkMetrics.STAGED_PARTS, stagedParts)};
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
    if (atomic) {
      hold();
    }
    return new Factory(config.asMap(), schema, writeId, atomic ? transactionId() : null);
  }

  /** Atomic: one attempt per partition commits, and only its part is published. */
  @Override
  public boolean useCommitCoordinator() {
    return atomic;
  }

  /**
   * Publishes the job's transaction (atomic), or reports what the tasks put (immediate). The puts and staged
   * parts of the committed attempts are reported as driver metrics: Spark takes a task's metrics before the
   * task's writer commits, that is before its last put.
   */
  @Override
  public void commit(WriterCommitMessage[] messages) {
    List<WriteSummary> summaries = summaries(messages);
    puts = summaries.stream().mapToLong(s -> s.shards().stream().mapToLong(WriteSummary.ShardPuts::puts).sum()
        + s.staged().size()).sum();
    stagedParts = summaries.stream().mapToLong(s -> s.staged().size()).sum();
    if (!atomic) {
      long rows = summaries.stream().mapToLong(WriteSummary::rowsWritten).sum();
      long deletes = summaries.stream().mapToLong(WriteSummary::keysDeleted).sum();
      LOG.info("Wrote {} rows ({} deletes) into {} from {} tasks", rows, deletes, config.uri(), messages.length);
      return;
    }
    try (ContextStore store = ContextStore.open(config); TransactionLease ignored = this::release) {
      PublishResult r = replace ? store.publishReplacing(transactionId(), summaries)
          : store.publish(transactionId(), summaries);
      published = r.alreadyPublished() ? 0 : 1;
      LOG.info("Published {} rows ({} deletes) of {} tasks into {} at once ({}{})", r.rows(), r.keysDeleted(),
          messages.length, config.uri(), transactionId(), replace ? ", replacing the contents" : "");
    }
  }

  /**
   * Keeps the job's transaction alive until {@link #commit} or {@link #abort}: a task that stages nothing for
   * longer than {@code txn.timeout} (a straggler, a long stage before the write) must not get the job's parts
   * collected. Executors' open handles renew it too; this covers the gaps between their tasks.
   */
  private synchronized void hold() {
    if (lease == null) {
      holder = ContextStore.open(config);
      lease = holder.holdTransaction(transactionId());
      holder.preparePublishing();  // the job's commit publishes here: its lanes open while the tasks run
    }
  }

  private synchronized void release() {
    if (lease != null) {
      lease.close();
      holder.close();
      lease = null;
      holder = null;
    }
  }

  static List<WriteSummary> summaries(WriterCommitMessage[] messages) {
    List<WriteSummary> out = new ArrayList<>();
    for (WriterCommitMessage m : messages) {
      if (m instanceof SparkCommitMessage c) {
        out.add(c.summary());
      }
    }
    return out;
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    if (atomic) {
      try (ContextStore store = ContextStore.open(config); TransactionLease ignored = this::release) {
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
    /** Names the write, never its options (they may hold storage credentials). */
    @Override
    public String toString() {
      return "lancecontext DataWriterFactory[" + writeId + (transactionId == null ? "" : ", " + transactionId) + "]";
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new SparkDataWriter(options, schema, writeId + "/" + partitionId, transactionId, partitionId, taskId);
    }
  }
}
