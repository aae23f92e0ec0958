package io.lancecontext.flink.table;

import io.lancecontext.flink.sink.LanceContextSink;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.types.RowKind;
import org.apache.flink.table.types.logical.RowType;

/**
 * A store as a Flink table sink. With a primary key (the store's key) it takes an upsert changelog: +I and
 * +U upsert, -D deletes (tombstones), -U is not needed; without one, inserts (upserts by key) only.
 */
final class LanceContextTableSink implements DynamicTableSink {
  private final Map<String, String> options;
  private final RowType rowType;
  private final boolean upsert;
  private final Duration flushInterval;

  LanceContextTableSink(Map<String, String> options, RowType rowType, boolean upsert, Duration flushInterval) {
    this.options = options;
    this.rowType = rowType;
    this.upsert = upsert;
    this.flushInterval = flushInterval;
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
    return SinkV2Provider.of(LanceContextSink.builder().options(options).rowType(rowType).flushInterval(flushInterval)
        .build());
  }

  @Override
  public DynamicTableSink copy() {
    return new LanceContextTableSink(options, rowType, upsert, flushInterval);
  }

  @Override
  public String asSummaryString() {
    return "lancecontext";
  }
}
