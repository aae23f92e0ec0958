package io.lancecontext.spark;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.ConfigOption;
import io.lancecontext.core.options.OptionParsers;
import io.lancecontext.core.options.StoreConfig;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Spark's options for a store, mapped onto core's {@link StoreConfig}: the same keys as in core and Flink
 * (docs/options.md), plus the few that only the Spark connector reads ({@link #SPARK_ONLY}, listed in
 * docs/spark.md) and the keys Spark itself adds to a source's options ({@code checkpointLocation}, ...).
 * Spark hands DataSource options over case-insensitively; core keys are lower case, so they are matched
 * lower-cased, except the values of {@code storage.*} keys, which are passed as given. Unknown keys fail with
 * {@link BadOptionException} naming them.
 */
public final class SparkOptions {
  private SparkOptions() {}

  /** Number of write tasks; default: one per shard for clustered writes, Spark's own partitioning otherwise. */
  public static final ConfigOption<Integer> WRITE_TASKS = ConfigOption.optional("write.tasks", OptionParsers::positiveInt,
      ConfigOption.Scope.HANDLE,
      "Spark only: the number of tasks a batch or streaming write runs (rows are clustered by key bucket "
          + "into that many tasks). Default: the store's shard count when the write is clustered (catalog and path writes), "
          + "else the DataFrame's partitioning.");

  /** Whether writes are clustered by key bucket ({@code bucket}, the default) or left as the DataFrame is ({@code none}). */
  public static final ConfigOption<Boolean> WRITE_DISTRIBUTION = ConfigOption.of("write.distribution", "bucket", v -> {
    switch (v.toLowerCase(Locale.ROOT)) {
      case "bucket":
        return true;
      case "none":
        return false;
      default:
        throw new BadOptionException("write.distribution", "must be 'bucket' or 'none', not '" + v + "'");
    }
  }, ConfigOption.Scope.HANDLE, "Spark only: 'bucket' clusters a batch write's rows by bucket(shards, key) (a shuffle) so each task writes whole "
      + "buckets; 'none' writes the DataFrame's partitions as they are (no shuffle; each task may write every bucket).");

  /** The most input partitions a batch read is planned into; default three per core of Spark's parallelism. */
  public static final ConfigOption<Integer> READ_SPLITS = ConfigOption.optional("read.splits", OptionParsers::positiveInt,
      ConfigOption.Scope.HANDLE,
      "Spark only: the most input partitions a batch read is planned into (groups of base fragments of about equal "
          + "rows and groups of fresh-tier buckets; fewer when the store has fewer; with 1, one partition of the "
          + "whole view). Default: three per core of Spark's default parallelism, at least 2, so that the tiers' "
          + "unequal splits still keep every core busy.");

  /** The snapshot a batch read reads: a token or a tag; default: the store as it is. */
  public static final ConfigOption<String> SNAPSHOT = ConfigOption.optional("snapshot", v -> v, ConfigOption.Scope.HANDLE,
      "Spark only: read the store as it was when this snapshot was taken: a token (ContextStore.snapshot(), CALL "
          + "<catalog>.system.snapshot) or a tag. The same as SELECT ... VERSION AS OF '<token or tag>'. Default: "
          + "the store as it is when the read is planned.");

  /** An incremental batch read: only what changed after this snapshot (a token or a tag). */
  public static final ConfigOption<String> SINCE = ConfigOption.optional("since", v -> v, ConfigOption.Scope.HANDLE,
      "Spark only: an incremental batch read of format(\"lancecontext\"): only the rows added or changed after this "
          + "snapshot (a token or a tag) and at or before option snapshot (default: the store as it is when the read is "
          + "planned), each once as it is then; with capability tombstones, also the keys deleted in between, as rows "
          + "whose extra column _lc_deleted is true (false on the other rows; every other column of the read is "
          + "nullable). The same as core's ScanSpec.between. For readStream: where a new query starts, instead of with "
          + "the whole store. Default: a read of the whole store.");

  /** The options only the Spark connector reads (not core's), with their defaults and descriptions. */
  public static final List<ConfigOption<?>> SPARK_ONLY = List.of(WRITE_TASKS, WRITE_DISTRIBUTION, READ_SPLITS, SNAPSHOT,
      SINCE);

  /** Keys Spark adds to a source's options itself; they are not store options. */
  private static final List<String> SPARK_KEYS = List.of("checkpointlocation", "queryname", "__checkpointlocation");

  /** Core options from Spark's (case-preserving) option map. */
  public static StoreConfig toConfig(Map<String, String> sparkOptions) {
    Map<String, String> options = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : sparkOptions.entrySet()) {
      String key = e.getKey().toLowerCase(Locale.ROOT);
      if (isSparkOnly(key)) {
        continue;
      }
      options.put(key, e.getValue());
    }
    if (!options.containsKey("path")) {
      throw new BadOptionException("path", "is required: .option(\"path\", p), .load(p) or .save(p)");
    }
    return StoreConfig.of(options);
  }

  /** Whether {@code lowerCaseKey} is read by the Spark connector or Spark, not passed to core. */
  static boolean isSparkOnly(String lowerCaseKey) {
    return io.lancecontext.core.schema.ColumnOptions.isColumnOption(lowerCaseKey) || SPARK_KEYS.contains(lowerCaseKey)
        || SPARK_ONLY.stream().anyMatch(o -> o.key().equals(lowerCaseKey));
  }

  /** The value of a Spark-only option in {@code options} (keys matched case-insensitively), parsed. */
  public static <T> Optional<T> get(Map<String, String> options, ConfigOption<T> option) {
    for (Map.Entry<String, String> e : options.entrySet()) {
      if (e.getKey().equalsIgnoreCase(option.key())) {
        return Optional.of(option.parse(e.getValue()));
      }
    }
    return Optional.empty();
  }

  /** The options lower-cased by key, values as given (for {@link SparkSchemas#toSpec}'s vector options). */
  public static Map<String, String> lowerCased(Map<String, String> options) {
    Map<String, String> out = new LinkedHashMap<>();
    options.forEach((k, v) -> out.put(k.toLowerCase(Locale.ROOT), v));
    return out;
  }
}
