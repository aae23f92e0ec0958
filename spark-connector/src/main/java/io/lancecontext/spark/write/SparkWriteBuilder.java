package io.lancecontext.spark.write;

import io.lancecontext.core.options.StoreConfig;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;

/**
 * Builds an append. The DataFrame's columns were checked against the table's schema (the store's columns)
 * by Spark's analyzer before this runs: an unknown, reserved or missing key column, or a type that cannot
 * be cast safely, fails there naming the column, before any task runs and with the store unchanged.
 * Values (a vector's length, a null key) are checked by core as rows are written.
 */
public final class SparkWriteBuilder implements WriteBuilder {
  private final StoreConfig config;
  private final String key;
  private final int clusterBuckets;
  private final LogicalWriteInfo info;

  /** {@code clusterBuckets}: cluster rows by {@code bucket(clusterBuckets, key)} (0: no clustering). */
  public SparkWriteBuilder(StoreConfig config, String key, int clusterBuckets, LogicalWriteInfo info) {
    this.config = config;
    this.key = key;
    this.clusterBuckets = clusterBuckets;
    this.info = info;
  }

  @Override
  public Write build() {
    return new SparkWrite(config, info.schema(), info.queryId(), key, clusterBuckets);
  }
}
