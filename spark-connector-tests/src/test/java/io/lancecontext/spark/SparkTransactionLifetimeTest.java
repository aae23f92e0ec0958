package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A job's transaction lives as long as the job: garbage collection running beside it (here with
 * {@code gc.grace} 0 and a {@code txn.timeout} of 1 s) never aborts a batch write whose straggler stages
 * nothing for longer than the timeout, and a streaming epoch replayed after its first attempt expired still
 * publishes (under a new attempt).
 */
class SparkTransactionLifetimeTest extends SparkTest {
  /**
   * Short, so the scenarios run in seconds. It was 1 s: in a full clean-clone run the job's transaction was once
   * aborted 2.8 s after its last marker, most likely a collection's listing that raced a renewal and saw no marker
   * (fixed in core: a renewal keeps the marker it replaces); 3 s leaves room for a slow machine as well.
   */
  private static final long TIMEOUT_MILLIS = 3_000;
  private static final String TIMEOUT = TIMEOUT_MILLIS + "ms";

  private static Map<String, String> options(String path) {
    Map<String, String> o = new HashMap<>();
    o.put("path", path);
    o.put("schema", "rollout");
    o.put("schema.embedding-dim", "4");
    o.put("gc.grace", "0s");
    o.put("txn.timeout", TIMEOUT);
    o.put("shards", "4");
    return o;
  }

  /** Collects garbage every 50 ms until stopped, as another process's maintenance would. */
  private static Thread collector(Map<String, String> options, AtomicBoolean stop) {
    Thread t = new Thread(() -> {
      try (ContextStore store = ContextStore.open(options)) {
        while (!stop.get()) {
          store.gc();
          Thread.sleep(50);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "test-gc");
    t.start();
    return t;
  }

  @Test
  void aStragglerThatStagesNothingForLongerThanTheTimeoutDoesNotAbortTheJob() throws Exception {
    String path = dir.resolve("straggler").toString();
    Map<String, String> options = options(path);
    try (ContextStore store = ContextStore.open(options)) {
      store.add(List.of(Map.of("id", "seed", "num_tokens", 0)));
    }
    AtomicBoolean stop = new AtomicBoolean();
    Thread gc = collector(options, stop);
    try {
      Dataset<Row> rows = spark.range(0, 400, 1, 4).selectExpr("concat('k', id) AS id", "cast(id AS int) AS num_tokens")
          .mapPartitions((MapPartitionsFunction<Row, Row>) it -> {
            if (org.apache.spark.TaskContext.getPartitionId() == 0) {
              Thread.sleep(2 * TIMEOUT_MILLIS);  // two timeouts without staging anything while the others finish
            }
            return it;
          }, Encoders.row(spark.range(1).selectExpr("'a' AS id", "1 AS num_tokens").schema()));
      rows.write().format("lancecontext").options(options).option("write.distribution", "none").mode("append").save();
    } finally {
      stop.set(true);
      gc.join();
    }
    try (ContextStore store = ContextStore.open(options)) {
      assertEquals(401, store.count(), "every task's rows were published");
    }
  }

  @Test
  void anEpochReplayedAfterItsFirstAttemptExpiredIsPublished() throws Exception {
    String path = dir.resolve("stream").toString();
    Path checkpoint = dir.resolve("stream-checkpoint");
    Map<String, String> options = options(path);
    MemoryStream<String> input = MemoryStream.apply(Encoders.STRING(), spark);
    StreamingQuery q = input.toDF().selectExpr("value AS id", "cast(length(value) AS int) AS num_tokens").writeStream()
        .format("lancecontext").options(options).option("checkpointLocation", checkpoint.toString()).start();
    input.addData(CollectionConverters.asScala(List.of("a", "bb")).toSeq());
    q.processAllAvailable();
    q.stop();
    long next = q.lastProgress().batchId() + 1;
    // the next epoch's first attempt staged its rows and the driver died before its commit
    String txn = "spark-stream-" + q.id() + "-" + next;
    try (ContextStore store = ContextStore.open(options);
        StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txn, "0/0/0").build())) {
      w.write(Map.of("id", "ccc", "num_tokens", 3));
      w.commit();
    }
    Thread.sleep(TIMEOUT_MILLIS + 100);
    try (ContextStore store = ContextStore.open(options)) {
      store.gc();  // nobody renewed it within txn.timeout: it expires
    }
    StreamingQuery again = input.toDF().selectExpr("value AS id", "cast(length(value) AS int) AS num_tokens")
        .writeStream().format("lancecontext").options(options).option("checkpointLocation", checkpoint.toString())
        .start();
    input.addData(CollectionConverters.asScala(List.of("ccc", "dddd")).toSeq());
    again.processAllAvailable();
    again.stop();
    assertTrue(again.exception().isEmpty(), () -> "the replayed epoch published: " + again.exception());
    try (ContextStore store = ContextStore.open(options)) {
      assertEquals(4, store.count());
      assertEquals(4, store.get("dddd").orElseThrow().get("num_tokens"));
    }
  }
}
