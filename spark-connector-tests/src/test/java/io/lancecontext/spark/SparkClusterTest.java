package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.ChildJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.deploy.master.Master$;
import org.apache.spark.deploy.worker.Worker$;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;

/**
 * Spark on a cluster of two executor JVMs: Spark's own speculation, and one bounded Lance session per executor.
 *
 * <p>Spark launches no speculative attempt in local mode (its scheduler starts the speculation check only for a
 * non-local master), and never on a host that already runs an attempt of the task, which rules out {@code
 * local-cluster} (it names every executor's host alike). So the driver runs in a child JVM (the test JVM already
 * holds the shared local session, {@link SparkTestSession}, and a JVM has one SparkContext) with a standalone
 * Master and two Workers (one core each) started in it, the Workers named {@code 127.0.0.1} and {@code localhost}
 * (both loopback): two executor JVMs on two host names, started from the Maven test class path, no Spark
 * distribution. One driver runs both scenarios: starting the cluster is most of their time.
 *
 * <p>Specifies: speculative task attempts never duplicate or lose rows, in both commit modes; each executor JVM
 * holds exactly one Lance session, within the budget its environment sets ({@code LANCECONTEXT_CACHE_BYTES}),
 * however many tasks and stores it serves; and an atomic write whose tasks ran on both executors publishes every
 * row.
 */
class SparkClusterTest {
  /** The speculated writes: 4 partitions of 500 rows; partition 0's first attempt hangs after 250 rows. */
  static final int SPECULATED_PARTITIONS = 4;
  static final int ROWS_PER_PARTITION = 500;
  /** The executors' session budget ({@code LANCECONTEXT_CACHE_BYTES}). */
  static final long BUDGET = 256L << 20;
  /** The write across both executors: 4,000 rows in 8 partitions. */
  static final int ROWS = 4000;
  static final int PARTITIONS = 8;

  @TempDir
  static Path dir;
  /** What the driver printed, and its exit code. */
  static final List<String> out = new ArrayList<>();
  static int exit;
  static Path log;

  @BeforeAll
  static void runDriver() throws Exception {
    String classPath = System.getProperty("java.class.path");
    log = dir.resolve("driver.log");
    ProcessBuilder pb = ChildLogs.driver(log, Driver.class, dir.toString(), classPath);
    // the Workers keep their executors' work directories (logs, fetched files) under SPARK_HOME/work
    pb.environment().put("SPARK_HOME", Files.createDirectories(dir.resolve("spark-home")).toString());
    Process driver = pb.start();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(driver.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        out.add(line);
      }
    } finally {
      if (!driver.waitFor(240, TimeUnit.SECONDS)) {
        driver.destroyForcibly().waitFor();
      }
    }
    exit = driver.exitValue();
  }

  /**
   * Each speculated write: the first attempt of partition 0 writes 250 rows (atomic: staged as parts of the
   * job's transaction; immediate: put, visible at once), then hangs until it is killed; Spark speculates it on
   * the other host, the speculative attempt writes all 500 rows and commits, and Spark kills the first. Every
   * row carries the attempt that wrote it ({@code rollout_id = p<partition>-a<attempt>}), so a row of the
   * killed attempt left visible, a lost row or a duplicate key shows. A SparkListener in the driver proves the
   * speculative attempt ran.
   */
  @Test
  void aSpeculativeAttemptReplacesAHungOneWithoutDuplicatesOrLossInBothCommitModes() {
    assertEquals(0, exit, () -> "driver failed; stdout " + out + "\nlog tail:\n" + tail(log));
    for (String mode : List.of("atomic", "immediate")) {
      // task <mode> <partition> <attempt> <speculative> <host> <end reason>
      List<String[]> partition0 = out.stream().filter(l -> l.startsWith("task " + mode + " 0 ")).map(l -> l.split(" ", 7))
          .toList();
      String[] first = partition0.stream().filter(t -> t[3].equals("0")).findFirst()
          .orElseThrow(() -> new AssertionError(mode + ": no first attempt of partition 0: " + out));
      String[] speculative = partition0.stream().filter(t -> t[4].equals("true")).findFirst()
          .orElseThrow(() -> new AssertionError(mode + ": no speculative attempt of partition 0: " + out));
      assertTrue(first[6].startsWith("TaskKilled"), mode + ": the hung first attempt was killed: " + String.join(" ", first));
      assertEquals("Success", speculative[6], mode + ": the speculative attempt succeeded: " + String.join(" ", speculative));
      assertTrue(!first[5].equals(speculative[5]), mode + ": the two attempts ran on two hosts: " + out);
      // hung <mode> <parts the hung attempt staged> <whether its first row was visible while it hung>
      String hung = out.stream().filter(l -> l.startsWith("hung " + mode + " ")).findFirst()
          .orElseThrow(() -> new AssertionError(mode + ": the first attempt did not hang: " + out));
      if (mode.equals("atomic")) {
        assertTrue(!hung.endsWith(" 0 false") && hung.endsWith(" false"),
            "atomic: the hung attempt staged parts, and none of its rows was visible: " + hung);
      } else {
        assertEquals("hung immediate 0 true", hung, "immediate: the hung attempt's first puts were visible at once");
      }

      Map<String, String> want = new HashMap<>();
      for (int p = 0; p < SPECULATED_PARTITIONS; p++) {
        // the attempt that succeeded (for partition 0 the speculative one; another partition may be speculated too)
        String prefix = "task " + mode + " " + p + " ";
        List<String> won = out.stream().filter(l -> l.startsWith(prefix) && l.endsWith(" Success"))
            .map(l -> l.split(" ")[3]).toList();
        assertEquals(1, won.size(), mode + ": one attempt of partition " + p + " succeeded: " + out);
        for (int i = 0; i < ROWS_PER_PARTITION; i++) {
          want.put(key(p, i), "p" + p + "-a" + won.get(0));
        }
      }
      assertEquals("p0-a" + speculative[3], want.get(key(0, 0)));
      SparkWriteTest.assertSameView(want, view(dir.resolve(mode).toString()),
          mode + ": every row once, partition 0's as the speculative attempt wrote them");
    }
  }

  @Test
  void eachExecutorHoldsOneBoundedSessionAndBothExecutorsRowsArePublished() {
    assertEquals(0, exit, () -> "driver failed; stdout " + out + "\nlog tail:\n" + tail(log));
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

  static String key(int partition, int i) {
    return String.format("k%d-%04d", partition, i);
  }

  /** key -> rollout_id, read through core (each key once). */
  private static Map<String, String> view(String path) {
    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      Map<String, String> m = new HashMap<>();
      for (Map<String, Object> r : s.scanRecords(ScanSpec.all().withColumns(List.of("id", "rollout_id")))) {
        assertEquals(null, m.put((String) r.get("id"), (String) r.get("rollout_id")), "a key appears once: " + r.get("id"));
      }
      return m;
    }
  }

  private static String tail(Path log) {
    return ChildLogs.tail(log, 60);
  }

  /**
   * The driver: {@code Driver <dir> <executor class path>}. Prints {@code driver <pid>}; for the speculated writes
   * into {@code <dir>/atomic} and {@code <dir>/immediate}, {@code task <mode> <partition> <attempt> <speculative>
   * <host> <end reason>} per task attempt and {@code hung <mode> <parts staged> <first row visible>}; then what
   * {@link #twoExecutors} prints for {@code <dir>/store} and {@code <dir>/other}.
   */
  public static final class Driver {
    private Driver() {}

    public static void main(String[] args) throws Exception {
      Path base = Path.of(args[0]);
      String executorClassPath = args[1];
      SparkConf clusterConf = new SparkConf().set("spark.ui.enabled", "false").set("spark.master.rest.enabled", "false");
      RpcEnv master = Master$.MODULE$.startRpcEnvAndEndpoint("127.0.0.1", 0, 0, clusterConf)._1();
      String masterUrl = "spark://127.0.0.1:" + master.address().port();
      List<RpcEnv> workers = new ArrayList<>();
      for (String host : List.of("127.0.0.1", "localhost")) {
        String work = Files.createDirectories(base.resolve("worker-" + (workers.size() + 1))).toString();
        workers.add(Worker$.MODULE$.startRpcEnvAndEndpoint(host, 0, 0, 1, 1024, new String[] {masterUrl}, work,
            Option.apply(workers.size() + 1), clusterConf, Option.empty()));
      }
      SparkSession spark = SparkSession.builder()
          .master(masterUrl)
          .appName("cluster")
          .config("spark.ui.enabled", "false")
          .config("spark.driver.bindAddress", "127.0.0.1")
          .config("spark.driver.host", "127.0.0.1")
          .config("spark.executor.memory", "1g")
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
          // speculate a task running twice as long as the median of the finished half, checked every 100 ms
          .config("spark.speculation", "true")
          .config("spark.speculation.interval", "100ms")
          .config("spark.speculation.multiplier", "2")
          .config("spark.speculation.quantile", "0.5")
          .config("spark.speculation.minTaskRuntime", "1s")
          .config("spark.speculation.efficiency.enabled", "false")
          .getOrCreate();
      try {
        ChildLogs.awaitExecutors(spark, 2);
        System.out.println("driver " + pid());
        for (String mode : List.of("atomic", "immediate")) {
          speculated(spark, mode, base.resolve(mode).toString(), base);
        }
        twoExecutors(spark, base.resolve("store").toString(), base.resolve("other").toString());
      } finally {
        spark.stop();
        workers.forEach(RpcEnv::shutdown);
        master.shutdown();
      }
    }

    /**
     * A write whose tasks run on both executors ({@code rows <n>}, {@code writers <pid>...}), then one probe task
     * per partition that opens two stores and reports its executor's Lance session ({@code session <pid> <session
     * identity> <session bytes> <budget bytes> <resident stores>}).
     */
    private static void twoExecutors(SparkSession spark, String store, String other) {
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
    }

    static String pid() {
      return Long.toString(ProcessHandle.current().pid());
    }

    /** A write whose partition 0 hangs on its first attempt after 250 rows, until Spark kills it. */
    private static void speculated(SparkSession spark, String mode, String path, Path base) throws Exception {
      Attempts attempts = new Attempts(mode);
      spark.sparkContext().addSparkListener(attempts);
      String hungFile = base.resolve("hung-" + mode).toString();
      StructType schema = new StructType().add("id", DataTypes.StringType, false).add("rollout_id", DataTypes.StringType)
          .add("reward", DataTypes.DoubleType);
      Dataset<Row> rows = spark.range(0, SPECULATED_PARTITIONS, 1, SPECULATED_PARTITIONS)
          .mapPartitions((MapPartitionsFunction<Long, Row>) it -> {
            TaskContext t = TaskContext.get();
            int p = t.partitionId();
            String marker = "p" + p + "-a" + t.attemptNumber();
            boolean hang = p == 0 && t.attemptNumber() == 0;
            if (p == 0 && !hang) {
              // the hung attempt records what it wrote before this attempt writes anything (Spark may speculate
              // it, and this attempt succeed and kill it, while it is still recording)
              long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
              while (!Files.exists(Path.of(hungFile)) && System.nanoTime() < end) {
                t.killTaskIfInterrupted();
                Thread.sleep(20);
              }
            }
            return new Iterator<Row>() {
              int i;

              @Override
              public boolean hasNext() {
                if (hang && i == ROWS_PER_PARTITION / 2) {
                  hangUntilKilled(t, path, hungFile, mode);
                }
                return i < ROWS_PER_PARTITION;
              }

              @Override
              public Row next() {
                int k = i++;
                return RowFactory.create(key(p, k), marker, k / 1000.0);
              }
            };
          }, Encoders.row(schema)).toDF();
      var w = rows.write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "8")
          .option("shards", "2").option("write.distribution", "none").option("write.commit", mode)
          .option("write.batch-rows", "64").mode("append");
      if (mode.equals("atomic")) {
        w = w.option("write.batch-bytes", "4KiB").option("merge.max-bytes", "4KiB");  // stage a part every few batches
      }
      w.save(path);
      attempts.awaitPartition0Ended();
      spark.sparkContext().removeSparkListener(attempts);
      attempts.lines.forEach(System.out::println);
      Path hung = Path.of(hungFile);
      if (Files.exists(hung)) {
        System.out.println("hung " + mode + " " + Files.readString(hung));
      }
    }

    /**
     * In the hung attempt, which has handed rows 0..249 to its writer (put or staged 64 at a time): records how
     * many parts it staged (its part names carry the hash of its part id, {@code <partition>-<task id>}) and
     * whether its first row is visible, then waits until Spark kills it.
     */
    static void hangUntilKilled(TaskContext t, String path, String hungFile, String mode) {
      try {
        String partHash = String.format("-%08x-", String.format("%06d-%d", t.partitionId(), t.taskAttemptId()).hashCode());
        long parts;
        parts = SparkJobKillTest.stagedParts(path).stream()
            .filter(f -> f.getFileName().toString().contains(partHash)).count();
        boolean visible;
        try (ContextStore s = ContextStore.open(Map.of("path", path))) {
          visible = s.get(key(0, 0)).map(r -> "p0-a0".equals(r.get("rollout_id"))).orElse(false);
        }
        Path tmp = Path.of(hungFile + ".tmp");
        Files.writeString(tmp, parts + " " + visible);
        Files.move(tmp, Path.of(hungFile), java.nio.file.StandardCopyOption.ATOMIC_MOVE);  // whole, or not there
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < end) {
          t.killTaskIfInterrupted();
          Thread.sleep(20);
        }
      } catch (InterruptedException | IOException e) {
        t.killTaskIfInterrupted();
        throw new IllegalStateException(e);
      }
      throw new IllegalStateException("the hung attempt of " + mode + " was not killed");
    }

  }

  /** Records every task attempt's end: {@code task <mode> <partition> <attempt> <speculative> <host> <reason>}. */
  static final class Attempts extends SparkListener {
    final String mode;
    final List<String> lines = new CopyOnWriteArrayList<>();
    private volatile int partition0Ended;

    Attempts(String mode) {
      this.mode = mode;
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      var info = end.taskInfo();
      String reason = end.reason().toString();
      lines.add("task " + mode + " " + info.partitionId() + " " + info.attemptNumber() + " " + info.speculative() + " "
          + info.host() + " " + reason.substring(0, Math.min(reason.length(), 80)).replace('\n', ' '));
      if (info.partitionId() == 0) {
        partition0Ended++;
      }
    }

    /** Waits until both attempts of partition 0 ended (the hung one is killed once the other succeeded). */
    void awaitPartition0Ended() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (partition0Ended < 2 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    }
  }
}
