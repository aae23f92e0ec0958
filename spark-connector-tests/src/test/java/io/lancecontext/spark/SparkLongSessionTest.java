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

  @Test
  void aDataFramesSecondActionLongAfterGcGraceReadsItsPlanWhileMaintenanceRewroteEveryTier() throws Exception {
    String path = dir.resolve("cached-plan").toString();
    java.util.Map<String, String> options = java.util.Map.of("path", path, "schema", "rollout",
        "schema.embedding-dim", "4", "gc.grace", "1s", "merge.trigger.interval", "1d");
    try (io.lancecontext.core.ContextStore store = io.lancecontext.core.ContextStore.open(options)) {
      for (int round = 0; round < 2; round++) {
        java.util.List<java.util.Map<String, Object>> rows = new java.util.ArrayList<>();
        for (int i = 0; i < 50; i++) {
          rows.add(java.util.Map.of("id", "k" + i, "num_tokens", round * 100 + i));
        }
        store.add(rows);
        store.seal();
        store.merge();
      }
      store.add(java.util.List.of(java.util.Map.of("id", "k3", "num_tokens", -3)));
      store.seal();                                                                   // an unmerged generation
      store.add(java.util.List.of(java.util.Map.of("id", "k4", "num_tokens", -4)));  // the WAL tail
    }
    org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> df = spark.read().format("lancecontext").options(options)
        .load().select("id", "num_tokens");
    java.util.List<org.apache.spark.sql.Row> first = df.collectAsList();
    assertEquals(50, first.size());
    try (io.lancecontext.core.ContextStore store = io.lancecontext.core.ContextStore.open(options)) {
      for (int round = 2; round < 5; round++) {
        java.util.List<java.util.Map<String, Object>> rows = new java.util.ArrayList<>();
        for (int i = 0; i < 80; i++) {
          rows.add(java.util.Map.of("id", "k" + i, "num_tokens", round * 100 + i));
        }
        store.add(rows);
        store.seal();
        store.merge();
      }
      store.compact();
      Thread.sleep(2_500);  // gc.grace, and then some
      store.gc();
    }
    io.lancecontext.core.ContextStore.closeAllResident();  // nothing cached in this JVM serves the next read
    java.util.List<org.apache.spark.sql.Row> again = df.collectAsList();  // same plan: the same snapshot
    assertEquals(new java.util.HashSet<>(first), new java.util.HashSet<>(again));
    assertEquals(80, spark.read().format("lancecontext").options(options).load().count(), "a new read sees the new rows");
  }
}
