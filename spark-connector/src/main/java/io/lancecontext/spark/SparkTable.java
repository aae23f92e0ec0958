package io.lancecontext.spark;

import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.read.SparkScanBuilder;
import io.lancecontext.spark.write.SparkWriteBuilder;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A context store as a Spark table: reads return its LSM view (newest row per key, deletions hidden);
 * appends upsert by key.
 */
public final class SparkTable implements SupportsRead, SupportsWrite {
  private final StoreConfig config;
  private final SchemaSpec spec;
  private final int clusterBuckets;

  /** A table of the {@code lancecontext} data source (path-based): writes are not clustered. */
  SparkTable(StoreConfig config, SchemaSpec spec) {
    this(config, spec, 0);
  }

  /**
   * A table of the catalog: writes are clustered by {@code bucket(shards, key)}, which the catalog's
   * function catalog resolves, into {@code shards} tasks.
   */
  public SparkTable(StoreConfig config, SchemaSpec spec, int shards) {
    this.config = config;
    this.spec = spec;
    this.clusterBuckets = shards;
  }

  @Override
  public String name() {
    return "lancecontext:" + config.uri();
  }

  @Override
  public StructType schema() {
    return SparkSchemas.toStruct(spec);
  }

  @Override
  public Map<String, String> properties() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("provider", "lancecontext");
    p.put("location", config.uri());
    p.put("key", spec.key());
    spec.preset().ifPresent(preset -> p.put("schema", preset));
    return p;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new SparkScanBuilder(config, spec);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new SparkWriteBuilder(config, spec.key(), clusterBuckets, info);
  }
}
