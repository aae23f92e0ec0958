package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryProgress;
import org.apache.spark.sql.streaming.Trigger;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/** {@code writeStream.format("lancecontext")}: one atomic transaction per epoch; a replayed epoch changes nothing. */
class SparkStreamingTest extends SparkTest {
  private static StreamingQuery start(MemoryStream<String> input, String path, Path checkpoint) throws Exception {
    return input.toDF().selectExpr("value AS id", "cast(length(value) AS int) AS num_tokens").writeStream()
        .format("lancecontext").option("path", path).option("schema", "rollout").option("schema.embedding-dim", "4")
        .option("checkpointLocation", checkpoint.toString()).trigger(Trigger.ProcessingTime("1 second")).start();
  }

  private static void add(MemoryStream<String> input, String... values) {
    input.addData(CollectionConverters.asScala(List.of(values)).toSeq());
  }

  private static Map<String, Object> view(String path) {
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      Map<String, Object> m = new HashMap<>();
      s.scanRecords(io.lancecontext.core.read.ScanSpec.all().withColumns(List.of("id", "num_tokens")))
          .forEach(r -> m.put((String) r.get("id"), r.get("num_tokens")));
      return m;
    }
  }

  @Test
  void anEpochReplayedAfterARestartFromTheCheckpointChangesNothing() throws Exception {
    String path = dir.resolve("stream").toString();
    Path checkpoint = dir.resolve("checkpoint");
    MemoryStream<String> input = MemoryStream.apply(Encoders.STRING(), spark);
    StreamingQuery q = start(input, path, checkpoint);
    add(input, "a", "bb", "ccc");
    q.processAllAvailable();
    add(input, "dddd", "eeeee");
    q.processAllAvailable();
    q.stop();
    assertEquals(Map.of("a", 1, "bb", 2, "ccc", 3, "dddd", 4, "eeeee", 5), view(path));
    long lastEpoch = lastCommittedEpoch(checkpoint);
    assertTrue(Files.isDirectory(Path.of(path, "_lc", "txn", "spark-stream-" + q.id() + "-" + lastEpoch)),
        "epoch " + lastEpoch + " is a transaction keyed by the query id and the epoch");

    // the epoch's commit-log entry is lost: a restart replays the epoch; a newer write of one of its keys meanwhile
    Files.delete(checkpoint.resolve("commits").resolve(Long.toString(lastEpoch)));
    Files.deleteIfExists(checkpoint.resolve("commits").resolve("." + lastEpoch + ".crc"));
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      s.add(List.of(Map.of("id", "dddd", "num_tokens", 99)));
    }
    StreamingQuery again = start(input, path, checkpoint);
    again.processAllAvailable();
    assertEquals(q.id(), again.id(), "the same query (its id is checkpointed)");
    boolean replayed = Stream.of(again.recentProgress()).anyMatch(p -> p.batchId() == lastEpoch && p.numInputRows() == 2);
    add(input, "ffffff");
    again.processAllAvailable();
    again.stop();
    assertTrue(replayed, "the restart replayed epoch " + lastEpoch + ": " + progress(again));
    assertEquals(Map.of("a", 1, "bb", 2, "ccc", 3, "dddd", 99, "eeeee", 5, "ffffff", 6), view(path),
        "the replay published nothing again (dddd keeps the newer row) and the next epoch was written");
  }

  @Test
  void inCompleteModeEveryEpochReplacesTheContents() throws Exception {
    String path = dir.resolve("complete").toString();
    MemoryStream<String> input = MemoryStream.apply(Encoders.STRING(), spark);
    // the values seen exactly once so far: a value seen again leaves the result, which only a replace removes
    StreamingQuery q = input.toDF().groupBy("value").count().where("count = 1")
        .selectExpr("value AS id", "cast(count AS int) AS token_count").writeStream().outputMode("complete")
        .format("lancecontext").option("path", path).option("schema", "context").option("schema.embedding-dim", "4")
        .option("checkpointLocation", dir.resolve("complete-checkpoint").toString())
        .trigger(Trigger.ProcessingTime("1 second")).start();
    add(input, "a", "b", "a");
    q.processAllAvailable();
    add(input, "c", "b");
    q.processAllAvailable();
    q.stop();
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      Map<String, Object> m = new HashMap<>();
      s.scanRecords(io.lancecontext.core.read.ScanSpec.all().withColumns(List.of("id", "token_count")))
          .forEach(r -> m.put((String) r.get("id"), r.get("token_count")));
      assertEquals(Map.of("c", 1), m, "b left the result in the second epoch");
    }
  }

  /**
   * Update mode: each epoch emits only the keys whose aggregate changed, and each is upserted, so the store
   * holds one row per key with its latest aggregate (a key not seen again keeps its older value).
   */
  @Test
  void inUpdateModeEachKeyHoldsItsLatestAggregate() throws Exception {
    String path = dir.resolve("update").toString();
    MemoryStream<String> input = MemoryStream.apply(Encoders.STRING(), spark);
    // value "k:n": the running max of n per key k
    StreamingQuery q = input.toDF().selectExpr("split(value, ':')[0] AS k", "cast(split(value, ':')[1] AS int) AS n")
        .groupBy("k").max("n").selectExpr("k AS id", "`max(n)` AS num_tokens").writeStream().outputMode("update")
        .format("lancecontext").option("path", path).option("schema", "rollout").option("schema.embedding-dim", "4")
        .option("checkpointLocation", dir.resolve("update-checkpoint").toString())
        .trigger(Trigger.ProcessingTime("1 second")).start();
    try {
      add(input, "a:1", "b:5", "a:3");
      q.processAllAvailable();
      assertEquals(Map.of("a", 3, "b", 5), view(path));
      add(input, "a:7", "c:2", "b:4");
      q.processAllAvailable();
      add(input, "c:9", "a:2");
      q.processAllAvailable();
    } finally {
      q.stop();
    }
    assertTrue(q.exception().isEmpty(), () -> "the query failed: " + q.exception());
    assertEquals(Map.of("a", 7, "b", 5, "c", 9), view(path), "each key's latest running max");
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertEquals(3, s.count(), "one row per key");
    }
  }

  @Test
  void completeModeReplacesTheContentsOfAStoreWithoutTombstonesEveryEpoch() throws Exception {
    String path = dir.resolve("complete-rollout").toString();
    try (ContextStore s = ContextStore.open(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "4"))) {
      s.add(List.of(Map.of("id", "before", "num_tokens", 1)));
    }
    MemoryStream<String> input = MemoryStream.apply(Encoders.STRING(), spark);
    StreamingQuery q = input.toDF().groupBy("value").count().selectExpr("value AS id", "cast(count AS int) AS num_tokens")
        .writeStream().outputMode("complete").format("lancecontext").option("path", path)
        .option("checkpointLocation", dir.resolve("complete-rollout-checkpoint").toString())
        .trigger(Trigger.ProcessingTime("1 second")).start();
    try {
      add(input, "a");
      q.processAllAvailable();
      assertEquals(Map.of("a", 1), view(path), "the first epoch replaced the row written before the query");
      add(input, "a", "b");
      q.processAllAvailable();
    } finally {
      q.stop();
    }
    assertTrue(q.exception().isEmpty(), () -> "the query failed: " + q.exception());
    assertEquals(Map.of("a", 2, "b", 1), view(path));
  }

  /**
   * A rate source (50 rows/s) at a 1 s trigger for at least 10 micro-batches after warm-up: every batch is
   * committed (in the checkpoint, and as its own published transaction), the store holds exactly the rows the
   * batches read, and the batches keep up with the trigger. Warm-up is the batches up to the second one with
   * rows (the first reads what the source made while the query started, the second what it made while the
   * first ran, with the JVM's first store writes). Keeping up is asserted so that a loaded 2-core machine passes:
   * the sink's part of a batch ({@code addBatch}: the write and the publish) takes less than the trigger interval
   * at the median, and no batch reads more than 3 s of input (a query that fell behind the trigger would read
   * ever more rows per batch).
   */
  @Test
  void aOneSecondTriggerSustainsTenMicroBatchesEachCommittedWithAnExactResult() throws Exception {
    String path = dir.resolve("sustained").toString();
    Path checkpoint = dir.resolve("sustained-checkpoint");
    int rate = 50;
    StreamingQuery q = spark.readStream().format("rate").option("rowsPerSecond", Integer.toString(rate))
        .option("numPartitions", "2").load()
        .selectExpr("format_string('s%06d', value) AS id", "cast(value AS int) AS num_tokens").writeStream()
        .format("lancecontext").option("path", path).option("schema", "rollout").option("schema.embedding-dim", "4")
        .option("checkpointLocation", checkpoint.toString()).trigger(Trigger.ProcessingTime("1 second")).start();
    long started = System.nanoTime();
    try {
      while (steady(q.recentProgress()).size() < 10) {
        assertTrue(q.isActive(), () -> "the query stopped: " + q.exception());
        assertTrue(System.nanoTime() - started < java.util.concurrent.TimeUnit.SECONDS.toNanos(40),
            () -> "10 batches after warm-up took more than 40 s: " + progress(q));
        Thread.sleep(100);
      }
    } finally {
      q.stop();
    }
    assertTrue(q.exception().isEmpty(), () -> "the query failed: " + q.exception());
    StreamingQueryProgress[] batches = q.recentProgress();
    long rows = Stream.of(batches).mapToLong(StreamingQueryProgress::numInputRows).sum();
    Map<String, Object> want = new HashMap<>();
    for (int v = 0; v < rows; v++) {
      want.put(String.format("s%06d", v), v);
    }
    SparkWriteTest.assertSameView(want, view(path), "every row the " + batches.length + " batches read, once");
    for (StreamingQueryProgress p : batches) {
      assertTrue(Files.exists(checkpoint.resolve("commits").resolve(Long.toString(p.batchId()))),
          "batch " + p.batchId() + " committed in the checkpoint");
      if (p.numInputRows() > 0) {
        assertTrue(Files.isDirectory(Path.of(path, "_lc", "txn", "spark-stream-" + q.id() + "-" + p.batchId())),
            "batch " + p.batchId() + " is its own transaction");
      }
    }
    List<StreamingQueryProgress> steady = steady(batches);
    long[] sink = steady.stream().mapToLong(p -> p.durationMs().get("addBatch")).sorted().toArray();
    assertTrue(sink[sink.length / 2] < 1000, "the sink's median part of a batch fits in the trigger: "
        + java.util.Arrays.toString(sink) + "; " + progress(q));
    assertTrue(steady.stream().allMatch(p -> p.numInputRows() <= 3 * rate),
        () -> "no batch after warm-up read more than 3 s of input: " + progress(q));
  }

  /** The batches after warm-up: those after the second one that read rows. */
  private static List<StreamingQueryProgress> steady(StreamingQueryProgress[] batches) {
    List<StreamingQueryProgress> withRows = Stream.of(batches).filter(p -> p.numInputRows() > 0).toList();
    return withRows.size() <= 2 ? List.of() : Stream.of(batches)
        .filter(p -> p.batchId() > withRows.get(1).batchId()).toList();
  }

  private static long lastCommittedEpoch(Path checkpoint) throws IOException {
    try (Stream<Path> files = Files.list(checkpoint.resolve("commits"))) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d+")).mapToLong(Long::parseLong)
          .max().orElseThrow();
    }
  }

  private static String progress(StreamingQuery q) {
    StringBuilder sb = new StringBuilder();
    for (StreamingQueryProgress p : q.recentProgress()) {
      sb.append("batch ").append(p.batchId()).append(" at ").append(p.timestamp()).append(": ").append(p.numInputRows())
          .append(" rows in ").append(p.durationMs().get("triggerExecution")).append(" ms (sink ")
          .append(p.durationMs().get("addBatch")).append(" ms); ");
    }
    return sb.toString();
  }
}
