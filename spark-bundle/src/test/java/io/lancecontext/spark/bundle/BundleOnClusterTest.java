package io.lancecontext.spark.bundle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bundle is all a Spark application needs besides Spark: a driver and two executor JVMs
 * ({@code local-cluster[2,1,1024]}) whose class path is Spark's jars plus the bundle on
 * {@code spark.driver.extraClassPath} / {@code spark.executor.extraClassPath} (none of the connector's own
 * jars), write and read a store.
 */
class BundleOnClusterTest {
  @TempDir
  Path dir;

  @Test
  void sparkJarsPlusTheBundleWriteAndReadAStoreOnTwoExecutors() throws Exception {
    String bundle = Path.of(System.getProperty("lancecontext.bundle.jar")).toAbsolutePath().toString();
    // Spark and its dependencies only: the test class path less this build's jars and what the bundle holds
    List<String> spark = Arrays.stream(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
            .split(File.pathSeparator))
        .filter(e -> !e.contains("/io/lancecontext/") && !e.contains("/org/lance/") && !e.contains("caffeine")
            && !e.contains("/software/amazon/") && !e.contains("httpclient5") && !e.contains("httpcore5")
            && !e.contains("arrow-c-data") && !e.contains("arrow-dataset") && !e.contains("jar-jni")
            && !e.endsWith("/classes"))
        .collect(Collectors.toList());
    String sparkClassPath = String.join(File.pathSeparator, spark);
    String testClasses = Paths.get(BundleOnClusterTest.class.getProtectionDomain().getCodeSource().getLocation().toURI())
        .toString();
    // the build's fast-start flags (C1 alone, no class verification), for the driver and its executors
    String startFlags = System.getProperty("lancecontext.test.jvm.flags", "").trim();
    List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx768m", "-Dlancecontext.test.jvm.flags=" + startFlags, "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir")));
    if (!startFlags.isEmpty()) {
      cmd.addAll(List.of(startFlags.split("\\s+")));
    }
    cmd.addAll(List.of("-cp", String.join(File.pathSeparator, bundle, sparkClassPath, testClasses),
        Driver.class.getName(), dir.resolve("store").toString(), bundle + File.pathSeparator + sparkClassPath));
    Path log = dir.resolve("driver.log");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    pb.environment().put("SPARK_HOME", Files.createDirectories(dir.resolve("spark-home")).toString());
    pb.environment().put("LANCE_LOG", "warn,lance::index=off");
    Process driver = pb.start();
    List<String> out = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(driver.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        out.add(line);
      }
    } finally {
      if (!driver.waitFor(240, TimeUnit.SECONDS)) {
        driver.destroyForcibly().waitFor();
      }
    }
    String tail = Files.exists(log) ? String.join("\n", Files.readAllLines(log).stream()
        .skip(Math.max(0, Files.readAllLines(log).size() - 60)).toList()) : "(no log)";
    assertEquals(0, driver.exitValue(), () -> "driver failed; stdout " + out + "\nlog tail:\n" + tail);
    assertTrue(out.contains("rows 3000"), () -> "every row read back: " + out);
    assertTrue(out.contains("executors 2"), () -> "two executor JVMs: " + out);
  }

  /** {@code Driver <store> <executor class path>}: writes 3,000 rows on two executors, prints {@code rows <n>}. */
  public static final class Driver {
    private Driver() {}

    public static void main(String[] args) throws Exception {
      SparkSession spark = SparkSession.builder()
          .master("local-cluster[2,1,1024]")
          .appName("bundle-on-cluster")
          .config("spark.ui.enabled", "false")
          .config("spark.driver.bindAddress", "127.0.0.1")
          .config("spark.driver.host", "127.0.0.1")
          .config("spark.executor.extraClassPath", args[1])
          .config("spark.executor.extraJavaOptions", (System.getProperty("lancecontext.test.jvm.flags", "") + " -Djava.io.tmpdir="
              + System.getProperty("java.io.tmpdir")).trim())
          .config("spark.executorEnv.SPARK_TESTING", "1")
          .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
          .config("spark.executorEnv.LANCE_LOG", "warn,lance::index=off")
          .config("spark.executorEnv.LANCECONTEXT_CACHE_BYTES", "128MiB")
          .getOrCreate();
      try {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (spark.sparkContext().getExecutorMemoryStatus().size() < 3) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("executors did not register");
          }
          Thread.sleep(200);
        }
        System.out.println("executors " + (spark.sparkContext().getExecutorMemoryStatus().size() - 1));
        spark.range(0, 3000, 1, 6).selectExpr("format_string('k%05d', id) AS id", "id / 1000.0 AS reward")
            .write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "8")
            .mode("append").save(args[0]);
        System.out.println("rows " + spark.read().format("lancecontext").load(args[0]).count());
      } finally {
        spark.stop();
      }
    }
  }
}
