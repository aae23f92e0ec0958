package io.lancecontext.flink.table;

import io.lancecontext.flink.sink.LanceContextSink;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.connector.sink.abilities.SupportsOverwrite;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * A store as a Flink table sink ({@link LanceContextSink}, with the table's {@code sink.delivery-guarantee}).
 * With a primary key (the store's key) it takes an upsert changelog: +I and +U upsert, -D deletes
 * (tombstones), -U is not needed; without one, inserts (upserts by key) only. The sink is built, and so
 * checked against the store, when the table sink is made. {@code INSERT OVERWRITE} (batch jobs, exactly-once)
 * replaces the store's contents with the statement's rows in one publish at the end of input.
 */
final class LanceContextTableSink implements DynamicTableSink, SupportsOverwrite {
  private final Map<String, String> options;
  private final RowType rowType;
  private final boolean upsert;
  private final Duration flushInterval;
  private final DeliveryGuarantee guarantee;
  /** Flink's standard 'sink.parallelism' (null: the input's parallelism). */
  private final Integer parallelism;
  private LanceContextSink<RowData> sink;

  LanceContextTableSink(Map<String, String> options, RowType rowType, boolean upsert, Duration flushInterval,
      DeliveryGuarantee guarantee, Integer parallelism) {
    this.parallelism = parallelism;
    this.options = options;
    this.rowType = rowType;
    this.upsert = upsert;
    this.flushInterval = flushInterval;
    this.guarantee = guarantee;
    this.sink = build(false);
  }

  private LanceContextTableSink(LanceContextTableSink other) {
    this.options = other.options;
    this.rowType = other.rowType;
    this.upsert = other.upsert;
    this.flushInterval = other.flushInterval;
    this.guarantee = other.guarantee;
    this.parallelism = other.parallelism;
    this.sink = other.sink;
  }

  private LanceContextSink<RowData> build(boolean overwrite) {
    return LanceContextSink.builder().options(options).rowType(rowType).flushInterval(flushInterval)
        .deliveryGuarantee(guarantee).overwrite(overwrite).build();
  }

  @Override
  public void applyOverwrite(boolean overwrite) {
    if (overwrite != sink.overwrite()) {
      sink = build(overwrite);
    }
  }

  @Override
  public ChangelogMode getChangelogMode(ChangelogMode requested) {
    if (!upsert) {
      return ChangelogMode.insertOnly();
    }
    return ChangelogMode.newBuilder().addContainedKind(RowKind.INSERT).addContainedKind(RowKind.UPDATE_AFTER)
        .addContainedKind(RowKind.DELETE).build();
  }

  @Override
  public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
    return SinkV2Provider.of(sink, parallelism);
  }

  @Override
  public DynamicTableSink copy() {
    return new LanceContextTableSink(this);
  }

  @Override
  public String asSummaryString() {
    return "lancecontext (" + sink.deliveryGuarantee() + (sink.overwrite() ? ", overwrite" : "") + ")";
  }
}
