package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An atomic batch write (the default) killed midway, while its tasks are staging, leaves the store as it was:
 * cancelled by Spark (the job group cancelled from another thread), or its driver JVM SIGKILLed. Garbage
 * collection then removes what the tasks staged, and a rerun gives the job's exact result.
 */
class SparkJobKillTest extends SparkTest {
  /** Rows of partition {@code p} (of 4) reach the blocking UDF at {@code p * 1000 + BLOCK_AT}, after staging parts. */
  static final int BLOCK_AT = 500;
  static final int ROWS = 4000;
  /** Task attempts blocked in the UDF so far (local mode: the tasks run in this JVM). */
  static final AtomicInteger BLOCKED = new AtomicInteger();

  /** Set in the child driver: a blocking task says so on stdout. */
  static volatile boolean announce;

  @BeforeAll
  static void blockingUdf() {
    register(spark);
  }

  /**
   * {@code blockMidPartition(i)}: at row {@code BLOCK_AT} of each partition, counts (and announces) the block and
   * waits until the task is killed (at most 120 s); other rows pass.
   */
  static void register(SparkSession s) {
    s.udf().register("blockMidPartition", (UDF1<Long, Long>) i -> {
      if (i % 1000 == BLOCK_AT) {
        BLOCKED.incrementAndGet();
        if (announce) {
          System.out.println("blocked " + TaskContext.getPartitionId());
          System.out.flush();
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < end) {
          TaskContext.get().killTaskIfInterrupted();
          Thread.sleep(20);
        }
        throw new IllegalStateException("the blocked task was not killed");
      }
      return i;
    }, DataTypes.LongType);
  }

  static Dataset<Row> rollouts(SparkSession s, long n, double reward) {
    return s.range(0, n, 1, 4).selectExpr("format_string('k%05d', id) AS id", "concat('r', id % 5) AS rollout_id",
        reward + " + id / 1000.0 AS reward", "array_repeat(cast(id AS float), 8) AS embedding");
  }

  /**
   * An atomic append (the default commit mode) whose tasks stage a part every few 64-row batches (small
   * {@code write.batch-bytes} and {@code merge.max-bytes}), with a {@code txn.timeout} of 2 s; without the bucket shuffle, so a UDF in the DataFrame
   * runs in the write tasks, after they staged the rows before it.
   */
  static void append(Dataset<Row> df, String path) {
    df.write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "8")
        .option("shards", "2").option("write.batch-rows", "64").option("write.batch-bytes", "4KiB")
        .option("merge.max-bytes", "4KiB").option("write.distribution", "none").option("txn.timeout", "2s")
        .mode("append").save(path);
  }

  /** The same append with the default batch sizes (a rerun, in a JVM where the store is not resident). */
  static void rerun(Dataset<Row> df, String path) {
    ContextStore.closeAllResident();  // reads made the store resident with the default write.batch-bytes
    df.write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "8")
        .option("write.distribution", "none").mode("append").save(path);
  }

  /**
   * The staged parts of every transaction of the store ({@code _lc/txn/<txid>/b<bucket>/<part>}). Lists the directories
   * rather than walking the tree: a walk reads the attributes of every entry, and a transaction's liveness file,
   * rewritten through a temporary file while the job runs, can vanish between the listing and that read. A directory
   * garbage collection removes meanwhile holds no parts.
   */
  static List<Path> stagedParts(String path) throws IOException {
    List<Path> parts = new java.util.ArrayList<>();
    for (Path txid : listed(Path.of(path, "_lc", "txn"), n -> true)) {
      for (Path bucket : listed(txid, n -> n.matches("b\\d+"))) {
        parts.addAll(listed(bucket, n -> n.startsWith("p")));
      }
    }
    return parts;
  }

  /** The entries of {@code dir} whose names {@code name} accepts; none when it is not (or no longer) there. */
  private static List<Path> listed(Path dir, java.util.function.Predicate<String> name) throws IOException {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries.filter(p -> name.test(p.getFileName().toString())).toList();
    } catch (java.nio.file.NoSuchFileException | java.nio.file.NotDirectoryException e) {
      return List.of();
    } catch (java.io.UncheckedIOException e) {
      if (e.getCause() instanceof java.nio.file.NoSuchFileException) {
        return List.of();
      }
      throw e;
    }
  }

  /** The staged parts not in {@code published}: those of the job under test. */
  static List<Path> unpublished(String path, List<Path> published) throws IOException {
    return stagedParts(path).stream().filter(p -> !published.contains(p)).toList();
  }

  /** Runs core's garbage collection with a zero grace (so unpublished parts of any age are collected). */
  static void gcNow(String path) {
    ContextStore.closeAllResident();  // the store is resident with the default gc.grace; a handle cannot differ
    try (ContextStore s = ContextStore.open(Map.of("path", path, "gc.grace", "0s"))) {
      assertTrue(s.gc().ran(), "garbage collection ran");
    }
    ContextStore.closeAllResident();
  }

  @Test
  void anAtomicJobCancelledWhileItsTasksStageLeavesTheStoreAsItWasAndGcRemovesTheStagedParts() throws Exception {
    String path = dir.resolve("cancelled").toString();
    append(rollouts(spark, 10, 0.0), path);
    Map<String, Double> before = SparkWriteTest.view(path);
    assertEquals(10, before.size());
    List<Path> published = stagedParts(path);  // the first write's (published) parts

    TaskCounter tasks = new TaskCounter();
    spark.sparkContext().addSparkListener(tasks);
    BLOCKED.set(0);
    Dataset<Row> blocking = rollouts(spark, ROWS, 1.0).where("blockMidPartition(cast(substr(id, 2) AS bigint)) >= 0");
    CompletableFuture<Void> job = CompletableFuture.runAsync(() -> {
      spark.sparkContext().setJobGroup("kill-me", "an atomic write cancelled midway", true);
      try {
        append(blocking, path);
      } finally {
        spark.sparkContext().clearJobGroup();
      }
    });
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (BLOCKED.get() < 2 || unpublished(path, published).isEmpty()) {  // local[2]: two tasks run, both block
        assertTrue(System.nanoTime() < deadline, "the tasks did not block after staging: " + BLOCKED.get() + " blocked, "
            + stagedParts(path).size() + " parts");
        assertFalse(job.isDone(), "the job ended before it was cancelled");
        Thread.sleep(20);
      }
      int staged = unpublished(path, published).size();
      assertTrue(staged >= 2, "the running tasks staged parts before blocking: " + staged);
      assertEquals(before, SparkWriteTest.view(path), "nothing staged is visible while the job runs");

      spark.sparkContext().cancelJobGroup("kill-me");
      ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
          () -> job.get(60, TimeUnit.SECONDS));
      assertTrue(SparkWriteTest.messages(e).contains("cancelled"), SparkWriteTest.messages(e));
      tasks.awaitAllEnded();
    } finally {
      spark.sparkContext().removeSparkListener(tasks);
    }

    SparkWriteTest.assertSameView(before, SparkWriteTest.view(path), "the cancelled job changed nothing");
    assertEquals(10, spark.read().format("lancecontext").load(path).count());
    assertFalse(unpublished(path, published).isEmpty(), "the staged parts stay until garbage collection");
    gcNow(path);
    assertEquals(List.of(), unpublished(path, published), "garbage collection removed every part the job staged");
    SparkWriteTest.assertSameView(before, SparkWriteTest.view(path), "and the store still reads as before");

    rerun(rollouts(spark, ROWS, 1.0), path);
    SparkWriteTest.assertSameView(SparkWriteTest.rewards(0, ROWS, 1.0), SparkWriteTest.view(path),
        "a rerun gives the job's exact result");
  }

  @Test
  void anAtomicJobWhoseDriverIsKilledWhileItsTasksStageLeavesTheStoreAsItWasAndARerunIsExact() throws Exception {
    String path = dir.resolve("driver-killed").toString();
    append(rollouts(spark, 10, 0.0), path);
    Map<String, Double> before = SparkWriteTest.view(path);
    List<Path> published = stagedParts(path);
    ContextStore.closeAllResident();  // the child JVM writes the store; this JVM only reads it from here on

    Path log = dir.resolve("killed-driver.log");
    Process driver = ChildLogs.driver(log, Driver.class, path).start();
    List<String> said = new ArrayList<>();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(driver.getInputStream(), StandardCharsets.UTF_8))) {
      while (said.stream().filter(l -> l.startsWith("blocked")).count() < 2) {  // local[2]: two tasks block
        String line = out.readLine();
        assertTrue(line != null, () -> "the driver ended before its tasks blocked: " + said + "\n" + tail(log));
        said.add(line);
      }
      assertFalse(unpublished(path, published).isEmpty(), "the tasks staged parts before blocking");
      assertEquals(before, SparkWriteTest.view(path), "nothing staged is visible while the job runs");
    } finally {
      driver.destroyForcibly();  // SIGKILL: no abort, no task cleanup
      assertTrue(driver.waitFor(30, TimeUnit.SECONDS), "the driver died");
    }
    assertEquals(137, driver.exitValue(), "killed by SIGKILL");

    SparkWriteTest.assertSameView(before, SparkWriteTest.view(path), "the killed job changed nothing");
    assertEquals(10, spark.read().format("lancecontext").load(path).count());
    Thread.sleep(2_500);  // txn.timeout (2 s) after the killed driver's tasks last renewed the job's transaction
    gcNow(path);
    assertEquals(List.of(), unpublished(path, published), "garbage collection removed the killed job's staged parts");
    rerun(rollouts(spark, ROWS, 1.0), path);
    SparkWriteTest.assertSameView(SparkWriteTest.rewards(0, ROWS, 1.0), SparkWriteTest.view(path),
        "a rerun of the same job gives its exact result");
  }

  private static String tail(Path log) {
    return ChildLogs.tail(log, 40);
  }

  /** Counts task attempts started and ended, to wait for killed tasks to finish. */
  static final class TaskCounter extends SparkListener {
    private final AtomicInteger started = new AtomicInteger();
    private final AtomicInteger ended = new AtomicInteger();

    @Override
    public void onTaskStart(SparkListenerTaskStart start) {
      started.incrementAndGet();
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      ended.incrementAndGet();
    }

    void awaitAllEnded() throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      do {
        spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
        if (ended.get() >= started.get() && started.get() > 0) {
          return;
        }
        Thread.sleep(20);
      } while (System.nanoTime() < deadline);
      throw new AssertionError("tasks did not end: " + started.get() + " started, " + ended.get() + " ended");
    }
  }

  /**
   * The killed driver: {@code Driver <store>}, Spark local[2]; runs the same atomic append as the tests with
   * the blocking UDF, printing {@code blocked <partition>} as each task blocks (after staging part of its rows).
   */
  public static final class Driver {
    private Driver() {}

    public static void main(String[] args) {
      SparkSession s = SparkSession.builder().master("local[2]").appName("killed-driver")
          .config("spark.ui.enabled", "false").config("spark.driver.bindAddress", "127.0.0.1")
          .config("spark.driver.host", "127.0.0.1").getOrCreate();
      announce = true;
      register(s);
      append(rollouts(s, ROWS, 1.0).where("blockMidPartition(cast(substr(id, 2) AS bigint)) >= 0"), args[0]);
      System.out.println("finished");  // never: the test kills this JVM while its tasks block
    }
  }
}
