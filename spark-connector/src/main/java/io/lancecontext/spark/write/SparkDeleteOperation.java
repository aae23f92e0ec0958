package io.lancecontext.spark.write;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.spark.SparkOptions;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.read.SparkScanBuilder;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.DeltaBatchWrite;
import org.apache.spark.sql.connector.write.DeltaWrite;
import org.apache.spark.sql.connector.write.DeltaWriteBuilder;
import org.apache.spark.sql.connector.write.DeltaWriter;
import org.apache.spark.sql.connector.write.DeltaWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDelta;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code DELETE FROM ... WHERE} whose condition core cannot evaluate (a function, a cast, a UDF): Spark reads
 * the table (the parts of the condition core evaluates pushed down), evaluates the rest itself, and hands the
 * key of every matching row to a task's writer, which stages a tombstone for it under the delete's transaction
 * {@code spark-delete-<query id>}; the driver publishes the committed attempts' parts once, so the keys
 * disappear together for every reader, and a failed or aborted delete leaves the store unchanged. A condition
 * core evaluates entirely takes the metadata-only path instead ({@code SparkTable.deleteWhere}). The row id is
 * the key column; the view read is the LSM view, so a row replaced by a newer version that no longer matches is
 * not deleted. The driver publishes with core's conflict check ({@code ContextStore.publishDeletes}, given the
 * time the scan was planned): a key another writer writes or deletes between the read and the publish fails the
 * delete with a retryable {@code CommitConflictException}, and nothing is deleted.
 */
public final class SparkDeleteOperation implements SupportsDelta {
  private static final Logger LOG = LoggerFactory.getLogger(SparkDeleteOperation.class);

  private final StoreConfig config;
  private final SchemaSpec spec;
  /** When the delete's scan was planned (the earliest, should Spark plan it more than once). */
  private final java.util.concurrent.atomic.AtomicReference<java.time.Instant> readAt =
      new java.util.concurrent.atomic.AtomicReference<>();

  public SparkDeleteOperation(StoreConfig config, SchemaSpec spec) {
    this.config = config;
    this.spec = spec;
  }

  @Override
  public Command command() {
    return Command.DELETE;
  }

  @Override
  public String description() {
    return "lancecontext delete from " + config.uri();
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new SparkScanBuilder(config, spec, SparkOptions.get(options, SparkOptions.READ_SPLITS).orElse(0), null,
        plan -> readAt.accumulateAndGet(plan.plannedAt(), (a, b) -> a == null || b.isBefore(a) ? b : a));
  }

  @Override
  public NamedReference[] rowId() {
    return new NamedReference[] {Expressions.column(spec.key())};
  }

  @Override
  public DeltaWriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new DeltaWriteBuilder() {
      @Override
      public DeltaWrite build() {
        return new Write(config.asMap(), config, "spark-delete-" + info.queryId(), readAt);
      }
    };
  }

  /** The delete's batch write: tasks stage tombstones, the driver publishes them once. */
  private record Write(Map<String, String> options, StoreConfig config, String transactionId,
      java.util.concurrent.atomic.AtomicReference<java.time.Instant> readAt)
      implements DeltaWrite, DeltaBatchWrite {
    @Override
    public String description() {
      return "lancecontext delete (atomic) from " + config.uri();
    }

    /** Spark logs the write by this; the options may hold storage credentials. */
    @Override
    public String toString() {
      return description() + " (" + transactionId + ")";
    }

    @Override
    public DeltaBatchWrite toBatch() {
      return this;
    }

    @Override
    public DeltaWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return new Factory(options, transactionId);
    }

    @Override
    public boolean useCommitCoordinator() {
      return true;
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      List<WriteSummary> summaries = SparkWrite.summaries(messages);
      try (ContextStore store = ContextStore.open(config)) {
        java.time.Instant read = readAt.get();
        boolean staged = summaries.stream().anyMatch(s -> !s.staged().isEmpty());
        if (read == null && staged) {
          throw new IllegalStateException("the delete from " + config.uri() + " staged deletions without a planned "
              + "scan to check them against: nothing was deleted");
        }
        PublishResult r = read == null ? store.publish(transactionId, summaries)
            : store.publishDeletes(transactionId, summaries, read);
        LOG.info("Deleted {} keys of {} in one transaction ({})", r.keysDeleted(), config.uri(), transactionId);
      }
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      try (ContextStore store = ContextStore.open(config)) {
        store.abort(transactionId);
      }
      LOG.warn("Delete from {} aborted: nothing of it is visible ({} aborted)", config.uri(), transactionId);
    }
  }

  private record Factory(Map<String, String> options, String transactionId) implements DeltaWriterFactory {
    @Override
    public String toString() {
      return "lancecontext delete writers (" + transactionId + ")";
    }

    @Override
    public DeltaWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new Writer(options, transactionId, partitionId, taskId);
    }
  }

  /** One task's tombstones: the key of every row Spark found matching, staged under the transaction. */
  private static final class Writer implements DeltaWriter<InternalRow> {
    private final int partitionId;
    private final long taskId;
    private final ContextStore store;
    private final StoreWriter writer;

    Writer(Map<String, String> options, String transactionId, int partitionId, long taskId) {
      this.partitionId = partitionId;
      this.taskId = taskId;
      this.store = ContextStore.open(options);
      try {
        this.writer = store.newWriter(WriterOptions.builder()
            .transaction(transactionId, String.format("%06d-%d", partitionId, taskId)).build());
      } catch (RuntimeException e) {
        store.close();
        throw e;
      }
    }

    @Override
    public void delete(InternalRow metadata, InternalRow id) {
      writer.delete(id.getUTF8String(0).toString());
    }

    @Override
    public void update(InternalRow metadata, InternalRow id, InternalRow row) {
      throw new UnsupportedOperationException("UPDATE is not supported by lancecontext tables (upsert with INSERT)");
    }

    @Override
    public void insert(InternalRow row) {
      throw new UnsupportedOperationException("a lancecontext DELETE inserts no rows");
    }

    @Override
    public WriterCommitMessage commit() {
      return new SparkCommitMessage(partitionId, taskId, writer.commit());
    }

    @Override
    public void abort() {
      writer.abort();
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
}
