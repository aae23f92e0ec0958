package io.lancecontext.spark;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code lancecontext} data source: {@code spark.read.format("lancecontext").load(path)} and
 * {@code df.write.format("lancecontext").mode("append").save(path)} (upsert by key; a store that does not
 * exist yet is created when option {@code schema} names a preset or holds a JSON spec). Options are core's
 * (docs/options.md), with the same keys; an unknown one fails naming it.
 */
public final class LanceContextDataSource implements TableProvider, DataSourceRegister {
  public static final String SHORT_NAME = "lancecontext";

  @Override
  public String shortName() {
    return SHORT_NAME;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return SparkSchemas.toStruct(spec(SparkOptions.toConfig(options.asCaseSensitiveMap())));
  }

  /** Writes hand over the DataFrame's schema; reads call {@link #inferSchema} first. */
  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    StoreConfig config = SparkOptions.toConfig(properties);
    return new SparkTable(config, spec(config));
  }

  private static SchemaSpec spec(StoreConfig config) {
    try (ContextStore store = ContextStore.open(config)) {
      return store.spec();
    }
  }
}
