package io.lancecontext.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Helpers of the tests that run Spark on a standalone cluster in child JVMs (drivers, a Master, Workers and their
 * executors): the logs those JVMs leave, and the wait for executors to register.
 */
final class ChildLogs {
  private ChildLogs() {}

  /** Waits up to 120 s until {@code executors} executors (besides the driver) have registered with {@code spark}. */
  static void awaitExecutors(org.apache.spark.sql.SparkSession spark, int executors) throws InterruptedException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(120);
    while (spark.sparkContext().getExecutorMemoryStatus().size() < executors + 1) {  // the driver counts as one
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("executors did not register: " + spark.sparkContext().getExecutorMemoryStatus());
      }
      Thread.sleep(100);
    }
  }

  /** The last {@code lines} lines of {@code log}, or why there are none. */
  static String tail(Path log, int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }
}
