package io.lancecontext.flink.table;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.flink.lookup.LanceContextLookupFunction;
import io.lancecontext.flink.lookup.MeteredLookupCache;
import io.lancecontext.flink.source.LanceContextSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.connector.source.abilities.SupportsFilterPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsLimitPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.connector.source.lookup.LookupOptions;
import org.apache.flink.table.connector.source.lookup.PartialCachingLookupProvider;
import org.apache.flink.table.connector.source.lookup.cache.DefaultLookupCache;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * A store as a Flink table source: a bounded scan of its LSM view (projection, filter and limit pushed
 * into core) and lookup joins on its key. With {@code 'scan.mode' = 'continuous'} a scan is unbounded: an upsert
 * changelog on the store's key ({@code +I} for the first snapshot's rows, {@code +U} for a changed key's newest
 * version, {@code -D} for a deleted key where the store has capability {@code tombstones}); Flink normalizes it
 * per key after the source. Such a scan takes no filter or limit into the store: a filter evaluated in the store
 * would miss a key that changed from matching to not matching, and Flink's filter after the normalization sees
 * each key's whole row.
 */
final class LanceContextTableSource
    implements ScanTableSource, LookupTableSource, SupportsProjectionPushDown, SupportsFilterPushDown,
    SupportsLimitPushDown {
  private final Map<String, String> options;
  private final ReadableConfig flinkOptions;
  private final SchemaSpec spec;
  private final boolean primaryKey;
  private RowType rowType;
  private final List<Predicate> filters = new ArrayList<>();
  private long limit = -1;

  /** {@code primaryKey}: whether the DDL declares one (the store's key; a continuous scan needs it). */
  LanceContextTableSource(Map<String, String> options, ReadableConfig flinkOptions, SchemaSpec spec, RowType rowType,
      boolean primaryKey) {
    this.options = options;
    this.flinkOptions = flinkOptions;
    this.spec = spec;
    this.rowType = rowType;
    this.primaryKey = primaryKey;
  }

  private boolean continuous() {
    return flinkOptions.get(FlinkOptions.SCAN_MODE) == FlinkOptions.ScanMode.CONTINUOUS;
  }

  @Override
  public ChangelogMode getChangelogMode() {
    if (!continuous()) {
      return ChangelogMode.insertOnly();
    }
    if (!primaryKey) {
      throw new ValidationException("option 'scan.mode' = 'continuous' makes the lancecontext table on "
          + options.get("path") + " an upsert changelog on the store's key: declare PRIMARY KEY (" + spec.key()
          + ") NOT ENFORCED");
    }
    ChangelogMode.Builder mode = ChangelogMode.newBuilder().addContainedKind(RowKind.INSERT)
        .addContainedKind(RowKind.UPDATE_AFTER);
    if (spec.has(Capability.TOMBSTONES)) {
      mode.addContainedKind(RowKind.DELETE);
    }
    return mode.build();
  }

  @Override
  public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
    ScanSpec scan = ScanSpec.all().withColumns(columnsToRead()).withFilter(Predicate.and(filters))
        .atSnapshot(flinkOptions.getOptional(FlinkOptions.SCAN_SNAPSHOT).orElse(null));
    if (limit >= 0 && !continuous()) {
      scan = scan.withLimit(limit);
    }
    LanceContextSource.Builder source = LanceContextSource.builder().options(options).scan(scan).rowType(rowType);
    // Flink's standard 'scan.parallelism' (null: the job's default parallelism; a continuous scan reads in one)
    Integer parallelism = flinkOptions.getOptional(org.apache.flink.table.factories.FactoryUtil.SOURCE_PARALLELISM)
        .orElse(null);
    if (continuous()) {
      source.continuous(flinkOptions.get(FlinkOptions.SCAN_DISCOVERY_INTERVAL))
          .since(flinkOptions.getOptional(FlinkOptions.SCAN_SINCE).orElse(null));
      parallelism = parallelism == null ? Integer.valueOf(1) : parallelism;
    }
    return SourceProvider.of(source.build(), parallelism);
  }

  /** A read of no columns (count(*)) still reads the key. */
  private List<String> columnsToRead() {
    return rowType.getFieldCount() == 0 ? List.of(spec.key()) : rowType.getFieldNames();
  }

  @Override
  public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
    int[][] keys = context.getKeys();
    if (keys.length != 1 || keys[0].length != 1 || !rowType.getFieldNames().get(keys[0][0]).equals(spec.key())) {
      throw new ValidationException("a lookup join on a lancecontext table must join on its key column '"
          + spec.key() + "' only");
    }
    var function = new LanceContextLookupFunction(options, rowType, flinkOptions.get(LookupOptions.MAX_RETRIES));
    if (flinkOptions.get(LookupOptions.CACHE_TYPE) == LookupOptions.LookupCacheType.PARTIAL) {
      return PartialCachingLookupProvider.of(function, new MeteredLookupCache(DefaultLookupCache.fromConfig(flinkOptions)));
    }
    return LookupFunctionProvider.of(function);
  }

  @Override
  public boolean supportsNestedProjection() {
    return false;
  }

  @Override
  public void applyProjection(int[][] projectedFields, DataType producedDataType) {
    rowType = (RowType) producedDataType.getLogicalType();
  }

  /**
   * Accepts the filters core evaluates exactly as Flink does (scans read only matching rows), and returns
   * every filter as remaining too, so that Flink still evaluates them after this source. A scan loses nothing
   * by it (its rows already match). A lookup needs it: the planner pushes a filter on the looked-up table's
   * columns ({@code JOIN t FOR SYSTEM_TIME AS OF ... WHERE t.reward > 0.6}) into this source too, and a
   * lookup by key applies no filter, so a filter that was only accepted would be lost.
   */
  @Override
  public Result applyFilters(List<ResolvedExpression> expressions) {
    List<ResolvedExpression> accepted = new ArrayList<>();
    if (continuous()) {
      return Result.of(accepted, expressions);
    }
    for (ResolvedExpression e : expressions) {
      Optional<Predicate> p = FlinkFilters.translate(e, spec);
      if (p.isPresent()) {
        filters.add(p.get());
        accepted.add(e);
      }
    }
    return Result.of(accepted, expressions);
  }

  @Override
  public void applyLimit(long n) {
    limit = n;
  }

  @Override
  public DynamicTableSource copy() {
    LanceContextTableSource copy = new LanceContextTableSource(options, flinkOptions, spec, rowType, primaryKey);
    copy.filters.addAll(filters);
    copy.limit = limit;
    return copy;
  }

  @Override
  public String asSummaryString() {
    return "lancecontext";
  }
}
