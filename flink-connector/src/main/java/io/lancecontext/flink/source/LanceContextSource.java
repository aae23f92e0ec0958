package io.lancecontext.flink.source;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.flink.FlinkSchemas;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

/**
 * A bounded FLIP-27 source over a store's LSM view as of one snapshot: the enumerator plans the read once,
 * when the job first starts (core's read plan: base-table fragment groups and the fresh tier), and hands
 * splits to readers on request; a restored job continues the same plan. Rows are {@link RowData} of the
 * given row type (a subset of the store's columns, in any order).
 *
 * <pre>{@code
 * LanceContextSource source = LanceContextSource.builder()
 *     .options(Map.of("path", "/data/rollouts"))
 *     .scan(ScanSpec.all().withFilter(Predicate.compare("reward", Predicate.Op.GT, 0.0)))
 *     .build();
 * env.fromSource(source, WatermarkStrategy.noWatermarks(), "rollouts");
 * }</pre>
 */
public final class LanceContextSource implements Source<RowData, LanceContextSplit, PendingSplits> {
  private static final long serialVersionUID = 1L;

  private final Map<String, String> options;
  private final ScanSpec scan;
  private final RowType rowType;
  private final int maxSplits;

  private LanceContextSource(Map<String, String> options, ScanSpec scan, RowType rowType, int maxSplits) {
    this.options = Map.copyOf(options);
    this.scan = scan;
    this.rowType = rowType;
    this.maxSplits = maxSplits;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The row type the source produces. */
  public RowType rowType() {
    return rowType;
  }

  @Override
  public Boundedness getBoundedness() {
    return Boundedness.BOUNDED;
  }

  @Override
  public SplitEnumerator<LanceContextSplit, PendingSplits> createEnumerator(
      SplitEnumeratorContext<LanceContextSplit> context) {
    List<LanceContextSplit> splits = new ArrayList<>();
    long plannedAt;
    try (ContextStore store = ContextStore.open(options)) {
      int n = maxSplits > 0 ? maxSplits : Math.max(2, 2 * context.currentParallelism());
      ReadPlan plan = store.planRead(scan, n);
      List<ReadSplit> planned = plan.splits();
      for (int i = 0; i < planned.size(); i++) {
        splits.add(new LanceContextSplit("split-" + i, planned.get(i), 0));
      }
      plannedAt = plan.plannedAt().toEpochMilli();
    }
    return new LanceContextSplitEnumerator(context, splits, options, plannedAt);
  }

  @Override
  public SplitEnumerator<LanceContextSplit, PendingSplits> restoreEnumerator(
      SplitEnumeratorContext<LanceContextSplit> context, PendingSplits checkpoint) {
    return new LanceContextSplitEnumerator(context, checkpoint.splits(), options, checkpoint.plannedAtMillis());
  }

  @Override
  public SimpleVersionedSerializer<LanceContextSplit> getSplitSerializer() {
    return LanceContextSplitSerializer.INSTANCE;
  }

  @Override
  public SimpleVersionedSerializer<PendingSplits> getEnumeratorCheckpointSerializer() {
    return new PendingSplits.Serializer();
  }

  @Override
  public SourceReader<RowData, LanceContextSplit> createReader(SourceReaderContext context) {
    return new LanceContextSourceReader(context, options, rowType);
  }

  /** Builds a source: store options (required: {@code path}), what to read, and the row type. */
  public static final class Builder {
    private Map<String, String> options;
    private ScanSpec scan = ScanSpec.all();
    private RowType rowType;
    private int maxSplits;

    /** Store options, with core's keys (docs/options.md). */
    public Builder options(Map<String, String> options) {
      this.options = options;
      return this;
    }

    /** What to read (columns, filter, limit per split); by default every column of every visible row. */
    public Builder scan(ScanSpec scan) {
      this.scan = scan;
      return this;
    }

    /** The produced row type; by default the scan's columns with the store's types. */
    public Builder rowType(RowType rowType) {
      this.rowType = rowType;
      return this;
    }

    /** Upper bound of splits (default: twice the source's parallelism). */
    public Builder maxSplits(int maxSplits) {
      this.maxSplits = maxSplits;
      return this;
    }

    public LanceContextSource build() {
      StoreConfig config = StoreConfig.of(options);
      RowType type = rowType;
      ScanSpec s = scan;
      try (ContextStore store = ContextStore.open(config)) {
        if (type == null) {
          RowType all = (RowType) FlinkSchemas.toDataType(store.spec()).getLogicalType();
          List<String> cols = s.columns() == null ? store.spec().columnNames() : s.columns();
          type = RowType.of(cols.stream().map(c -> all.getTypeAt(all.getFieldIndex(c))).toArray(
              org.apache.flink.table.types.logical.LogicalType[]::new), cols.toArray(String[]::new));
        }
        FlinkSchemas.checkDeclared(type, store.spec());
        if (s.columns() == null) {
          s = s.withColumns(type.getFieldNames());
        }
      }
      return new LanceContextSource(config.asMap(), s, type, maxSplits);
    }
  }
}
