package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.testing.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark with two executor JVMs ({@code local-cluster[2,1,1024]}: an in-process standalone Master and Worker
 * whose executors are separate JVMs started from the Maven test class path, no Spark distribution). The
 * driver runs in a child JVM because the test JVM already holds the shared local session
 * ({@link SparkTestSession}) and a JVM has one SparkContext.
 *
 * <p>Specifies: each executor JVM holds exactly one Lance session, within the budget its environment sets
 * ({@code LANCECONTEXT_CACHE_BYTES}), however many tasks and stores it serves; and an atomic write whose
 * tasks ran on both executors publishes every row.
 */
class SparkTwoExecutorsTest {
  static final long BUDGET = 256L << 20;
  static final int ROWS = 4000;
  static final int PARTITIONS = 8;

  @TempDir
  Path dir;

  @Test
  void eachExecutorHoldsOneBoundedSessionAndBothExecutorsRowsArePublished() throws Exception {
    String classPath = System.getProperty("java.class.path");
    Path log = dir.resolve("driver.log");
    ProcessBuilder pb = ChildLogs.driver(log, Driver.class, dir.resolve("store").toString(),
        dir.resolve("other").toString(), classPath);
    // the Worker keeps its executors' work directories (logs, fetched files) under SPARK_HOME/work
    pb.environment().put("SPARK_HOME", Files.createDirectories(dir.resolve("spark-home")).toString());
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
    assertEquals(0, driver.exitValue(), () -> "driver failed; stdout " + out + "\nlog tail:\n" + tail(log));

    Map<String, Set<String>> sessionsByPid = new HashMap<>();
    Set<String> writerPids = new HashSet<>();
    long rows = -1;
    String driverPid = null;
    for (String line : out) {
      String[] f = line.split(" ");
      switch (f[0]) {
        case "driver" -> driverPid = f[1];
        case "session" -> {
          // session <pid> <session identity> <session bytes> <budget bytes> <resident stores>
          sessionsByPid.computeIfAbsent(f[1], k -> new HashSet<>()).add(f[2]);
          assertEquals(BUDGET, Long.parseLong(f[4]), "the executor's budget is the one its environment set: " + line);
          assertTrue(Long.parseLong(f[3]) <= BUDGET * 11 / 10, "session within its budget (+10%): " + line);
          assertTrue(Integer.parseInt(f[5]) >= 2, "the executor serves both stores: " + line);
        }
        case "writers" -> writerPids.addAll(List.of(f).subList(1, f.length));
        case "rows" -> rows = Long.parseLong(f[1]);
        default -> { }
      }
    }
    assertEquals(2, sessionsByPid.size(), () -> "two executor JVMs answered: " + out);
    assertTrue(!sessionsByPid.containsKey(driverPid), "executors are not the driver's JVM");
    sessionsByPid.forEach((pid, sessions) ->
        assertEquals(1, sessions.size(), "executor " + pid + " holds exactly one Lance session: " + sessions));
    assertEquals(sessionsByPid.keySet(), writerPids, "both executors wrote rows");
    assertEquals(ROWS, rows, "every row written by both executors is present");
  }

  private static String tail(Path log) {
    return ChildLogs.tail(log, 60);
  }

  /**
   * The driver: {@code Driver <store> <other store> <executor class path>}. Prints {@code driver <pid>}, one
   * {@code session ...} line per probe task, {@code writers <pid>...} and {@code rows <n>}.
   */
  public static final class Driver {
    private Driver() {}

    public static void main(String[] args) throws Exception {
      String store = args[0];
      String other = args[1];
      String executorClassPath = args[2];
      SparkSession spark = SparkSession.builder()
          .master("local-cluster[2,1,1024]")
          .appName("two-executors")
          .config("spark.ui.enabled", "false")
          .config("spark.driver.bindAddress", "127.0.0.1")
          .config("spark.driver.host", "127.0.0.1")
          // the executors' class path is the test class path: lance-core on the system class path (it must not
          // be loaded by a child class loader, docs/spark.md "Set-up")
          .config("spark.executor.extraClassPath", executorClassPath)
          .config("spark.executor.extraJavaOptions", String.join(" ", ChildJvm.startFlags())
              + " --add-opens=java.base/java.nio=ALL-UNNAMED "
              + "-Djava.io.tmpdir="
              + System.getProperty("java.io.tmpdir"))
          .config("spark.executorEnv.LANCECONTEXT_CACHE_BYTES", Long.toString(BUDGET))
          .config("spark.executorEnv.SPARK_LOCAL_IP", "127.0.0.1")
          // without a Spark distribution the Worker's launcher needs these to build the executor command
          .config("spark.executorEnv.SPARK_TESTING", "1")
          .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
          .config("spark.executorEnv.LANCE_LOG", System.getenv().getOrDefault("LANCE_LOG", "warn,lance::index=off"))
          .getOrCreate();
      try {
        ChildLogs.awaitExecutors(spark, 2);
        System.out.println("driver " + pid());

        StructType schema = new StructType().add("id", DataTypes.StringType, false).add("worker_id", DataTypes.StringType)
            .add("reward", DataTypes.DoubleType);
        Dataset<Row> rows = spark.range(0, ROWS, 1, PARTITIONS).mapPartitions((MapPartitionsFunction<Long, Row>) it -> {
          String pid = pid();
          List<Row> batch = new ArrayList<>();
          it.forEachRemaining(r -> {
            long i = r;
            batch.add(RowFactory.create(String.format("k%05d", i), pid, i / 1000.0));
          });
          Thread.sleep(300);  // keeps one executor from taking every task before the other asks
          return batch.iterator();
        }, Encoders.row(schema)).toDF();
        rows.write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "8")
            .option("shards", "2").mode("append").save(store);

        Dataset<Row> back = spark.read().format("lancecontext").load(store);
        System.out.println("rows " + back.count());
        List<Row> writers = back.select("worker_id").distinct().collectAsList();
        StringBuilder w = new StringBuilder("writers");
        writers.forEach(r -> w.append(' ').append(r.getString(0)));
        System.out.println(w);

        Map<String, String> otherOptions = Map.of("path", other, "schema", "context", "schema.embedding-dim", "8",
            "shards", "1");
        try (ContextStore s = ContextStore.open(otherOptions)) {
          s.add(List.of(Map.of("id", "x")));
        }
        List<String> probes = spark.range(0, PARTITIONS, 1, PARTITIONS).mapPartitions((MapPartitionsFunction<Long, String>) it -> {
          try (ContextStore a = ContextStore.open(Map.of("path", store)); ContextStore b = ContextStore.open(Map.of("path", other))) {
            a.count();
            a.get("k00001");
            b.count();
            Thread.sleep(300);
            LanceRuntime lance = LanceRuntime.get();
            return List.of("session " + pid() + " " + System.identityHashCode(lance.sharedSession()) + " "
                + lance.sessionSizeBytes() + " " + lance.sharedBudget().bytes() + " " + ContextStore.residentStores())
                .iterator();
          }
        }, Encoders.STRING()).collectAsList();
        probes.forEach(System.out::println);
      } finally {
        spark.stop();
      }
    }

    static String pid() {
      return Long.toString(ProcessHandle.current().pid());
    }
  }
}
