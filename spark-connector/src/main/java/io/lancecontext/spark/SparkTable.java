package io.lancecontext.spark;

import io.lancecontext.core.ContextStore;



import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.Predicate;

import io.lancecontext.core.result.PublishResult;

import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.read.SparkFilters;
import io.lancecontext.spark.read.SparkScanBuilder;
import io.lancecontext.spark.write.SparkDeleteOperation;
import io.lancecontext.spark.write.SparkWriteBuilder;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import java.util.stream.Collectors;

import org.apache.spark.sql.connector.catalog.SupportsDeleteV2;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsRowLevelOperations;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A context store as a Spark table: reads return its LSM view (newest row per key, deletions hidden);
 * appends upsert by key; an overwrite (truncate, then write) replaces the contents in one publish; streaming
 * writes publish one transaction per epoch; {@code DELETE FROM ... WHERE} deletes the matching keys in one
 * transaction: by core's filters when core evaluates the whole condition ({@link #deleteWhere}), else by
 * Spark's evaluation of the rows read ({@link SparkDeleteOperation}). An overwrite of a store with rows, and
 * DELETE, need capability {@code tombstones}; UPDATE and MERGE are not supported.
 */
public final class SparkTable implements SupportsRead, SupportsWrite, SupportsDeleteV2, SupportsRowLevelOperations {
  private static final Logger LOG = LoggerFactory.getLogger(SparkTable.class);

  private final StoreConfig config;
  private final SchemaSpec spec;
  private final int shards;
  private final boolean clustered;
  private final List<String> columns;
  /** The snapshot reads of this table read (a token or tag), or null for the store as it is. */
  private final String snapshot;
  /** With it, reads of this table are incremental: what changed after this snapshot (a token or tag). */
  private final String since;
  /** Whether this is a streaming read's table ({@code spark.readStream.format("lancecontext")}). */
  private final boolean streamRead;

  /**
   * @param clustered writes are clustered by {@code bucket(shards, key)}, which the table's catalog's function
   *     catalog resolves (catalog and path-based batch writes), into {@code shards} tasks unless option
   *     {@code write.tasks} says otherwise
   */
  public SparkTable(StoreConfig config, SchemaSpec spec, int shards, boolean clustered) {
    this(config, spec, shards, clustered, spec.columnNames());
  }

  /**
   * A table whose schema is only {@code columns} of the store (in that order): what a create-table-as-select
   * writes by position, when the DataFrame has a subset of a preset's columns.
   */
  public SparkTable(StoreConfig config, SchemaSpec spec, int shards, boolean clustered, List<String> columns) {
    this(config, spec, shards, clustered, columns, null, null, false);
  }

  private SparkTable(StoreConfig config, SchemaSpec spec, int shards, boolean clustered, List<String> columns,
      String snapshot, String since, boolean streamRead) {
    this.streamRead = streamRead;
    this.config = config;
    this.spec = spec;
    this.shards = shards;
    this.clustered = clustered;
    this.columns = List.copyOf(columns);
    this.snapshot = snapshot;
    this.since = since;
  }

  /**
   * This table as it was when the snapshot {@code tokenOrTag} names was taken ({@code VERSION AS OF}, option
   * {@code snapshot}): read-only.
   */
  public SparkTable atSnapshot(String tokenOrTag) {
    return new SparkTable(config, spec, shards, clustered, columns, tokenOrTag, null, false);
  }

  /**
   * The table of a streaming read ({@code spark.readStream.format("lancecontext")}, core's incremental reads between
   * successive snapshots): read-only; its schema has every column nullable and {@code _lc_deleted}, always (false on
   * every row of a store without tombstones).
   */
  public static SparkTable streamingRead(StoreConfig config, SchemaSpec spec, int shards) {
    return new SparkTable(config, spec, shards, false, spec.columnNames(), null, null, true);
  }

  /**
   * This table read incrementally (option {@code since}): what changed after the snapshot {@code since} names and
   * at or before {@code snapshot} (null: the store as it is when a read is planned), with the column
   * {@link io.lancecontext.core.read.ScanSpec#DELETED} when the store has capability tombstones. Read-only.
   */
  public SparkTable between(String since, String snapshot) {
    return new SparkTable(config, spec, shards, clustered, columns, snapshot, since, false);
  }

  @Override
  public String name() {
    return "lancecontext:" + config.uri() + (since == null ? "" : " SINCE '" + since + "'")
        + (snapshot == null ? "" : " VERSION AS OF '" + snapshot + "'");
  }

  @Override
  public StructType schema() {
    if (since != null || streamRead) {
      List<String> cols = new ArrayList<>(columns);
      if (streamRead || spec.has(Capability.TOMBSTONES)) {
        cols.add(io.lancecontext.core.read.ScanSpec.DELETED);
      }
      return SparkSchemas.toIncrementalStruct(spec, cols);
    }
    return SparkSchemas.toStruct(spec, columns);
  }

  /** What {@code DESCRIBE TABLE EXTENDED} shows: location, key, shards, capabilities and the spec. */
  @Override
  public Map<String, String> properties() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("provider", "lancecontext");
    p.put("location", config.uri());
    p.put("key", spec.key());
    spec.preset().ifPresent(preset -> p.put("schema", preset));
    p.put("shards", Integer.toString(shards));
    p.put("capabilities", spec.capabilities().stream().map(Capability::jsonName).sorted()
        .collect(Collectors.joining(",")));
    p.put("spec", spec.toJson());
    return p;
  }

  @Override
  public Set<TableCapability> capabilities() {
    if (streamRead) {
      return EnumSet.of(TableCapability.MICRO_BATCH_READ);
    }
    if (snapshot != null || since != null) {
      return EnumSet.of(TableCapability.BATCH_READ);
    }
    return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE,
        TableCapability.STREAMING_WRITE);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    if (streamRead) {
      return new SparkScanBuilder(config, spec, SparkOptions.get(options, SparkOptions.READ_SPLITS).orElse(0), null,
          SparkOptions.get(options, SparkOptions.SINCE).orElse(null)).streaming();
    }
    if (since == null && SparkOptions.get(options, SparkOptions.SINCE).isPresent()) {
      throw new io.lancecontext.core.error.BadOptionException(SparkOptions.SINCE.key(), "is read by "
          + "spark.read.format(\"lancecontext\").option(\"since\", ...).load(path) only, whose schema has the "
          + "column _lc_deleted; a catalog table's read cannot take it");
    }
    return new SparkScanBuilder(config, spec, SparkOptions.get(options, SparkOptions.READ_SPLITS).orElse(0),
        SparkOptions.get(options, SparkOptions.SNAPSHOT).orElse(snapshot), since);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    if (streamRead || since != null || SparkOptions.get(info.options(), SparkOptions.SINCE).isPresent()) {
      throw new io.lancecontext.core.error.BadOptionException(SparkOptions.SINCE.key(), "is a read option (an "
          + "incremental read): a write always goes to the store as it is");
    }
    if (snapshot != null) {
      throw new UnsupportedOperationException("the table " + config.uri() + " read at snapshot '" + snapshot
          + "' is read-only: write to the table itself");
    }
    if (SparkOptions.get(info.options(), SparkOptions.SNAPSHOT).isPresent()) {
      throw new io.lancecontext.core.error.BadOptionException(SparkOptions.SNAPSHOT.key(), "is a read option: a write "
          + "always goes to the store as it is");
    }
    return new SparkWriteBuilder(config, spec, clustered ? shards : 0, info);
  }

  // ---------------------------------------------------------------- DELETE

  private void requireTombstones(String what) {
    if (!spec.has(Capability.TOMBSTONES)) {
      throw new SchemaException("the store at " + config.uri() + " has no 'tombstones' capability: " + what
          + " is disabled (the spec's capabilities are fixed when the store is created)");
    }
  }

  /**
   * A DELETE whose condition core cannot evaluate entirely (Spark asks for every DELETE, then takes
   * {@link #deleteWhere} when {@link #canDeleteWhere} is true).
   *
   * @throws SchemaException naming the capability, for a store without capability {@code tombstones}
   * @throws UnsupportedOperationException for UPDATE and MERGE
   */
  @Override
  public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
    if (info.command() != RowLevelOperation.Command.DELETE) {
      throw new UnsupportedOperationException(info.command() + " is not supported by lancecontext tables: upsert "
          + "by key with INSERT INTO (or mode(\"append\")), delete with DELETE FROM");
    }
    requireTombstones("DELETE");
    return () -> new SparkDeleteOperation(config, spec);
  }

  /**
   * True if core evaluates every predicate exactly (then the delete runs in core); a store without capability
   * {@code tombstones} fails here, before anything is read or written.
   *
   * @throws SchemaException naming the capability
   */
  @Override
  public boolean canDeleteWhere(org.apache.spark.sql.connector.expressions.filter.Predicate[] predicates) {
    requireTombstones("DELETE");
    return translate(predicates).isPresent();
  }

  private Optional<Predicate> translate(org.apache.spark.sql.connector.expressions.filter.Predicate[] predicates) {
    List<Predicate> out = new ArrayList<>();
    for (var p : predicates) {
      Optional<Predicate> t = SparkFilters.translate(p, spec);
      if (t.isEmpty()) {
        return Optional.empty();
      }
      out.add(t.get());
    }
    return Optional.of(Predicate.and(out));
  }

  /**
   * Deletes every key of the view matching the predicates, in one transaction (core's
   * {@link ContextStore#deleteWhere}): a key another writer changes before the publish so that it no longer
   * matches fails the delete (retryable) instead of being deleted.
   */
  @Override
  public void deleteWhere(org.apache.spark.sql.connector.expressions.filter.Predicate[] predicates) {
    requireTombstones("DELETE");
    Predicate filter = translate(predicates).orElseThrow(() -> new IllegalArgumentException(
        "a DELETE condition core cannot evaluate exactly"));
    try (ContextStore store = ContextStore.open(config)) {
      PublishResult published = store.deleteWhere(filter);
      LOG.info("Deleted {} keys of {} in one transaction ({})", published.keysDeleted(), config.uri(),
          published.transactionId());
    }
  }
}
