package io.lancecontext.spark;

import io.lancecontext.core.testing.ChildJvm;
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

  /**
   * A driver JVM running {@code main} with {@code args} on this JVM's class path, its stderr going to {@code log}.
   * It lives seconds: C1 alone and the serial GC start it faster on 2 cores.
   */
  static ProcessBuilder driver(Path log, Class<?> main, String... args) {
    List<String> cmd = new java.util.ArrayList<>(List.of(
        System.getProperty("lancecontext.test.java",
            java.nio.file.Paths.get(System.getProperty("java.home"), "bin", "java").toString()),
        "-Xmx768m", "-XX:+UseSerialGC", "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir")));
    cmd.addAll(ChildJvm.startFlags());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    return pb;
  }

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
