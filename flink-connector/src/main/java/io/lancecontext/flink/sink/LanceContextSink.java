package io.lancecontext.flink.sink;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.flink.FlinkSchemas;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreWriteTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

/**
 * A Sink V2 of {@link RowData} into a store, at-least-once: every subtask writes through its own core write
 * handle ({@code immediate} mode), rows are durable and visible to every reader as each put returns, well
 * before the checkpoint, and every checkpoint waits until all rows written before it are durable. A job
 * restored from a checkpoint replays rows after it; they upsert the same keys. Exactly-once (rows staged
 * per checkpoint and published together) needs core's atomic transactions and is not offered yet.
 *
 * <p>Before the writers, rows are keyed by their key's bucket ({@link #addPreWriteTopology}), so each
 * bucket is written by one subtask and a key's rows reach it in order.
 *
 * <p>Merges run in the store's background maintenance, off the write path (triggers
 * {@code merge.trigger.generations} / {@code merge.trigger.interval}, one merging process at a time).
 *
 * <pre>{@code
 * rows.sinkTo(LanceContextSink.builder().options(Map.of("path", "/data/rollouts")).rowType(type).build());
 * }</pre>
 */
public final class LanceContextSink implements Sink<RowData>, SupportsPreWriteTopology<RowData> {
  private static final long serialVersionUID = 1L;

  private final Map<String, String> options;
  private final RowType rowType;
  private final Duration flushInterval;
  private final int shards;
  private final int keyPos;

  private LanceContextSink(Map<String, String> options, RowType rowType, Duration flushInterval, int shards, int keyPos) {
    this.options = Map.copyOf(options);
    this.rowType = rowType;
    this.flushInterval = flushInterval;
    this.shards = shards;
    this.keyPos = keyPos;
  }

  /** Keys rows by their key's bucket, so that one subtask writes each bucket (and each key's rows stay in order). */
  @Override
  public DataStream<RowData> addPreWriteTopology(DataStream<RowData> rows) {
    return rows.keyBy(new BucketOfKey(keyPos, shards));
  }

  /** The bucket of a row's key ({@link ContextStore#bucketOf(String, int)}); rows without a key go to bucket 0. */
  static final class BucketOfKey implements KeySelector<RowData, Integer> {
    private static final long serialVersionUID = 1L;
    private final int keyPos;
    private final int shards;

    BucketOfKey(int keyPos, int shards) {
      this.keyPos = keyPos;
      this.shards = shards;
    }

    @Override
    public Integer getKey(RowData row) {
      return row.isNullAt(keyPos) ? 0 : ContextStore.bucketOf(row.getString(keyPos).toString(), shards);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public SinkWriter<RowData> createWriter(WriterInitContext context) {
    return new LanceContextSinkWriter(options, rowType, flushInterval, context.getProcessingTimeService());
  }

  /** Builds a sink: store options (required: {@code path}; {@code schema} to create the store) and the row type. */
  public static final class Builder {
    private Map<String, String> options;
    private RowType rowType;
    private Duration flushInterval = Duration.ofSeconds(1);

    public Builder options(Map<String, String> options) {
      this.options = options;
      return this;
    }

    /** The rows' type: columns of the store (a subset, any order), the key column included. */
    public Builder rowType(RowType rowType) {
      this.rowType = rowType;
      return this;
    }

    /** Puts buffered rows at least this often (0: only when the buffer is full and at checkpoints). Default 1 s. */
    public Builder flushInterval(Duration interval) {
      this.flushInterval = interval;
      return this;
    }

    public LanceContextSink build() {
      StoreConfig config = StoreConfig.of(options);
      int shards;
      String key;
      try (ContextStore store = ContextStore.open(config)) {
        SchemaSpec spec = store.spec();
        shards = store.shards();
        key = spec.key();
        FlinkSchemas.checkDeclared(rowType, spec);
        if (!rowType.getFieldNames().contains(spec.key())) {
          throw new io.lancecontext.core.error.SchemaException("column '" + spec.key()
              + "': the store's key column must be one of the sink's columns");
        }
      }
      return new LanceContextSink(config.asMap(), rowType, flushInterval, shards, rowType.getFieldNames().indexOf(key));
    }
  }
}
