package io.lancecontext.spark.read;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.SparkSchemas;
import io.lancecontext.spark.SparkMetrics;
import java.util.Arrays;
import org.apache.spark.sql.connector.metric.CustomMetric;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.types.StructType;

/**
 * One read of the LSM view, planned on the driver into splits of one snapshot (core's read plan); each
 * split is one Spark input partition, read columnar on an executor.
 */
public final class SparkScan implements Scan, Batch, SupportsReportStatistics {
  private final StoreConfig config;
  private final SchemaSpec spec;
  private final List<String> columns;
  private final ScanSpec scan;
  private final org.apache.spark.sql.connector.expressions.filter.Predicate[] pushed;
  private final int maxSplits;
  private final java.util.function.Consumer<ReadPlan> onPlanned;
  private ReadPlan plan;
  /** Whether this is a streaming read's scan; {@link #streamSince} is where a new query starts. */
  private final boolean streaming;
  private final String streamSince;
  /** Whether this scan returns one row, the view's record count ({@code COUNT(*)} pushed down). */
  private boolean counting;

  /** {@code maxSplits}: {@code read.splits}, or 0 for three per core of Spark's default parallelism. */
  SparkScan(StoreConfig config, SchemaSpec spec, List<String> columns, ScanSpec scan,
      org.apache.spark.sql.connector.expressions.filter.Predicate[] pushed, int maxSplits,
      java.util.function.Consumer<ReadPlan> onPlanned) {
    this(config, spec, columns, scan, pushed, maxSplits, onPlanned, false, null);
  }

  /** A streaming read's scan ({@link #toMicroBatchStream}): a new query starts after {@code since} (null: at the start). */
  SparkScan(StoreConfig config, SchemaSpec spec, List<String> columns, ScanSpec scan,
      org.apache.spark.sql.connector.expressions.filter.Predicate[] pushed, int maxSplits,
      java.util.function.Consumer<ReadPlan> onPlanned, String since) {
    this(config, spec, columns, scan, pushed, maxSplits, onPlanned, true, since);
  }

  private SparkScan(StoreConfig config, SchemaSpec spec, List<String> columns, ScanSpec scan,
      org.apache.spark.sql.connector.expressions.filter.Predicate[] pushed, int maxSplits,
      java.util.function.Consumer<ReadPlan> onPlanned, boolean streaming, String since) {
    this.streaming = streaming;
    this.streamSince = since;
    this.maxSplits = maxSplits;
    this.onPlanned = onPlanned;
    this.config = config;
    this.spec = spec;
    this.columns = columns;
    this.scan = scan;
    this.pushed = pushed;
  }

  /**
   * The scan of a pushed-down {@code COUNT(*)} ({@link ContextStore#countsOnly}): the read's splits, all in one input
   * partition whose task counts them side by side into one row ({@link SparkCountReader}).
   */
  static SparkScan counting(StoreConfig config, SchemaSpec spec, ScanSpec scan, int maxSplits,
      java.util.function.Consumer<ReadPlan> onPlanned) {
    SparkScan s = new SparkScan(config, spec, List.of(), scan,
        new org.apache.spark.sql.connector.expressions.filter.Predicate[0], maxSplits, onPlanned);
    s.counting = true;
    return s;
  }

  /** The schema of a pushed-down {@code COUNT(*)}. */
  static final StructType COUNT = new StructType().add("count(*)", org.apache.spark.sql.types.DataTypes.LongType, false);

  @Override
  public StructType readSchema() {
    if (counting) {
      return COUNT;
    }
    return scan.incremental() || streaming ? SparkSchemas.toIncrementalStruct(spec, columns)
        : SparkSchemas.toStruct(spec, columns);
  }

  /**
   * What the scan reads: its columns, the filters core evaluates, a limit, and, when the filter confines the
   * read to a few keys ({@code id = ..}, {@code id IN (..)}, conjunctions and disjunctions of them), how many
   * keys core reads by key ({@code keys=<n>}: the fresh tier through its index, the base table through its
   * key hashes) instead of scanning.
   */
  @Override
  public String description() {
    if (counting) {
      return "count(*) pushed (one task counts the read's splits, from the store's indexes where it can)";
    }
    return "columns=" + columns + " pushed=["
        + Arrays.stream(pushed).map(Object::toString).collect(Collectors.joining(", ")) + "]"
        + (scan.hasLimit() ? " limit=" + scan.limit() : "")
        + (scan.incremental() ? " since=" + scan.since() : "")
        + readByKey().map(k -> " keys=" + k.size()).orElse("");
  }

  /** The keys core reads by key for this scan's filter (core's rule). */
  java.util.Optional<java.util.Set<String>> readByKey() {
    return ContextStore.keysReadByKey(spec, scan);
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return SparkMetrics.read();
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  /** The micro-batches of a streaming read ({@link SparkMicroBatchStream}); its positions are snapshot tokens. */
  @Override
  public org.apache.spark.sql.connector.read.streaming.MicroBatchStream toMicroBatchStream(String checkpointLocation) {
    return new SparkMicroBatchStream(config, scan, readSchema(), maxSplits, streamSince, checkpointLocation);
  }

  /** Closes the read leases of scans no plan references any more. */
  private static final java.lang.ref.Cleaner LEASES = java.lang.ref.Cleaner.create();

  /**
   * The read plan of this scan: made once, on the driver, the first time Spark asks for partitions or
   * statistics, and held readable (core's read lease) for as long as this scan is reachable: a cached
   * DataFrame's later actions, stage retries and long scans read the same snapshot however much later they
   * run. Once Spark drops the scan and the JVM collects it, the lease is released (a driver that dies leaves it
   * to run out after {@code read.lease-timeout}).
   */
  private ReadPlan plan() {
    if (plan == null) {
      // several splits per core: the base and fresh tiers' splits differ in rows (a tier gets its share of the
      // splits rounded), and a store merging in the background takes a core from some of them
      int splits = maxSplits > 0 ? maxSplits : Math.max(2, 3 * SparkSession.active().sparkContext().defaultParallelism());
      try (ContextStore store = ContextStore.open(config)) {
        plan = store.planRead(scan, splits);
        io.lancecontext.core.read.ReadLease lease = store.holdRead(plan);
        LEASES.register(this, lease::release);
      }
      onPlanned.accept(plan);
    }
    return plan;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    if (counting) {
      return new InputPartition[] {new SparkCountPartition(plan().splits())};
    }
    return plan().splits().stream().map(SparkInputPartition::new).toArray(InputPartition[]::new);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new SparkPartitionReaderFactory(config.asMap(), readSchema());
  }

  /** The plan's estimates: rows and bytes before filters (upper bounds, see {@link ReadPlan}). */
  @Override
  public Statistics estimateStatistics() {
    // a pushed-down COUNT(*) returns one row of one long, whatever the store holds
    long rows = counting ? 1 : plan().estimatedRows();
    long bytes = counting ? Long.BYTES : plan().estimatedBytes();
    return new Statistics() {
      @Override
      public OptionalLong sizeInBytes() {
        return OptionalLong.of(bytes);
      }

      @Override
      public OptionalLong numRows() {
        return OptionalLong.of(rows);
      }
    };
  }
}
