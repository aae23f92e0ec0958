package io.lancecontext.spark;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.catalog.PathCatalog;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsCatalogOptions;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code lancecontext} data source: {@code spark.read.format("lancecontext").load(path)} and
 * {@code df.write.format("lancecontext").mode(m).save(path)} with every save mode (docs/spark.md): batch reads
 * and writes go through {@link PathCatalog}, which Spark needs to run {@code ErrorIfExists} (the default) and
 * {@code Ignore}; streaming writes ({@code writeStream.format("lancecontext")}) get their table from
 * {@link #getTable}. A store that does not exist yet is created when option {@code schema} names a preset or
 * holds a JSON spec (or, for {@code ErrorIfExists} / {@code Ignore}, from the DataFrame's columns). Options
 * are core's (docs/options.md), with the same keys, and the Spark-only ones of {@link SparkOptions}; an
 * unknown one fails naming it.
 */
public final class LanceContextDataSource implements SupportsCatalogOptions, DataSourceRegister {
  public static final String SHORT_NAME = "lancecontext";

  @Override
  public String shortName() {
    return SHORT_NAME;
  }

  @Override
  public Identifier extractIdentifier(CaseInsensitiveStringMap options) {
    return PathCatalog.identifier(options);
  }

  /**
   * Option {@code snapshot}: Spark then loads the table at it ({@link PathCatalog#loadTable(Identifier, String)}).
   * Option {@code since} alone loads it the same way, at {@link PathCatalog#NOW}: only reads ask for a version, so
   * that is where an incremental read's table (its schema has {@code _lc_deleted}) is made.
   */
  @Override
  public java.util.Optional<String> extractTimeTravelVersion(CaseInsensitiveStringMap options) {
    java.util.Optional<String> at = SparkOptions.get(options, SparkOptions.SNAPSHOT);
    return at.isEmpty() && SparkOptions.get(options, SparkOptions.SINCE).isPresent()
        ? java.util.Optional.of(PathCatalog.NOW) : at;
  }

  @Override
  public String extractCatalog(CaseInsensitiveStringMap options) {
    return PathCatalog.register();
  }

  /**
   * Asked only by streaming reads (batch reads and writes load the table through the catalog, streaming writes hand
   * over the DataFrame's schema): the schema of an incremental read, with {@code _lc_deleted}, which
   * {@link #getTable} recognises.
   */
  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    SchemaSpec spec = spec(SparkOptions.toConfig(options.asCaseSensitiveMap()));
    List<String> columns = new java.util.ArrayList<>(spec.columnNames());
    columns.add(ScanSpec.DELETED);
    return SparkSchemas.toIncrementalStruct(spec, columns);
  }

  /** Streaming writes hand over the DataFrame's schema; the table's is the store's. */
  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  /** The table of a streaming write (not clustered: Spark resolves no function for it). */
  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    StoreConfig config = SparkOptions.toConfig(properties);
    try (ContextStore store = ContextStore.open(config)) {
      if (schema != null && java.util.Arrays.asList(schema.fieldNames()).contains(ScanSpec.DELETED)) {
        return SparkTable.streamingRead(config, store.spec(), store.shards());
      }
      return new SparkTable(config, store.spec(), store.shards(), false);
    }
  }

  private static SchemaSpec spec(StoreConfig config) {
    try (ContextStore store = ContextStore.open(config)) {
      return store.spec();
    }
  }
}
