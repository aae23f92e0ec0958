package io.lancecontext.flink.source;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.flink.FlinkSchemas;
import java.time.Duration;
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
 * A FLIP-27 source over a store. Bounded (the default): the store's LSM view as of one snapshot; the enumerator
 * plans the read once, when the job first starts (core's read plan: base-table fragment groups and the fresh
 * tier), and hands splits to readers on request; a restored job continues the same plan. Continuous
 * ({@link Builder#continuous}): the view as of the start, then, every discovery interval, what changed since the
 * last position ({@link ContinuousSplitEnumerator}), as an upsert changelog on the store's key (see
 * {@link LanceContextSourceReader} for the row kinds). Rows are {@link RowData} of the given row type (a subset
 * of the store's columns, in any order).
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
  /** Continuous: the discovery interval in milliseconds; 0 for a bounded scan. */
  private final long intervalMillis;
  /** Continuous: the snapshot after which the stream starts (nothing read whole), or null. */
  private final String since;

  private LanceContextSource(Map<String, String> options, ScanSpec scan, RowType rowType, int maxSplits,
      long intervalMillis, String since) {
    this.options = Map.copyOf(options);
    this.scan = scan;
    this.rowType = rowType;
    this.maxSplits = maxSplits;
    this.intervalMillis = intervalMillis;
    this.since = since;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The row type the source produces. */
  public RowType rowType() {
    return rowType;
  }

  /** Whether the source is continuous (unbounded). */
  public boolean continuous() {
    return intervalMillis > 0;
  }

  @Override
  public Boundedness getBoundedness() {
    return continuous() ? Boundedness.CONTINUOUS_UNBOUNDED : Boundedness.BOUNDED;
  }

  private int splitsFor(SplitEnumeratorContext<LanceContextSplit> context) {
    return maxSplits > 0 ? maxSplits : Math.max(2, 2 * context.currentParallelism());
  }

  /** What a continuous source reads at each position: the scan's columns and filter, at no snapshot. */
  private ScanSpec template() {
    return scan.atSnapshot(null);
  }

  @Override
  public SplitEnumerator<LanceContextSplit, PendingSplits> createEnumerator(
      SplitEnumeratorContext<LanceContextSplit> context) {
    if (continuous()) {
      return ContinuousSplitEnumerator.create(context, options, template(), intervalMillis, splitsFor(context),
          since != null ? since : scan.snapshot(), since != null);
    }
    List<LanceContextSplit> splits = new ArrayList<>();
    long plannedAt;
    try (ContextStore store = ContextStore.open(options)) {
      int n = splitsFor(context);
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
    if (continuous() != (checkpoint.stream() != null)) {
      throw new IllegalStateException("the checkpoint of a " + (continuous() ? "bounded" : "continuous")
          + " lancecontext source cannot restore a " + (continuous() ? "continuous" : "bounded") + " one: the job "
          + "changed the source's mode (scan.mode); start it without this checkpoint");
    }
    if (continuous()) {
      return ContinuousSplitEnumerator.restore(context, options, template(), intervalMillis, splitsFor(context),
          checkpoint);
    }
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
    return new LanceContextSourceReader(context, options, rowType, continuous());
  }

  /** Builds a source: store options (required: {@code path}), what to read, and the row type. */
  public static final class Builder {
    private Map<String, String> options;
    private ScanSpec scan = ScanSpec.all();
    private RowType rowType;
    private int maxSplits;
    private Duration interval;
    private String since;

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

    /**
     * Makes the source continuous (unbounded): it emits the view at the start (the store as it is when the job
     * first starts, or the scan's snapshot, {@link ScanSpec#atSnapshot}) as inserts, then polls the store every
     * {@code discoveryInterval} and emits what changed since its last position (core's {@link ScanSpec#between}):
     * each added or upserted key's newest version as an update-after, each deleted key (stores with capability
     * {@code tombstones}) as a delete. One reader (subtask 0) reads every split, in order. A filter selects the
     * changed rows; deleted keys are reported whatever it says. The scan may have no limit.
     */
    public Builder continuous(Duration discoveryInterval) {
      this.interval = discoveryInterval;
      return this;
    }

    /** Continuous: start after the snapshot {@code tokenOrTag} names, reading only what changed since. */
    public Builder since(String tokenOrTag) {
      this.since = tokenOrTag;
      return this;
    }

    public LanceContextSource build() {
      if (interval != null && (interval.isNegative() || interval.isZero())) {
        throw new IllegalArgumentException("the discovery interval of a continuous lancecontext source must be "
            + "positive, not " + interval);
      }
      if (interval == null && since != null) {
        throw new IllegalArgumentException("since(...) is a start position of a continuous source: call "
            + "continuous(discoveryInterval) too");
      }
      if (interval != null && scan.hasLimit()) {
        throw new IllegalArgumentException("a continuous lancecontext source reads no limit (the scan has one)");
      }
      if (since != null && scan.snapshot() != null) {
        throw new IllegalArgumentException("a continuous lancecontext source starts either at a snapshot (read "
            + "whole first) or after one (since), not both");
      }
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
      return new LanceContextSource(config.asMap(), s, type, maxSplits,
          interval == null ? 0 : Math.max(1, interval.toMillis()), since);
    }
  }
}
