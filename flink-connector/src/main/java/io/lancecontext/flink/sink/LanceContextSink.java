package io.lancecontext.flink.sink;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.flink.FlinkSchemas;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.Partitioner;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessageTypeInfo;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreCommitTopology;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreWriteTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Sink V2 into a store, of {@link RowData} (an upsert changelog) or of any record type through a
 * {@link RecordConverter}. The job graph it adds:
 *
 * <pre>
 *   input --partition(bucket of key)--> Writer (parallelism p) --global--> Pre-commit aggregator (1) --> Committer (1)
 * </pre>
 *
 * <p><b>Pre-write topology.</b> Rows are partitioned by their key's bucket ({@link ContextStore#bucketOf(String, int)}),
 * bucket {@code b} to writer subtask {@code b % p}, so each bucket is written by one subtask and a key's rows
 * reach it in order.
 *
 * <p><b>{@link DeliveryGuarantee#EXACTLY_ONCE} (the default).</b> Each writer stages the rows it receives after a
 * checkpoint under one core transaction ({@code atomic} handle; durable, invisible). At the checkpoint barrier
 * it stages what is left and emits its summary ({@link LanceContextWriteResult}); the aggregator, with
 * parallelism 1, gathers every subtask's summaries into one {@link LanceContextCommittable} per checkpoint, and
 * the one committer publishes it when the checkpoint completes: all subtasks' rows of the checkpoint become
 * visible together, to every reader in every process, and no reader ever sees part of a checkpoint. A
 * restored job re-publishes the checkpoints it restored and changes nothing ({@code publish} of a published
 * transaction is a no-op). Rows written after the last completed checkpoint by a failed attempt are never
 * visible; the restored job writes them again. The end of input publishes the last transaction (with the final
 * checkpoint, or at once in batch mode); a streaming job without checkpointing therefore shows its rows only
 * at the end of input (a warning says so when the job is built). Freshness: rows are visible one checkpoint interval plus a publish
 * after they were written. One exception to "one publish per checkpoint": when a checkpoint was aborted after
 * it reached some writers and not others, those writers' transactions differ, and the next checkpoint publishes
 * its two transactions one after the other (a reader may see the first alone for a moment; rows are neither
 * lost nor repeated). Flink disables unaligned checkpoints on the partitioning edges inside a sink's topology,
 * so the aggregator holds every writer's summary of a checkpoint when its barrier arrives.
 *
 * <p><b>{@link DeliveryGuarantee#AT_LEAST_ONCE}</b> (and {@code NONE}, which behaves the same): each subtask writes
 * through one {@code immediate} core handle; rows are put as buffers fill ({@code write.batch-rows},
 * {@code write.batch-bytes}) or {@code sink.buffer-flush.interval} passes, and are then durable and visible to
 * every reader, well before the checkpoint; every checkpoint and the end of input wait until all rows before
 * them are durable. A restored job replays the rows after its checkpoint; they upsert the same keys. The
 * aggregator and committer carry nothing in this mode.
 *
 * <p><b>Options.</b> The store's options ({@code path} required; {@code schema} creates the store). Exactly-once
 * writes through atomic handles and at-least-once through immediate ones whatever the store's default; an
 * explicit {@code write.commit} that contradicts the guarantee ({@code immediate} with exactly-once,
 * {@code atomic} with at-least-once) is refused naming both. A store with capability {@code unique-ids} takes
 * at-least-once writes only.
 *
 * <p><b>Merges</b> stay off the write path in both modes: the store's background maintenance, in every process
 * that has the store open to write (here the task managers running writers and the committer), seals and merges
 * on {@code merge.trigger.generations} / {@code merge.trigger.interval} on its own thread, one merging process
 * at a time (the maintenance lease); neither a put, a staging, a checkpoint nor a publish waits for a merge.
 *
 * <p>Metrics: see {@link LanceContextSinkWriter} (writer group) and {@link LanceContextCommitter} (committer
 * group).
 *
 * <pre>{@code
 * rows.sinkTo(LanceContextSink.builder().options(Map.of("path", "/data/rollouts")).rowType(type).build());
 * records.sinkTo(LanceContextSink.builder().options(Map.of("path", "/data/rollouts"))
 *     .deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build(RecordConverter.maps()));
 * }</pre>
 *
 * @param <IN> the input element type
 */
public final class LanceContextSink<IN> implements Sink<IN>, SupportsPreWriteTopology<IN>,
    SupportsWriterState<IN, LanceContextWriterState>, SupportsCommitter<LanceContextCommittable>,
    SupportsPreCommitTopology<LanceContextWriteResult, LanceContextCommittable> {
  /**
   * How often an at-least-once writer puts what it buffered, at the least (option {@code sink.buffer-flush.interval}):
   * short enough that a record is visible well within half a second of its emission also at source rates
   * that take longer to fill a buffer (at 50,000 rows/s over 2 subtasks, 8,192 rows take 330 ms).
   */
  public static final Duration DEFAULT_FLUSH_INTERVAL = Duration.ofMillis(200);

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(LanceContextSink.class);

  private final Map<String, String> options;
  private final SinkFormat<IN> format;
  private final boolean exactlyOnce;
  private final Duration flushInterval;
  private final int shards;
  private final String sinkId;
  private final boolean overwrite;

  private LanceContextSink(Map<String, String> options, SinkFormat<IN> format, boolean exactlyOnce,
      Duration flushInterval, int shards, boolean overwrite) {
    this.options = Map.copyOf(options);
    this.format = format;
    this.exactlyOnce = exactlyOnce;
    this.flushInterval = flushInterval;
    this.shards = shards;
    this.overwrite = overwrite;
    this.sinkId = UUID.randomUUID().toString().replace("-", "");
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The guarantee this sink writes with ({@code NONE} was built as at-least-once). */
  public DeliveryGuarantee deliveryGuarantee() {
    return exactlyOnce ? DeliveryGuarantee.EXACTLY_ONCE : DeliveryGuarantee.AT_LEAST_ONCE;
  }

  /** Whether the job's rows replace the store's contents (a batch {@code INSERT OVERWRITE}). */
  public boolean overwrite() {
    return overwrite;
  }

  /**
   * Partitions rows by their key's bucket, bucket {@code b} to writer subtask {@code b % parallelism}, so that
   * one subtask writes each bucket (each key's rows stay in order) and the buckets spread evenly.
   */
  @Override
  public DataStream<IN> addPreWriteTopology(DataStream<IN> rows) {
    var env = rows.getExecutionEnvironment();
    if (overwrite && env.getConfiguration().get(ExecutionOptions.RUNTIME_MODE) != RuntimeExecutionMode.BATCH) {
      throw new BadOptionException("execution.runtime-mode", "an overwrite replaces the store's contents with "
          + "everything the job writes, published once at the end of input; it needs a job in BATCH mode (a streaming "
          + "job would replace the contents at every checkpoint)");
    }
    if (exactlyOnce && env.getConfiguration().get(ExecutionOptions.RUNTIME_MODE) == RuntimeExecutionMode.STREAMING
        && !env.getCheckpointConfig().isCheckpointingEnabled()) {
      LOG.warn("an exactly-once lancecontext sink in a streaming job without checkpointing: its rows become visible "
          + "only at the end of input; enable checkpointing, or use 'sink.delivery-guarantee' = 'at-least-once'");
    }
    if (exactlyOnce && env.getCheckpointConfig().isCheckpointingEnabled()) {
      var checkpoints = env.getCheckpointConfig();
      Duration span = Duration.ofMillis(checkpoints.getCheckpointInterval())
          .plus(Duration.ofMillis(checkpoints.getCheckpointTimeout()));
      StoreConfig.of(options).requireTxnTimeoutAbove(span, "the checkpoint interval plus the checkpoint timeout");
    }
    return rows.partitionCustom(new BucketPartitioner(), new BucketOfKey<>(format, shards));
  }

  /** Bucket {@code b} to channel {@code b % channels}. */
  static final class BucketPartitioner implements Partitioner<Integer> {
    private static final long serialVersionUID = 1L;

    @Override
    public int partition(Integer bucket, int channels) {
      return bucket % channels;
    }
  }

  /** The bucket of an element's key ({@link ContextStore#bucketOf(String, int)}); elements without a key go to bucket 0. */
  static final class BucketOfKey<IN> implements KeySelector<IN, Integer> {
    private static final long serialVersionUID = 1L;
    private final SinkFormat<IN> format;
    private final int shards;

    BucketOfKey(SinkFormat<IN> format, int shards) {
      this.format = format;
      this.shards = shards;
    }

    @Override
    public Integer getKey(IN element) {
      return format.bucket(element, shards);
    }
  }

  @Override
  public SinkWriter<IN> createWriter(WriterInitContext context) {
    return new LanceContextSinkWriter<>(options, format, exactlyOnce, overwrite, flushInterval, sinkId, context, 0, null);
  }

  /**
   * A writer restored from the checkpoint whose id its state holds (the greatest, after rescaling), continuing
   * the keyless ordinals of the state with the most keyless rows (keyless rows all go to one bucket, so one
   * state has them; after a rescale it may reach another subtask than the one the keyless rows go to now).
   */
  @Override
  public StatefulSinkWriter<IN, LanceContextWriterState> restoreWriter(WriterInitContext context,
      Collection<LanceContextWriterState> states) {
    long last = states.stream().mapToLong(LanceContextWriterState::checkpointId).max()
        .orElse(context.getRestoredCheckpointId().orElse(0L));
    LanceContextWriterState keyless = states.stream().filter(s -> s.idSeed() != null)
        .max(java.util.Comparator.comparingLong(LanceContextWriterState::keylessOrdinal)).orElse(null);
    return new LanceContextSinkWriter<>(options, format, exactlyOnce, overwrite, flushInterval, sinkId, context, last, keyless);
  }

  @Override
  public SimpleVersionedSerializer<LanceContextWriterState> getWriterStateSerializer() {
    return new LanceContextWriterState.Serializer();
  }

  /** Sends every subtask's results to one aggregator, which emits one committable per checkpoint to one committer. */
  @Override
  public DataStream<CommittableMessage<LanceContextCommittable>> addPreCommitTopology(
      DataStream<CommittableMessage<LanceContextWriteResult>> results) {
    return results.global()
        .transform("lancecontext pre-commit aggregator", CommittableMessageTypeInfo.of(LanceContextCommittable.Serializer::new),
            new LanceContextCommitAggregator())
        .setParallelism(1)
        .setMaxParallelism(1)
        .global();
  }

  @Override
  public SimpleVersionedSerializer<LanceContextWriteResult> getWriteResultSerializer() {
    return new LanceContextWriteResult.Serializer();
  }

  @Override
  public Committer<LanceContextCommittable> createCommitter(CommitterInitContext context) {
    // the aggregator's committables all reach subtask 0 (global()): only it publishes, so only it readies the store
    boolean publishes = exactlyOnce && context.getTaskInfo().getIndexOfThisSubtask() == 0;
    return new LanceContextCommitter(options, context.metricGroup(), overwrite, publishes);
  }

  @Override
  public SimpleVersionedSerializer<LanceContextCommittable> getCommittableSerializer() {
    return new LanceContextCommittable.Serializer();
  }

  /**
   * Builds a sink: store options (required: {@code path}; {@code schema} to create the store), the delivery
   * guarantee, and either a row type ({@link #build()}, for {@link RowData}) or a {@link RecordConverter}
   * ({@link #build(RecordConverter)}). Building opens the store and checks everything, so a bad sink fails in
   * the client, not in the job.
   */
  public static final class Builder {
    private Map<String, String> options;
    private RowType rowType;
    private Duration flushInterval = DEFAULT_FLUSH_INTERVAL;
    private DeliveryGuarantee guarantee = DeliveryGuarantee.EXACTLY_ONCE;
    private boolean overwrite;

    private Builder() {}

    public Builder options(Map<String, String> options) {
      this.options = options;
      return this;
    }

    /** The rows' type, for {@link #build()}: columns of the store (a subset, any order), the key column included. */
    public Builder rowType(RowType rowType) {
      this.rowType = rowType;
      return this;
    }

    /**
     * At-least-once: puts buffered rows at least this often (0: only when the buffer is full and at
     * checkpoints). Default {@link LanceContextSink#DEFAULT_FLUSH_INTERVAL} (200 ms, also the default of the table
     * option {@code sink.buffer-flush.interval}). Exactly-once rows become visible at checkpoints, so it does not apply.
     */
    public Builder flushInterval(Duration interval) {
      this.flushInterval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /** {@code EXACTLY_ONCE} (the default), {@code AT_LEAST_ONCE}, or {@code NONE} (same as at-least-once). */
    public Builder deliveryGuarantee(DeliveryGuarantee guarantee) {
      this.guarantee = Objects.requireNonNull(guarantee, "guarantee");
      return this;
    }

    /**
     * Replace the store's contents with the job's rows (Flink SQL's {@code INSERT OVERWRITE}): everything the job
     * writes is published at the end of input in one replacing publish ({@code ContextStore.publishReplacing}),
     * so readers see the old contents until then and the new ones after. Needs exactly-once and a BATCH job.
     */
    public Builder overwrite(boolean overwrite) {
      this.overwrite = overwrite;
      return this;
    }

    /** A sink of {@link RowData} of {@link #rowType}. */
    public LanceContextSink<RowData> build() {
      if (rowType == null) {
        throw new IllegalArgumentException("a RowData sink needs its row type (Builder.rowType); records of other "
            + "types need a RecordConverter (Builder.build(RecordConverter))");
      }
      return make(spec -> {
        FlinkSchemas.checkDeclared(rowType, spec);
        if (!rowType.getFieldNames().contains(spec.key())) {
          throw new SchemaException("column '" + spec.key() + "': the store's key column must be one of the sink's "
              + "columns");
        }
        return SinkFormat.rows(rowType, spec.key());
      });
    }

    /** A sink of elements that {@code converter} turns into records (maps by column name). */
    public <T> LanceContextSink<T> build(RecordConverter<T> converter) {
      Objects.requireNonNull(converter, "converter");
      return make(spec -> SinkFormat.records(converter, spec.key()));
    }

    private <T> LanceContextSink<T> make(java.util.function.Function<SchemaSpec, SinkFormat<T>> format) {
      StoreConfig config = StoreConfig.of(Objects.requireNonNull(options, "options"));
      boolean exactlyOnce = guarantee == DeliveryGuarantee.EXACTLY_ONCE;
      checkCommitMode(config, exactlyOnce);
      if (overwrite && !exactlyOnce) {
        throw new BadOptionException("sink.delivery-guarantee", "an overwrite (INSERT OVERWRITE) replaces the "
            + "contents in one publish at the end of input, which only 'exactly-once' stages; at-least-once puts rows "
            + "visible as buffers fill");
      }
      try (ContextStore store = ContextStore.open(config)) {
        SchemaSpec spec = store.spec();
        try {
          (exactlyOnce ? WriterOptions.CommitMode.ATOMIC : WriterOptions.CommitMode.IMMEDIATE).requireSupportedBy(spec,
              store.uri());
        } catch (SchemaException e) {
          throw new BadOptionException("sink.delivery-guarantee", "exactly-once writes atomically, and " + e.getMessage()
              + ": use 'at-least-once'");
        }
        return new LanceContextSink<>(config.asMap(), format.apply(spec), exactlyOnce, flushInterval, store.shards(),
            overwrite);
      }
    }

    private static void checkCommitMode(StoreConfig config, boolean exactlyOnce) {
      WriterOptions.CommitMode guaranteed = exactlyOnce ? WriterOptions.CommitMode.ATOMIC : WriterOptions.CommitMode.IMMEDIATE;
      WriterOptions.CommitMode.forWrite(config.asMap(), guaranteed, guaranteed,
          "'sink.delivery-guarantee' = '" + (exactlyOnce ? "exactly-once" : "at-least-once") + "'");
    }
  }
}
