package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.ColumnType;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.Test;

/**
 * Every save mode of {@code df.write.format("lancecontext").mode(m).save(p)}, path-based write distribution,
 * {@code write.tasks}, and the write and read metrics of the Spark UI.
 */
class SparkSaveModeTest extends SparkTest {
  private static String store(String name) {
    return dir.resolve(name).toString();
  }

  /** Context rows (capability tombstones): keys {@code k<from>..k<to-1>}, token_count {@code value}. */
  private static Dataset<Row> contexts(long from, long to, int value) {
    return spark.range(from, to, 1, 4).selectExpr("format_string('k%05d', id) AS id", value + " AS token_count",
        "'user' AS role");
  }

  private static org.apache.spark.sql.DataFrameWriter<Row> writer(Dataset<Row> df) {
    return df.write().format("lancecontext").option("schema", "context").option("schema.embedding-dim", "4");
  }

  private static Map<String, Object> view(String path) {
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      Map<String, Object> m = new HashMap<>();
      s.scanRecords(ScanSpec.all().withColumns(List.of("id", "token_count")))
          .forEach(r -> m.put((String) r.get("id"), r.get("token_count")));
      return m;
    }
  }

  private static Map<String, Object> expected(long from, long to, int value) {
    Map<String, Object> m = new HashMap<>();
    for (long i = from; i < to; i++) {
      m.put(String.format("k%05d", i), value);
    }
    return m;
  }

  @Test
  void errorIfExistsIsTheDefaultCreatesANewStoreAndFailsNamingThePathOfAnExistingOne() {
    String path = store("error");
    writer(contexts(0, 50, 1)).save(path);
    assertEquals(expected(0, 50, 1), view(path));
    Exception e = assertThrows(Exception.class, () -> writer(contexts(0, 10, 2)).save(path));
    assertTrue(e.getMessage().contains(path) && e.getMessage().contains("already exists"), e.getMessage());
    assertEquals(expected(0, 50, 1), view(path), "the store is unchanged");
    Exception explicit = assertThrows(Exception.class, () -> writer(contexts(0, 10, 2)).mode("errorifexists").save(path));
    assertTrue(explicit.getMessage().contains(path), explicit.getMessage());
  }

  @Test
  void aNewStoreWithoutASchemaOptionGetsOneFromTheDataFrame() {
    String path = store("derived");
    spark.range(0, 5).selectExpr("cast(id AS string) AS id", "array(1.0f, 2.0f, cast(id AS float)) AS emb",
        "cast(id AS double) * 1.5 AS score").write().format("lancecontext").option("vector.emb.dim", "3").save(path);
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertEquals(ColumnType.VECTOR, s.spec().column("emb").type());
      assertEquals(3, s.spec().column("emb").dim());
      assertEquals(ColumnType.FLOAT64, s.spec().column("score").type());
      assertEquals(5, s.count());
    }
  }

  @Test
  void anAtomicWriteIntoAUniqueIdsStoreIsRefusedBeforeAnyTaskRunsAndAnImmediateOneWrites() {
    String path = store("unique");
    String spec = "{\"key\": \"id\", \"columns\": [{\"name\": \"id\", \"type\": \"string\", \"nullable\": false}],"
        + " \"capabilities\": [\"unique-ids\"]}";
    try (ContextStore s = ContextStore.open(Map.of("path", path, "schema", spec))) {
      assertEquals(0, s.count());
    }
    Dataset<Row> rows = spark.range(0, 5).selectExpr("format_string('k%d', id) AS id");
    Exception e = assertThrows(Exception.class, () -> rows.write().format("lancecontext").mode("append").save(path));
    assertTrue(causes(e, io.lancecontext.core.error.SchemaException.class)
        && SparkWriteTest.messages(e).contains("'unique-ids'"), SparkWriteTest.messages(e));
    rows.write().format("lancecontext").option("write.commit", "immediate").mode("append").save(path);
    assertEquals(5, spark.read().format("lancecontext").load(path).count());
  }

  @Test
  void aDerivedBinaryColumnIsABlobWithTheBlobOptionAndATypoInAColumnOptionFailsNamingIt() {
    Dataset<Row> rows = spark.range(0, 3).selectExpr("cast(id AS string) AS id", "array(1.0f, 2.0f) AS emb",
        "cast(repeat('x', 100) AS binary) AS image");
    String path = store("blob-derived");
    rows.write().format("lancecontext").option("vector.emb.dim", "2").option("blob.image", "true").save(path);
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertTrue(s.spec().column("image").blob(), "a blob column, as Flink's 'blob.<col>' makes one");
      assertEquals(100, ((byte[]) s.get("1").orElseThrow().get("image")).length);
    }
    String typo = store("typo");
    Exception e = assertThrows(Exception.class, () -> rows.write().format("lancecontext").option("vector.emb.dimm", "2")
        .save(typo));
    assertTrue(SparkWriteTest.messages(e).contains("vector.emb.dimm") && SparkWriteTest.messages(e).contains("unknown option"),
        SparkWriteTest.messages(e));
    assertTrue(!java.nio.file.Files.exists(java.nio.file.Path.of(typo, "_versions")), "no store was created");
  }

  @Test
  void aDerivedVectorColumnTakesItsMetricFromTheOptionInAnyCaseAndAnUnknownMetricFailsNamingIt() {
    Dataset<Row> rows = spark.range(0, 4).selectExpr("cast(id AS string) AS id", "array(1.0f, cast(id AS float)) AS emb",
        "array(2.0f, 3.0f) AS other");
    String path = store("metric");
    rows.write().format("lancecontext").option("vector.emb.dim", "2").option("vector.emb.metric", "L2")
        .option("vector.other.dim", "2").save(path);
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertEquals(io.lancecontext.core.schema.VectorMetric.L2, s.spec().column("emb").metric());
      assertEquals(io.lancecontext.core.schema.VectorMetric.COSINE, s.spec().column("other").metric(), "the default");
    }
    assertEquals("l2", spark.read().format("lancecontext").load(path).schema().apply("emb").metadata()
        .getString(SparkSchemas.VECTOR_METRIC));
    // given again to an existing store, the options must agree with it (they used to be ignored)
    rows.write().format("lancecontext").option("vector.emb.dim", "2").option("vector.emb.metric", "l2")
        .mode("append").save(path);
    Exception other = assertThrows(Exception.class, () -> rows.selectExpr("concat(id, 'x') AS id", "emb", "other")
        .write().format("lancecontext").option("vector.emb.metric", "dot").mode("append").save(path));
    assertTrue(SparkSaveModeTest.causes(other, io.lancecontext.core.error.BadOptionException.class)
        && SparkWriteTest.messages(other).contains("vector.emb.metric"), SparkWriteTest.messages(other));
    assertEquals(4, spark.read().format("lancecontext").load(path).count(), "nothing of the refused write is visible");
    String bad = store("metric-bad");
    Exception e = assertThrows(Exception.class, () -> rows.write().format("lancecontext").option("vector.emb.dim", "2")
        .option("vector.emb.metric", "manhattan").save(bad));
    assertTrue(SparkWriteTest.messages(e).contains("vector.emb.metric") && SparkWriteTest.messages(e).contains("manhattan"),
        SparkWriteTest.messages(e));
    assertTrue(!java.nio.file.Files.exists(java.nio.file.Path.of(bad, "_versions")), "no store was created");
  }

  @Test
  void aBatchSaveTakesThePathFromTheOption() {
    String path = store("path-option");
    writer(contexts(0, 30, 1)).option("path", path).mode("append").save();
    assertEquals(expected(0, 30, 1), view(path));
    writer(contexts(20, 40, 2)).option("path", path).mode("append").save();
    Map<String, Object> want = expected(0, 20, 1);
    want.putAll(expected(20, 40, 2));
    assertEquals(want, view(path));
    assertEquals(40, spark.read().format("lancecontext").option("path", path).load().count());
  }

  @Test
  void ignoreLeavesAnExistingStoreUnchangedAndCreatesAMissingOne() {
    String path = store("ignore");
    writer(contexts(0, 20, 1)).mode("ignore").save(path);
    assertEquals(expected(0, 20, 1), view(path));
    writer(contexts(0, 40, 2)).mode("ignore").save(path);
    assertEquals(expected(0, 20, 1), view(path));
  }

  @Test
  void appendUpserts() {
    String path = store("append");
    writer(contexts(0, 20, 1)).mode("append").save(path);
    writer(contexts(10, 30, 2)).mode("append").save(path);
    Map<String, Object> want = expected(0, 10, 1);
    want.putAll(expected(10, 30, 2));
    assertEquals(want, view(path));
  }

  @Test
  void overwriteReplacesTheContentsAtOnceForAPollingReader() throws Exception {
    String path = store("overwrite");
    writer(contexts(0, 300, 1)).mode("append").save(path);
    Map<String, Object> before = expected(0, 300, 1);
    Map<String, Object> after = expected(200, 400, 2);
    AtomicBoolean done = new AtomicBoolean();
    List<String> bad = new CopyOnWriteArrayList<>();
    AtomicInteger[] seen = {new AtomicInteger(), new AtomicInteger()};
    Thread reader = new Thread(() -> {
      boolean last = false;
      while (!last) {
        last = done.get();
        Map<String, Object> v = view(path);
        if (v.equals(before)) {
          seen[0].incrementAndGet();
        } else if (v.equals(after)) {
          seen[1].incrementAndGet();
        } else {
          bad.add(v.size() + " rows");
        }
      }
    });
    reader.start();
    writer(contexts(200, 400, 2)).mode("overwrite").save(path);
    done.set(true);
    reader.join(120_000);
    assertTrue(bad.isEmpty(), "a reader saw a half state or an empty store: " + bad);
    assertTrue(seen[1].get() > 0, "the reader saw the new contents");
    assertEquals(after, view(path));
    assertEquals(200, spark.read().format("lancecontext").load(path).count());
  }

  @Test
  void overwriteOfAStoreWithoutTombstonesReplacesItsContentsAndANewOneIsCreated() {
    String path = store("overwrite-rollout");
    Dataset<Row> rows = spark.range(0, 10).selectExpr("format_string('k%05d', id) AS id", "1.0 AS reward");
    rows.write().format("lancecontext").option("schema", "rollout").mode("overwrite").save(path);  // creates it
    assertEquals(10, spark.read().format("lancecontext").load(path).count());
    rows.limit(3).selectExpr("id", "2.0 AS reward").write().format("lancecontext").mode("overwrite").save(path);
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertEquals(3, s.count());
      assertEquals(2.0, (Double) s.get("k00001").orElseThrow().get("reward"));
      assertTrue(s.get("k00003").isEmpty(), "a key the overwrite did not write is gone");
      s.flush();
      assertEquals(3, s.count(), "and stays gone once merged");
    }
  }

  /** Set by the test below: the store a write task adds a row to (local mode: tasks run in this JVM). */
  static volatile String concurrentStore;

  /**
   * An immediate writer's row acknowledged while an overwrite job runs, before the job commits, is read by the
   * commit's replace and so replaced: the store holds what the overwrite wrote. (Core's ReplacePublishTest covers
   * rows acknowledged during the commit itself.)
   */
  @Test
  void aRowAnotherWriterAddsWhileAnOverwriteRunsIsReplacedWithTheRest() {
    String path = store("overwrite-raced-rollout");
    try (ContextStore s = ContextStore.open(Map.of("path", path, "schema", "rollout"))) {
      s.add(List.of(Map.of("id", "old", "reward", 1.0)));
    }
    concurrentStore = path;
    spark.udf().register("addARowToTheStoreOnce", (org.apache.spark.sql.api.java.UDF1<Long, Long>) i -> {
      String p = concurrentStore;
      if (p != null && i == 0) {
        concurrentStore = null;
        try (ContextStore s = ContextStore.open(Map.of("path", p))) {
          s.add(List.of(Map.of("id", "other-writer", "reward", 7.0)));  // another writer, while the job runs
        }
      }
      return i;
    }, org.apache.spark.sql.types.DataTypes.LongType);
    Dataset<Row> rows = spark.range(0, 10).selectExpr("format_string('k%05d', addARowToTheStoreOnce(id)) AS id",
        "1.0 AS reward");
    rows.write().format("lancecontext").mode("overwrite").save(path);
    assertEquals(null, concurrentStore, "the other writer ran");
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertEquals(10, s.count(), "exactly the overwrite's rows");
      assertTrue(s.get("other-writer").isEmpty() && s.get("old").isEmpty());
    }
  }

  @Test
  void overwriteInImmediateModeIsRefusedNamingTheOption() {
    String path = store("overwrite-immediate");
    writer(contexts(0, 10, 1)).mode("append").save(path);
    Exception e = assertThrows(Exception.class,
        () -> writer(contexts(0, 5, 2)).option("write.commit", "immediate").mode("overwrite").save(path));
    assertTrue(SparkWriteTest.messages(e).contains("write.commit"), SparkWriteTest.messages(e));
    assertEquals(expected(0, 10, 1), view(path));
  }

  /**
   * With the default {@code write.tasks} every task writes exactly one bucket, and every bucket is written by one
   * task. Clustering by the bucket number alone left the task to the hash of that number: with 4 shards Spark sent
   * buckets 0, 1 and 3 to one task and bucket 2 to another, two tasks wrote nothing, and one wrote three quarters
   * of the rows. Read from the staged parts, whose names carry a hash of the task's part id, while merges are held
   * off.
   */
  @Test
  void eachTaskOfAClusteredWriteWritesOneBucket() throws java.io.IOException {
    for (int shards : new int[] {4, 3}) {
      String path = store("one-bucket-per-task-" + shards);
      writer(contexts(0, 4_000, 1)).option("shards", Integer.toString(shards))
          .option("merge.trigger.generations", "1000").option("merge.trigger.interval", "1h").mode("append").save(path);
      Map<String, java.util.Set<String>> writersByBucket = new java.util.TreeMap<>();
      for (java.nio.file.Path part : SparkJobKillTest.stagedParts(path)) {
        // p<millis>-<hash of the part id>-<index>-<random>
        writersByBucket.computeIfAbsent(part.getParent().getFileName().toString(), b -> new java.util.TreeSet<>())
            .add(part.getFileName().toString().split("-")[1]);
      }
      assertEquals(shards, writersByBucket.size(), "every bucket written: " + writersByBucket);
      java.util.Set<String> writers = new java.util.HashSet<>();
      writersByBucket.values().forEach(w -> {
        assertEquals(1, w.size(), "one task per bucket: " + writersByBucket);
        writers.addAll(w);
      });
      assertEquals(shards, writers.size(), "one bucket per task: " + writersByBucket);
      assertEquals(4_000, view(path).size());
    }
  }

  @Test
  void pathBasedWritesAreClusteredByBucketIntoOneTaskPerShardOrWriteTasks() {
    String path = store("clustered");
    String plan = SparkPlans.text(SparkPlans.during(spark,
        () -> writer(contexts(0, 100, 1)).option("shards", "3").mode("append").save(path)));
    assertTrue(plan.contains("lancecontext.bucket") && plan.contains("3, id") && plan.contains("), 3)"),
        "clustered by bucket(3, id) into 3 tasks: " + plan);
    String tasks = SparkPlans.text(SparkPlans.during(spark,
        () -> writer(contexts(0, 100, 2)).option("write.tasks", "2").mode("append").save(path)));
    assertTrue(tasks.contains("lancecontext.bucket") && tasks.contains("), 2)"), "write.tasks = 2: " + tasks);
    assertEquals(expected(0, 100, 2), view(path));
    Exception bad = assertThrows(Exception.class,
        () -> writer(contexts(0, 1, 2)).option("write.tasks", "zero").mode("append").save(path));
    assertTrue(SparkWriteTest.messages(bad).contains("write.tasks"), SparkWriteTest.messages(bad));
  }

  @Test
  void writesAndReadsReportTheirMetrics() {
    String path = store("metrics");
    List<SparkPlan> write = SparkPlans.during(spark, () -> writer(contexts(0, 120, 1)).mode("append").save(path));
    Map<String, Long> w = SparkPlans.metrics(write);
    assertEquals(120L, w.get(SparkMetrics.ROWS_WRITTEN), w.toString());
    assertEquals(1L, w.get(SparkMetrics.PUBLISHED_TRANSACTIONS), w.toString());
    assertTrue(w.get(SparkMetrics.STAGED_PARTS) >= 4 && w.get(SparkMetrics.PUTS) >= 4, "a part per bucket at least: " + w);
    assertTrue(w.get(SparkMetrics.BYTES_WRITTEN) > 120, w.toString());

    Map<String, Long> fresh = SparkPlans.metrics(SparkPlans.during(spark,
        () -> spark.read().format("lancecontext").load(path).collectAsList()));
    assertEquals(120L, fresh.get(SparkMetrics.FRESH_ROWS_READ), fresh.toString());
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertTrue(s.flush().complete());
    }
    Map<String, Long> base = SparkPlans.metrics(SparkPlans.during(spark,
        () -> spark.read().format("lancecontext").load(path).collectAsList()));
    assertEquals(0L, base.get(SparkMetrics.FRESH_ROWS_READ), base.toString());
    assertTrue(base.get(SparkMetrics.FRAGMENTS_READ) >= 1, base.toString());
  }

  static boolean causes(Throwable t, Class<? extends Throwable> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return true;
      }
    }
    return false;
  }
}
