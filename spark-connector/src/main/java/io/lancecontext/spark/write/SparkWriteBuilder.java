package io.lancecontext.spark.write;

import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.spark.SparkOptions;
import java.util.Map;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend;

/**
 * Builds an append, or (after {@link #truncate()}: {@code mode("overwrite")}, {@code INSERT OVERWRITE}, a
 * streaming query in complete mode) a write that replaces the store's contents in its one publish. The
 * DataFrame's columns were checked against the table's schema (the store's columns) by Spark's analyzer
 * before this runs: an unknown, reserved or missing key column, or a type that cannot be cast safely, fails
 * there naming the column, before any task runs and with the store unchanged. Values (a vector's length, a
 * null key) are checked by core as rows are written. The write's options ({@code write.commit}, {@code
 * write.tasks}, {@code write.distribution}) take precedence over the table's.
 *
 * <p>A streaming query in update mode writes as an append ({@link SupportsStreamingUpdateAsAppend}): each
 * epoch's rows are the keys whose result changed, and an append upserts them by key, so the store holds each
 * key's latest result.
 */
public final class SparkWriteBuilder implements WriteBuilder, SupportsTruncate, SupportsStreamingUpdateAsAppend {
  private final StoreConfig config;
  private final SchemaSpec spec;
  private final int clusterBuckets;
  private final LogicalWriteInfo info;
  private boolean replace;

  /** {@code clusterBuckets}: cluster rows by {@code bucket(clusterBuckets, key)} (0: no clustering). */
  public SparkWriteBuilder(StoreConfig config, SchemaSpec spec, int clusterBuckets, LogicalWriteInfo info) {
    this.config = config;
    this.spec = spec;
    this.clusterBuckets = clusterBuckets;
    this.info = info;
  }

  /**
   * The write replaces the contents: every key visible before it and not written by it is deleted in the same
   * publish (core's {@code publishReplacing}).
   */
  @Override
  public WriteBuilder truncate() {
    replace = true;
    return this;
  }

  /**
   * An overwrite (replace) is published by {@code ContextStore.publishReplacing}, on every store.
   *
   * @throws BadOptionException for a replace with {@code write.commit = immediate}, or a bad {@code write.tasks}
   */
  @Override
  public Write build() {
    Map<String, String> options = info.options().asCaseSensitiveMap();
    Map<String, String> given = new java.util.HashMap<>(config.asMap());
    options.forEach((k, v) -> {  // the write's own options over the table's, keys in any case
      given.keySet().removeIf(k::equalsIgnoreCase);
      given.put(k, v);
    });
    WriterOptions.CommitMode commit = WriterOptions.CommitMode.forWrite(given, WriterOptions.CommitMode.ATOMIC,
        replace ? WriterOptions.CommitMode.ATOMIC : null, "an overwrite (it replaces the contents in one publish)");
    boolean atomic = commit == WriterOptions.CommitMode.ATOMIC;
    int tasks = SparkOptions.get(options, SparkOptions.WRITE_TASKS).orElse(0);
    boolean cluster = SparkOptions.get(options, SparkOptions.WRITE_DISTRIBUTION).orElse(true);
    commit.requireSupportedBy(spec, config.uri());  // core's rule, checked before any task runs
    return new SparkWrite(config, info.schema(), info.queryId(), spec.key(), cluster ? clusterBuckets : 0, tasks, atomic,
        replace);
  }
}
