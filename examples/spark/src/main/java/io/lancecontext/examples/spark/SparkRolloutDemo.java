package io.lancecontext.examples.spark;

import io.lancecontext.core.ContextStore;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The demo's Spark step: a local Spark job writes {@code rows} rollouts (one row per completion, groups of
 * {@value #GROUP} completions per prompt, four policy versions) into a {@code rollout} store through
 * {@code format("lancecontext")} (one atomic job), reads the store back and prints, with Spark SQL, per-policy
 * reward statistics and a GRPO-style group-advantage table (advantage = (reward - mean reward of its group) /
 * std of its group). Ids are deterministic, so a rerun upserts the same rows. Prints one line per stage.
 * Usage: {@code SparkRolloutDemo [store-dir] [rows]}.
 */
public final class SparkRolloutDemo {
  static final int GROUP = 8;

  private SparkRolloutDemo() {}

  public static void main(String[] args) {
    Path dir = Paths.get(args.length > 0 ? args[0] : "demo-store-spark").toAbsolutePath();
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 200_000L;
    Progress progress = new Progress(5);
    progress.stage("starting Spark (local[2], no UI)");
    SparkSession spark = SparkSession.builder()
        .master("local[2]")
        .appName("lancecontext-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate();
    try {
      run(spark, dir.toString(), rows, progress);
    } finally {
      ContextStore.closeAllResident();
      spark.stop();
    }
    progress.done();
  }

  static void run(SparkSession spark, String path, long rows, Progress progress) {
    progress.stage(String.format(Locale.ROOT, "writing %,d rollouts (%,d groups of %d) to %s, one atomic job", rows,
        rows / GROUP, GROUP, path));
    rollouts(spark, rows).write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "8")
        .mode("append").save(path);

    progress.stage("reading the store back");
    Dataset<Row> store = spark.read().format("lancecontext").load(path);
    store.createOrReplaceTempView("rollouts");
    long count = spark.sql("SELECT count(*) FROM rollouts WHERE prompt_id LIKE 'demo-%'").first().getLong(0);
    System.out.printf(Locale.ROOT, "  %,d demo rollouts in the store%n", count);

    progress.stage("per-policy reward statistics (Spark SQL)");
    spark.sql("""
        SELECT policy_version AS policy, count(*) AS rollouts,
               round(avg(reward), 4) AS mean_reward, round(stddev(reward), 4) AS std_reward,
               round(percentile_approx(reward, 0.5), 4) AS p50_reward,
               round(avg(CASE WHEN reward >= 0.7 THEN 1.0 ELSE 0.0 END), 4) AS solved
        FROM rollouts WHERE prompt_id LIKE 'demo-%'
        GROUP BY policy_version ORDER BY policy_version""").show(false);

    progress.stage("GRPO group advantages: (reward - group mean) / group std");
    spark.sql("""
        SELECT group_id, rollout_id, policy_version, reward,
               (reward - avg(reward) OVER g) / (stddev_pop(reward) OVER g + 1e-6) AS advantage
        FROM rollouts WHERE prompt_id LIKE 'demo-%'
        WINDOW g AS (PARTITION BY group_id)""").createOrReplaceTempView("advantages");
    spark.sql("""
        SELECT group_id, rollout_id, policy_version AS policy, round(reward, 4) AS reward,
               round(advantage, 3) AS advantage
        FROM advantages WHERE group_id IN ('demo-g000000', 'demo-g000001')
        ORDER BY group_id, advantage DESC""").show(2 * GROUP, false);
    spark.sql("""
        SELECT policy_version AS policy, count(DISTINCT group_id) AS groups,
               round(avg(abs(advantage)), 3) AS mean_abs_advantage,
               round(max(advantage), 3) AS max_advantage, round(min(advantage), 3) AS min_advantage
        FROM advantages GROUP BY policy_version ORDER BY policy_version""").show(false);
  }

  /** {@code rows} rollouts: group {@code g} = prompt {@code g}, policy version {@code g % 4}, rewards rising with it. */
  static Dataset<Row> rollouts(SparkSession spark, long rows) {
    return spark.range(0, rows).selectExpr(
        "format_string('demo-r%07d', id) AS id",
        "format_string('demo-r%07d', id) AS rollout_id",
        "format_string('demo-g%06d', id div " + GROUP + ") AS group_id",
        "format_string('demo-p%06d', id div " + GROUP + ") AS prompt_id",
        "(id div " + GROUP + ") % 4 AS policy_version",
        "element_at(array('qwen2.5-7b-instruct', 'llama-3.1-8b-instruct'), cast(id % 2 AS int) + 1) AS model_name",
        "'math' AS environment",
        "0 AS sequence_order",
        "true AS done",
        "concat('completion ', id, ' for prompt ', id div " + GROUP + ") AS text_payload",
        "cast(least(1.0, greatest(0.0, 0.25 + 0.12 * ((id div " + GROUP + ") % 4)"
            + " + 0.35 * (pmod(hash(id, 7), 1000) / 1000.0 - 0.5)"
            + " + 0.2 * (pmod(hash(id div " + GROUP + ", 11), 1000) / 1000.0 - 0.5))) AS double) AS reward");
  }

  /** One line per stage: {@code [spark 2/5 +1.3s] ...}. */
  static final class Progress {
    private final int stages;
    private final long started = System.nanoTime();
    private int stage;

    Progress(int stages) {
      this.stages = stages;
    }

    void stage(String what) {
      stage++;
      System.out.printf(Locale.ROOT, "[spark %d/%d +%.1fs] %s%n", stage, stages, seconds(), what);
      System.out.flush();
    }

    void done() {
      System.out.printf(Locale.ROOT, "[spark done +%.1fs]%n", seconds());
    }

    private double seconds() {
      return (System.nanoTime() - started) / 1e9;
    }
  }
}
