package io.lancecontext.spark.read;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Builds a read of the store's LSM view: the columns Spark needs, every filter core evaluates exactly (the
 * rest stays with Spark), and a limit, which each split applies (Spark still applies the global limit).
 */
public final class SparkScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownV2Filters,
    SupportsPushDownLimit, SupportsPushDownAggregates {
  private final StoreConfig config;
  private final SchemaSpec spec;
  private List<String> columns;
  private final List<org.apache.spark.sql.connector.expressions.filter.Predicate> pushed = new ArrayList<>();
  private final List<Predicate> filters = new ArrayList<>();
  private long limit = -1;
  private final int maxSplits;
  private final java.util.function.Consumer<io.lancecontext.core.read.ReadPlan> onPlanned;
  private final String snapshot;
  private final String since;
  /** Whether this is a streaming read's scan ({@link SparkScan#toMicroBatchStream}; {@code since} is its start). */
  private boolean streaming;
  /** Whether Spark pushed {@code COUNT(*)} down: the scan returns one row, the count. */
  private boolean countPushed;

  /**
   * {@code maxSplits}: {@code read.splits}, or 0 for the default; {@code snapshot}: the token or tag to read at,
   * or null for the store as it is.
   */
  public SparkScanBuilder(StoreConfig config, SchemaSpec spec, int maxSplits, String snapshot) {
    this(config, spec, maxSplits, snapshot, null, plan -> { });
  }

  /**
   * An incremental read when {@code since} (a token or tag) is not null: what changed after it and at or before
   * {@code snapshot} (null: the store as it is when the read is planned).
   */
  public SparkScanBuilder(StoreConfig config, SchemaSpec spec, int maxSplits, String snapshot, String since) {
    this(config, spec, maxSplits, snapshot, since, plan -> { });
  }

  /** As above; {@code onPlanned} is told the read plan when the scan makes it (a DELETE's conflict check). */
  public SparkScanBuilder(StoreConfig config, SchemaSpec spec, int maxSplits, String snapshot,
      java.util.function.Consumer<io.lancecontext.core.read.ReadPlan> onPlanned) {
    this(config, spec, maxSplits, snapshot, null, onPlanned);
  }

  private SparkScanBuilder(StoreConfig config, SchemaSpec spec, int maxSplits, String snapshot, String since,
      java.util.function.Consumer<io.lancecontext.core.read.ReadPlan> onPlanned) {
    this.onPlanned = onPlanned;
    this.snapshot = snapshot;
    this.since = since;
    this.config = config;
    this.spec = spec;
    this.maxSplits = maxSplits;
    this.columns = spec.columnNames();
  }

  /** Makes this the scan of a streaming read, starting after {@code since} (null: with the whole store). */
  public SparkScanBuilder streaming() {
    this.streaming = true;
    List<String> all = new ArrayList<>(spec.columnNames());
    all.add(ScanSpec.DELETED);  // a streaming scan is built unpruned: every column of the table's schema
    this.columns = all;
    return this;
  }

  @Override
  public void pruneColumns(StructType required) {
    List<String> cols = new ArrayList<>();
    for (StructField f : required.fields()) {
      cols.add(f.name());
    }
    columns = cols;
  }

  @Override
  public org.apache.spark.sql.connector.expressions.filter.Predicate[] pushPredicates(
      org.apache.spark.sql.connector.expressions.filter.Predicate[] predicates) {
    List<org.apache.spark.sql.connector.expressions.filter.Predicate> rest = new ArrayList<>();
    for (var p : predicates) {
      Optional<Predicate> translated = SparkFilters.translate(p, spec);
      if (translated.isPresent()) {
        pushed.add(p);
        filters.add(translated.get());
      } else {
        rest.add(p);
      }
    }
    return rest.toArray(new org.apache.spark.sql.connector.expressions.filter.Predicate[0]);
  }

  @Override
  public org.apache.spark.sql.connector.expressions.filter.Predicate[] pushedPredicates() {
    return pushed.toArray(new org.apache.spark.sql.connector.expressions.filter.Predicate[0]);
  }

  @Override
  public boolean pushLimit(int n) {
    limit = n;
    return true;
  }

  @Override
  public boolean isPartiallyPushed() {
    return true;  // a limit applies per split
  }

  /**
   * {@code COUNT(*)} (no grouping, nothing else) of a read core only counts ({@link ContextStore#countsOnly}: no
   * filter, and no lifecycle rule or supersession hiding rows) is pushed down whole: one task counts the read's
   * splits side by side, from the store's indexes where it can, with no shuffle after it.
   */
  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    countPushed = supportCompletePushDown(aggregation);
    return countPushed;
  }

  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    return aggregation.groupByExpressions().length == 0 && aggregation.aggregateExpressions().length == 1
        && aggregation.aggregateExpressions()[0] instanceof CountStar && !streaming
        && ContextStore.countsOnly(spec, scan(List.of()));  // (core refuses an incremental read, a limit, a filter)
  }

  @Override
  public Scan build() {
    // a read of no columns (count(*)): core counts, reading only what it cannot count from its key hashes
    // an incremental read's _lc_deleted is core's own output column, not one to ask for
    List<String> stored = columns.stream().filter(c -> !c.equals(ScanSpec.DELETED)).toList();
    if (countPushed) {
      return SparkScan.counting(config, spec, scan(List.of()), maxSplits, onPlanned);
    }
    ScanSpec scan = scan(stored);
    if (streaming) {
      return new SparkScan(config, spec, columns, scan, pushedPredicates(), maxSplits, onPlanned, since);
    }
    return new SparkScan(config, spec, columns, scan, pushedPredicates(), maxSplits, onPlanned);
  }

  /** The core scan of {@code stored} columns with the pushed filters, snapshot and limit. */
  private ScanSpec scan(List<String> stored) {
    ScanSpec scan = ScanSpec.all().withColumns(stored).withFilter(Predicate.and(filters));
    if (!streaming) {
      scan = since == null ? scan.atSnapshot(snapshot) : scan.between(since, snapshot);
    }
    if (limit >= 0) {
      scan = scan.withLimit(limit);
    }
    return scan;
  }
}
