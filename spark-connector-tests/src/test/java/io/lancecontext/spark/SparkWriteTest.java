package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import io.lancecontext.core.read.ScanSpec;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code df.write.format("lancecontext").mode("append")}: upserts by key, checks columns before any task runs. */
class SparkWriteTest extends SparkTest {
  @BeforeAll
  static void failureUdfs() {
    spark.udf().register("failFirstAttemptOfPartition0After", (UDF1<Long, Long>) i -> {
      TaskContext t = TaskContext.get();
      if (t.attemptNumber() == 0 && t.partitionId() == 0 && i % 1000 == 250) {
        throw new IllegalStateException("injected failure after part of the partition was written");
      }
      return i;
    }, DataTypes.LongType);
    spark.udf().register("failPartition0Always", (UDF1<Long, Long> ) i -> {
      if (TaskContext.get().partitionId() == 0 && i % 1000 == 250) {
        throw new IllegalStateException("injected failure of every attempt of partition 0");
      }
      return i;
    }, DataTypes.LongType);
  }

  private static Dataset<Row> rollouts(long n, double reward) {
    return spark.range(0, n, 1, 4).selectExpr("format_string('k%05d', id) AS id", "concat('r', id % 5) AS rollout_id",
        reward + " + id / 1000.0 AS reward", "array_repeat(cast(id AS float), 8) AS embedding");
  }

  private static String store(String name) {
    return dir.resolve(name).toString();
  }

  private static void append(Dataset<Row> df, String path) {
    df.write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "8")
        .option("write.batch-rows", "64").mode("append").save(path);
  }

  /**
   * An append without the bucket shuffle, so that the injected failures (a UDF in the DataFrame) happen in the
   * write tasks themselves, after they wrote part of their partition.
   */
  private static void appendInWriteTasks(Dataset<Row> df, String path) {
    df.write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "8")
        .option("write.batch-rows", "64").option("write.distribution", "none").mode("append").save(path);
  }

  @Test
  void appendUpsertsByKeyAndReadsBack() {
    String path = store("upsert");
    append(rollouts(1000, 0.0), path);
    append(rollouts(300, 5.0), path);  // replaces keys 0..299
    Dataset<Row> back = spark.read().format("lancecontext").load(path);
    assertEquals(1000, back.count());
    assertEquals(300, back.filter("reward >= 5.0").count());
    Row r = back.filter("id = 'k00042'").select("reward", "embedding").first();
    assertEquals(5.042, r.getDouble(0), 1e-9);
    assertEquals(8, r.getList(1).size());
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertEquals(1000, s.count(), "core sees the same rows");
    }
  }

  /**
   * Strings are copied from where they lie inside Spark's rows (no copy of their own): keys and values of one to
   * four bytes per character, of every length, come back exactly, through Spark and through core.
   */
  @Test
  void nonAsciiKeysAndStringsRoundTripExactly() {
    String path = store("utf8");
    Dataset<Row> df = spark.range(0, 500, 1, 3).selectExpr(
        "concat('ключ-', id, repeat('é', cast(id % 7 AS int)), '-🙂') AS id",
        "concat(repeat('日本語', cast(id % 5 AS int)), id) AS rollout_id", "id / 10.0 AS reward",
        "array_repeat(cast(id AS float), 8) AS embedding");
    append(df, path);
    Map<String, String> want = new HashMap<>();
    df.select("id", "rollout_id").collectAsList().forEach(r -> want.put(r.getString(0), r.getString(1)));
    Map<String, String> back = new HashMap<>();
    spark.read().format("lancecontext").load(path).select("id", "rollout_id").collectAsList()
        .forEach(r -> back.put(r.getString(0), r.getString(1)));
    assertEquals(want, back);
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      String key = "ключ-13éééééé-🙂";
      assertEquals("日本語日本語日本語13", s.get(key).orElseThrow().get("rollout_id"));
    }
  }

  @Test
  void aTaskThatFailsAfterWritingPartOfItsPartitionIsRetriedWithoutDuplicatesOrLoss() {
    String path = store("retry");
    // the UDF runs in the write stage (a filter on it), failing partition 0's first attempt after 250 rows
    Dataset<Row> withFailure = rollouts(4000, 1.0).where("failFirstAttemptOfPartition0After(cast(substr(id, 2) AS bigint)) >= 0");
    List<String> failed = FailedTasks.during(() -> appendInWriteTasks(withFailure, path));
    assertInjectedFailureFiredOnce(failed);
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertEquals(4000, s.count());
      assertEquals(Optional.of(1.25), s.get("k00250").map(m -> (Double) m.get("reward")));
    }
    assertSameView(rewards(0, 4000, 1.0), view(path), "every key once, with the job's value");
  }

  @Test
  void inImmediateModeATaskThatFailsAfterItsFirstPutsIsRetriedToTheExactResult() {
    String path = store("immediate-retry");
    append(rollouts(10, 0.0), path);
    // partition 0's first attempt puts its first 64-row batches (visible at once in immediate mode), then fails
    Dataset<Row> withFailure = rollouts(4000, 1.0).where("failFirstAttemptOfPartition0After(cast(substr(id, 2) AS bigint)) >= 0");
    List<String> failed = FailedTasks.during(() -> appendImmediately(withFailure, path));
    assertInjectedFailureFiredOnce(failed);
    assertSameView(rewards(0, 4000, 1.0), view(path), "the retry rewrote the failed attempt's keys; nothing lost, nothing extra");
  }

  @Test
  void rerunningAFailedImmediateJobGivesTheExactResultAndSoDoesRunningItAgain() {
    String path = store("immediate-rerun");
    append(rollouts(10, 0.0), path);
    // 4 partitions of 500 rows: partition 0 puts 3 batches of 64 rows before its row 250 fails it
    Dataset<Row> failing = rollouts(2000, 1.0).where("failPartition0Always(cast(substr(id, 2) AS bigint)) >= 0");
    assertThrows(Exception.class, () -> appendImmediately(failing, path));
    Map<String, Double> partial = view(path);
    assertTrue(partial.size() > 10 && partial.size() < 2000, "the failed job left the rows of the tasks that ran: " + partial.size());
    Map<String, Double> want = rewards(0, 2000, 1.0);
    appendImmediately(rollouts(2000, 1.0), path);
    assertSameView(want, view(path), "the rerun completes the failed job exactly");
    appendImmediately(rollouts(2000, 1.0), path);
    assertSameView(want, view(path), "running it once more changes nothing");
  }

  @Test
  void aFailedJobLeavesNothingOfItVisible() {
    String path = store("atomic");
    append(rollouts(10, 0.0), path);
    Dataset<Row> failing = rollouts(4000, 1.0).where("failPartition0Always(cast(substr(id, 2) AS bigint)) >= 0");
    assertThrows(Exception.class, () -> appendInWriteTasks(failing, path));
    assertUnchanged(path, 10, 0.0);  // the three partitions that completed staged rows nobody sees
  }

  @Test
  void inImmediateModeTheRowsOfTasksThatRanStayWhenTheJobFails() {
    String path = store("immediate");
    append(rollouts(10, 0.0), path);
    Dataset<Row> failing = rollouts(4000, 1.0).where("failPartition0Always(cast(substr(id, 2) AS bigint)) >= 0");
    assertThrows(Exception.class, () -> failing.write().format("lancecontext").option("write.commit", "immediate")
        .option("write.batch-rows", "64").option("write.distribution", "none").mode("append").save(path));
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertTrue(s.count() > 10, "rows of the tasks that ran are visible: " + s.count());
    }
  }

  @Test
  void aWrongVectorLengthFailsTheWriteNamingTheColumnAndLeavesTheStoreUnchanged() {
    String path = store("veclen");
    append(rollouts(10, 0.0), path);
    Dataset<Row> bad = rollouts(400, 1.0).selectExpr("id", "rollout_id", "reward",
        "CASE WHEN id = 'k00250' THEN array_repeat(cast(1 AS float), 7) ELSE embedding END AS embedding");
    Exception e = assertThrows(Exception.class, () -> append(bad, path));
    assertTrue(messages(e).contains("embedding"), messages(e));
    assertUnchanged(path, 10, 0.0);  // atomic: the tasks that staged rows published nothing
  }

  @Test
  void aNullVectorElementFailsTheWriteNamingTheColumnAndLeavesTheStoreUnchanged() {
    String path = store("vecnull");
    append(rollouts(10, 0.0), path);
    Dataset<Row> bad = rollouts(400, 1.0).selectExpr("id", "rollout_id", "reward",
        "CASE WHEN id = 'k00250' THEN array(cast(1 AS float), cast(NULL AS float), cast(1 AS float), cast(1 AS float),"
            + " cast(1 AS float), cast(1 AS float), cast(1 AS float), cast(1 AS float)) ELSE embedding END AS embedding");
    Exception e = assertThrows(Exception.class, () -> append(bad, path));
    assertTrue(messages(e).contains("SchemaException: column 'embedding': null element at index 1"), messages(e));
    assertUnchanged(path, 10, 0.0);
  }

  @Test
  void inImmediateModeAWrongVectorLengthFailsItsTaskNamingTheColumnAndTheRowsOfOtherTasksStay() {
    String path = store("veclen-immediate");
    append(rollouts(10, 0.0), path);
    // k00250 is in partition 2 of 4. local[2] runs partitions 0 and 1 first, so partition 2 starts only once one of
    // them finished; the other may still run when partition 2's second attempt fails the job, and is then killed
    Dataset<Row> bad = rollouts(400, 1.0).selectExpr("id", "rollout_id", "reward",
        "CASE WHEN id = 'k00250' THEN array_repeat(cast(1 AS float), 7) ELSE embedding END AS embedding");
    Exception e = assertThrows(Exception.class, () -> appendImmediately(bad, path));
    assertTrue(messages(e).contains("embedding"), messages(e));
    Map<String, Double> v = view(path);
    boolean first = v.keySet().containsAll(rewards(0, 100, 1.0).keySet());
    boolean second = v.keySet().containsAll(rewards(100, 200, 1.0).keySet());
    assertTrue(first || second, "a finished task's rows stay: " + v.size() + " rows");
    Map<String, Double> written = rewards(0, 400, 1.0);
    Map<String, Double> before = rewards(0, 10, 0.0);
    v.forEach((key, reward) -> assertTrue(reward.equals(written.get(key)) || reward.equals(before.get(key)),
        key + " holds the new write's row or the one before it: " + reward));
    assertFalse(v.containsKey("k00250"), "the refused row is not written");
  }

  @Test
  void anUnknownColumnFailsBeforeAnyTaskNamingIt() {
    String path = store("unknown");
    append(rollouts(10, 0.0), path);
    Exception e = assertThrows(Exception.class, () -> append(rollouts(10, 1.0).withColumnRenamed("reward", "rewrd"), path));
    assertSchemaError(e, "rewrd");
    assertUnchanged(path, 10, 0.0);
  }

  @Test
  void aMissingKeyColumnFailsNamingIt() {
    String path = store("nokey");
    append(rollouts(10, 0.0), path);
    Exception e = assertThrows(Exception.class, () -> append(rollouts(10, 1.0).drop("id"), path));
    assertSchemaError(e, "`id`");
    assertUnchanged(path, 10, 0.0);
  }

  @Test
  void aWrongTypeFailsNamingTheColumn() {
    String path = store("type");
    append(rollouts(10, 0.0), path);
    Exception e = assertThrows(Exception.class,
        () -> append(rollouts(10, 1.0).withColumn("reward", org.apache.spark.sql.functions.lit("high")), path));
    assertSchemaError(e, "reward");
    assertUnchanged(path, 10, 0.0);
  }

  @Test
  void aReservedColumnNameFailsNamingIt() {
    String path = store("reserved");
    append(rollouts(10, 0.0), path);
    Exception e = assertThrows(Exception.class,
        () -> append(rollouts(10, 1.0).withColumn("_lc_seq", org.apache.spark.sql.functions.lit(1L)), path));
    assertSchemaError(e, "_lc_seq");
    assertUnchanged(path, 10, 0.0);
  }

  @Test
  void anUnknownWriteOptionFailsNamingItAndWritesNothing() {
    String path = store("badoption");
    append(rollouts(10, 0.0), path);
    Exception e = assertThrows(Exception.class, () -> rollouts(20, 1.0).write().format("lancecontext")
        .option("wrte.batch-rows", "5").mode("append").save(path));
    assertTrue(SparkSaveModeTest.causes(e, io.lancecontext.core.error.BadOptionException.class) && messages(e).contains("wrte.batch-rows"),
        messages(e));
    assertUnchanged(path, 10, 0.0);
  }

  @Test
  void aStoreIsCreatedOnlyWithASchema() {
    String path = store("noschema");
    Exception e = assertThrows(Exception.class,
        () -> rollouts(10, 0.0).write().format("lancecontext").mode("append").save(path));
    assertTrue(messages(e).contains("schema"), messages(e));
    assertFalse(Files.exists(Path.of(path)), "nothing was created");
  }

  private static void appendImmediately(Dataset<Row> df, String path) {
    df.write().format("lancecontext").option("write.commit", "immediate").option("write.batch-rows", "64")
        .option("write.distribution", "none").mode("append").save(path);
  }

  /** The store's view, key -> reward, read through core (every row of every tier, each key once). */
  static Map<String, Double> view(String path) {
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      Map<String, Double> m = new HashMap<>();
      for (Map<String, Object> r : s.scanRecords(ScanSpec.all().withColumns(List.of("id", "reward")))) {
        assertEquals(null, m.put((String) r.get("id"), (Double) r.get("reward")), "a key appears once: " + r.get("id"));
      }
      return m;
    }
  }

  /** What {@link #rollouts} writes for keys {@code from..to-1}: key -> reward. */
  static Map<String, Double> rewards(long from, long to, double reward) {
    Map<String, Double> m = new HashMap<>();
    for (long i = from; i < to; i++) {
      // Spark computes the reward in decimal ("1.0 + id / 1000.0"), then casts it to double
      m.put(String.format("k%05d", i), java.math.BigDecimal.valueOf(reward).add(java.math.BigDecimal.valueOf(i, 3)).doubleValue());
    }
    return m;
  }

  /** {@code got} equals {@code want}; on a difference, says how (sizes, a few keys missing, extra or with other values). */
  static <V> void assertSameView(Map<String, V> want, Map<String, V> got, String what) {
    if (want.equals(got)) {
      return;
    }
    List<String> missing = want.keySet().stream().filter(k -> !got.containsKey(k)).sorted().limit(5).toList();
    List<String> extra = got.keySet().stream().filter(k -> !want.containsKey(k)).sorted().limit(5).toList();
    List<String> other = want.keySet().stream().filter(k -> got.containsKey(k) && !want.get(k).equals(got.get(k)))
        .sorted().limit(5).map(k -> k + ": want " + want.get(k) + ", got " + got.get(k)).toList();
    throw new AssertionError(what + ": want " + want.size() + " keys, got " + got.size() + "; missing " + missing
        + ", extra " + extra + ", other values " + other);
  }

  /** Exactly one task attempt failed, with the injected failure (so the retry path really ran). */
  private static void assertInjectedFailureFiredOnce(List<String> failed) {
    assertEquals(1, failed.size(), "one failed task attempt: " + failed);
    assertTrue(failed.get(0).contains("injected failure after part of the partition was written"), failed.get(0));
  }

  /** Records the failures of the task attempts that end while a block runs (a SparkListener). */
  static final class FailedTasks extends SparkListener {
    private final List<String> failures = new CopyOnWriteArrayList<>();

    static List<String> during(Runnable body) {
      FailedTasks listener = new FailedTasks();
      spark.sparkContext().addSparkListener(listener);
      try {
        body.run();
        spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
      } catch (TimeoutException e) {
        throw new AssertionError("Spark's listener bus did not drain", e);
      } finally {
        spark.sparkContext().removeSparkListener(listener);
      }
      return List.copyOf(listener.failures);
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() instanceof ExceptionFailure f) {
        failures.add("stage " + end.stageId() + " attempt " + end.taskInfo().attemptNumber() + ": " + f.description());
      }
    }
  }

  private static void assertUnchanged(String path, long rows, double rewardBase) {
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertEquals(rows, s.count());
      assertEquals(Optional.of(rewardBase + 0.001), s.get("k00001").map(m -> (Double) m.get("reward")));
    }
  }

  /** Spark's analyzer refuses the write before any task runs, naming the column. */
  private static void assertSchemaError(Throwable e, String column) {
    assertTrue(e instanceof AnalysisException && e.getMessage().contains(column), messages(e));
  }

  static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append(" | ");
    }
    return sb.toString();
  }
}
