package io.lancecontext.benchmarks.spark;

import io.lancecontext.core.ContextStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;

/**
 * Where a {@code lancecontext} atomic write spends its Java time: the benchmark's rows, persisted, written once
 * under a JFR recording (execution samples of this JVM only; native time inside lance-core shows as the JNI
 * frame that called it). Prints the top frames by samples, self and inclusive.
 * Usage: {@code WriteProfile [rows] [dir] [format]} (format {@code lancecontext} or the fragment-append class).
 */
public final class WriteProfile {
  private WriteProfile() {}

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 300_000L;
    Path dir = Paths.get(args.length > 1 ? args[1] : "benchmarks/spark/target/profile").toAbsolutePath();
    String format = args.length > 2 ? args[2] : "lancecontext";
    SparkSession spark = SparkSession.builder().master("local[2]").appName("WriteProfile")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1").getOrCreate();
    try {
      Dataset<Row> gen = SparkWriteReadBenchmark.rollouts(spark, n, 0, 1, 0.0);
      gen.persist(StorageLevel.MEMORY_ONLY());
      gen.count();
      Path jfr = Files.createTempFile("write-profile", ".jfr");
      long t;
      try (Recording r = new Recording()) {
        r.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(10));
        r.enable("jdk.NativeMethodSample").withPeriod(java.time.Duration.ofMillis(10));
        r.start();
        t = System.nanoTime();
        Map<String, String> options = format.equals("lancecontext")
            ? Map.of("schema", "rollout", "schema.embedding-dim", "64") : Map.of("vector.dim", "64");
        gen.write().format(format).options(options).mode("append").save(dir.resolve("store-" + System.nanoTime()).toString());
        t = System.nanoTime() - t;
        r.stop();
        r.dump(jfr);
      }
      System.out.printf(Locale.ROOT, "write %s of %d rows: %.3f s%n", format, n, t / 1e9);
      Map<String, Integer> self = new HashMap<>();
      Map<String, Integer> inclusive = new HashMap<>();
      int samples = 0;
      for (RecordedEvent e : RecordingFile.readAllEvents(jfr)) {
        if (e.getStackTrace() == null) {
          continue;
        }
        List<RecordedFrame> frames = e.getStackTrace().getFrames();
        if (frames.isEmpty()) {
          continue;
        }
        if (name(frames.get(0)).startsWith("io.netty.channel.epoll.Native.epollWait")) {
          continue;  // Spark's idle network threads: waiting, not working
        }
        samples++;
        self.merge(e.getEventType().getName().endsWith("NativeMethodSample") ? "[native] " + name(frames.get(0))
            : name(frames.get(0)), 1, Integer::sum);
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (RecordedFrame f : frames) {
          String m = name(f);
          if ((m.startsWith("io.lancecontext") || m.startsWith("org.lance")) && seen.add(m)) {
            inclusive.merge(m, 1, Integer::sum);
          }
        }
      }
      System.out.println("samples " + samples);
      print("self", self, samples);
      print("inclusive (lancecontext / lance frames)", inclusive, samples);
      Files.deleteIfExists(jfr);
    } finally {
      ContextStore.closeAllResident();
      spark.stop();
    }
  }

  private static String name(RecordedFrame f) {
    return f.getMethod().getType().getName() + "." + f.getMethod().getName();
  }

  private static void print(String what, Map<String, Integer> counts, int samples) {
    System.out.println("top " + what + ":");
    counts.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(40).forEach(en ->
        System.out.printf(Locale.ROOT, "  %5.1f%%  %s%n", 100.0 * en.getValue() / samples, en.getKey()));
  }
}
