package io.lancecontext.spark.write;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Structured Streaming sink: each micro-batch (epoch) is one atomic transaction,
 * {@code spark-stream-<queryId>-<epochId>}. The query id is the stream's own, kept in its checkpoint (not the
 * run id), so an epoch replayed after a restart (its commit-log entry missing) stages under the same
 * transaction again and its publish finds it published and changes nothing; an epoch that failed before its
 * publish is not aborted (its replay must be able to publish), and its staged parts are collected after
 * {@code gc.grace}. Keyless rows get keys derived from (query, epoch, partition, row), so a replay derives the
 * same ones. In append and update output modes an epoch upserts its rows by key; in complete mode it replaces
 * the contents. Any trigger interval works: an epoch costs one staged part per bucket and task, and one
 * publish.
 */
final class SparkStreamingWrite implements StreamingWrite {
  private static final Logger LOG = LoggerFactory.getLogger(SparkStreamingWrite.class);

  private final StoreConfig config;
  private final StructType schema;
  private final String queryId;
  private final boolean replace;

  SparkStreamingWrite(StoreConfig config, StructType schema, String queryId, boolean replace) {
    this.config = config;
    this.schema = schema;
    this.queryId = queryId;
    this.replace = replace;
  }

  static String transactionId(String queryId, long epochId) {
    return "spark-stream-" + queryId + "-" + epochId;
  }

  @Override
  public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
    try (ContextStore store = ContextStore.open(config)) {
      store.preparePublishing();  // every epoch's commit publishes here: the first one finds the lanes open
    }
    return new Factory(config.asMap(), schema, queryId);
  }

  @Override
  public boolean useCommitCoordinator() {
    return true;
  }

  @Override
  public void commit(long epochId, WriterCommitMessage[] messages) {
    List<WriteSummary> summaries = SparkWrite.summaries(messages);
    String txid = transactionId(queryId, epochId);
    try (ContextStore store = ContextStore.open(config)) {
      PublishResult r = replace ? store.publishReplacing(txid, summaries) : store.publish(txid, summaries);
      if (r.alreadyPublished()) {
        LOG.info("Epoch {} of query {} was published before ({}): replay changed nothing", epochId, queryId, txid);
      } else {
        LOG.info("Published epoch {} of query {} into {}: {} rows, {} deletes ({})", epochId, queryId, config.uri(),
            r.rows(), r.keysDeleted(), txid);
      }
    }
  }

  @Override
  public void abort(long epochId, WriterCommitMessage[] messages) {
    LOG.warn("Epoch {} of query {} into {} aborted: nothing of it is visible; a replay of the epoch publishes it ({})",
        epochId, queryId, config.uri(), transactionId(queryId, epochId));
  }

  private record Factory(Map<String, String> options, StructType schema, String queryId)
      implements StreamingDataWriterFactory {
    /** Names the query, never its options (they may hold storage credentials). */
    @Override
    public String toString() {
      return "lancecontext StreamingDataWriterFactory[" + queryId + "]";
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
      return new SparkDataWriter(options, schema, queryId + "/" + epochId + "/" + partitionId,
          transactionId(queryId, epochId), partitionId, taskId);
    }
  }
}
