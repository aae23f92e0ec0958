package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * One SparkSession used as a notebook uses it: cells that write the same store with other options, one after
 * the other. Executors keep their resident stores between jobs; a job's options apply to it all the same.
 */
class SparkLongSessionTest extends SparkTest {
  @Test
  void aSecondWriteWithOtherResidentOptionsInTheSameSessionSucceedsWithThem() {
    String path = dir.resolve("notebook").toString();
    spark.range(0, 100).selectExpr("concat('k', id) AS id", "cast(id AS int) AS num_tokens").write()
        .format("lancecontext").option("path", path).option("schema", "rollout").option("schema.embedding-dim", "4")
        .option("gc.grace", "30min").option("write.batch-bytes", "8MiB").mode("append").save();
    spark.range(100, 250).selectExpr("concat('k', id) AS id", "cast(id AS int) AS num_tokens").write()
        .format("lancecontext").option("path", path).option("gc.grace", "1h").option("write.batch-bytes", "16MiB")
        .option("merge.trigger.generations", "2").option("write.commit", "immediate").mode("append").save();
    long rows = spark.read().format("lancecontext").option("path", path).option("gc.grace", "2h").load().count();
    assertEquals(250, rows);
  }
}
