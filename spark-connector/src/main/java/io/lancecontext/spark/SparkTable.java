package io.lancecontext.spark;

import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.read.SparkScanBuilder;
import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** A context store as a Spark table: its LSM view (newest row per key, deletions hidden). */
public final class SparkTable implements SupportsRead {
  private final StoreConfig config;
  private final SchemaSpec spec;

  SparkTable(StoreConfig config, SchemaSpec spec) {
    this.config = config;
    this.spec = spec;
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
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new SparkScanBuilder(config, spec);
  }
}
