package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.flink.sink.LanceContextSink;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standalone Flink session cluster as three child JVMs (a JobManager and two TaskManagers with one slot
 * each, loopback only): a job submitted over REST writes a store from both TaskManagers, then a SQL lookup
 * join enriches probes from that store with one lookup subtask in each TaskManager, and each row reports, from
 * the JVM that looked it up, one Lance session, built in the system class loader and within the budget its
 * environment gives ({@code LANCECONTEXT_CACHE_BYTES}), one resident store and that JVM's puts of the write.
 *
 * <p>Why the test class path and not {@code flink-dist}: Maven Central does not serve
 * {@code org.apache.flink:flink-dist} (nor {@code flink-dist_2.12}) at any version; Flink publishes the distribution as a
 * tarball on its download mirrors, which are not reachable. The three JVMs therefore run Flink's own entry
 * points ({@code StandaloneSessionClusterEntrypoint}, {@code TaskManagerRunner}, what {@code bin/start-cluster.sh}
 * starts) from this test's class path, which holds flink-runtime, flink-table-runtime, lance-core and the
 * connector as a cluster's {@code lib/} would: the same processes, class loading (the connector in the
 * system class loader, the job's classes resolved there too) and REST submission as a distribution's
 * cluster, without its scripts and default {@code config.yaml}.
 */
class FlinkTwoTaskManagersTest {
  private static final int ROWS = 20_000;
  private static final int PROBES = 20;
  private static final long BUDGET = 64L << 20;
  private static final int MAX_PARALLELISM = 128;

  @TempDir
  static Path dir;

  private static final List<Process> processes = new ArrayList<>();

  @AfterAll
  static void stopCluster() throws InterruptedException {
    for (Process p : processes) {
      p.destroy();
    }
    for (Process p : processes) {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
    ContextStore.closeAllResident();
  }

  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  void eachTaskManagerWritesAndLooksUpThroughOneBoundedLanceSession() throws Exception {
    int rpcPort = freePort();
    int restPort = freePort();
    Path conf = writeConfig(rpcPort, restPort);
    start("jobmanager", StandaloneSessionClusterEntrypoint.class, conf);
    start("taskmanager-1", TaskManagerRunner.class, conf);
    start("taskmanager-2", TaskManagerRunner.class, conf);
    awaitTaskManagers(restPort, 2, Duration.ofSeconds(120));

    String path = dir.resolve("store").toString();
    int shards = 4;  // the sink sends bucket b to writer subtask b % 2: two buckets per TaskManager
    RowType type = RowType.of(new LogicalType[] {new VarCharType(false, VarCharType.MAX_LENGTH),
        new VarCharType(true, VarCharType.MAX_LENGTH), new IntType()}, new String[] {"id", "text_payload", "token_count"});
    Map<String, String> options = Map.of("path", path, "schema", "context", "schema.embedding-dim", "4",
        "shards", Integer.toString(shards));
    // at-least-once: the probe counts each TaskManager's puts (exactly-once would stage parts instead)
    LanceContextSink sink = LanceContextSink.builder().options(options).rowType(type)
        .deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build();

    StreamExecutionEnvironment write = remote(restPort);
    write.fromSequence(0, ROWS - 1)
        .map(new ToRow())
        .returns(InternalTypeInfo.of(type))
        .sinkTo(sink);
    write.execute("lancecontext two-TaskManager write");

    // a lookup join at parallelism 2 (the planner gives it its input's): one lookup subtask per TaskManager (two
    // slots, one each), the probes dealt round robin over both by the rebalance after the one probe source.
    // Each row carries the report of the JVM that looked it up, taken after its lookup (in the same task)
    StreamExecutionEnvironment lookups = remote(restPort);
    StreamTableEnvironment tables = StreamTableEnvironment.create(lookups);
    tables.createTemporarySystemFunction("SESSION_REPORT", SessionReport.class);
    tables.createTemporaryView("probes", tables.fromDataStream(
        lookups.fromSequence(0, PROBES - 1).setParallelism(1).rebalance().map(n -> "k" + (n * 97 % ROWS))
            .returns(Types.STRING),
        Schema.newBuilder().column("f0", DataTypes.STRING()).columnByExpression("pt", "PROCTIME()").build()));
    tables.executeSql("CREATE TABLE store (id STRING, token_count INT) WITH ('connector' = 'lancecontext', 'path' = '"
        + path + "')");
    Map<String, String> lastReport = new HashMap<>();
    Map<String, Integer> lookedUp = new HashMap<>();
    int joined = 0;
    try (CloseableIterator<Row> it = tables.executeSql("SELECT p.f0, s.token_count, SESSION_REPORT('" + path + "') "
        + "FROM probes AS p JOIN store FOR SYSTEM_TIME AS OF p.pt AS s ON p.f0 = s.id").collect()) {
      while (it.hasNext()) {
        Row row = it.next();
        String key = (String) row.getField(0);
        assertEquals(Integer.parseInt(key.substring(1)) % 1000, row.getField(1), "token_count of " + key);
        String pid = parse((String) row.getField(2)).get("pid");
        lastReport.put(pid, (String) row.getField(2));  // one subtask's rows arrive in order
        lookedUp.merge(pid, 1, Integer::sum);
        joined++;
      }
    }
    assertEquals(PROBES, joined, "every probe found its key");
    List<String> reports = new ArrayList<>(lastReport.values());

    assertEquals(2, reports.size(), "lookups per JVM: " + lookedUp + "; " + reports);
    Set<String> pids = new HashSet<>();
    long puts = 0;
    for (String report : reports) {
      Map<String, String> r = parse(report);
      pids.add(r.get("pid"));
      assertNotEquals(Long.toString(ProcessHandle.current().pid()), r.get("pid"), "a TaskManager JVM, not the test's");
      assertEquals("true", r.get("systemLoader"), "lancecontext's runtime is the JVM's, not a job's: " + report);
      assertEquals("true", r.get("session"), "the TaskManager built the shared session: " + report);
      assertEquals(Long.toString(BUDGET), r.get("budget"), report);
      assertTrue(Long.parseLong(r.get("sessionBytes")) <= BUDGET * 11 / 10, "within its budget: " + report);
      assertEquals("1", r.get("residentStores"), report);
      assertTrue(Long.parseLong(r.get("puts")) > 0, "this TaskManager wrote: " + report);
      puts += Long.parseLong(r.get("puts"));
    }
    assertEquals(2, pids.size(), "the lookup join ran in two TaskManager JVMs: " + lookedUp);
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(ROWS, store.count());
      assertEquals("row 12345", store.get("k12345").orElseThrow().get("text_payload"));
    }
    assertTrue(puts >= 2);
  }

  /** One row per number: key {@code k<n>}. */
  static final class ToRow implements MapFunction<Long, RowData> {
    @Override
    public RowData map(Long n) {
      return GenericRowData.of(StringData.fromString("k" + n), StringData.fromString("row " + n), (int) (n % 1000));
    }
  }

  /**
   * What the JVM evaluating it holds: its pid, the shared Lance session and budget, the resident stores and
   * its puts to the store at {@code path}. Not deterministic, so the planner evaluates it in the TaskManager,
   * per row, not once in the client.
   */
  public static final class SessionReport extends ScalarFunction {
    public String eval(String path) {
      LanceRuntime runtime = LanceRuntime.get();
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        StoreStats stats = store.stats();
        long puts = stats.shards().stream().mapToLong(StoreStats.Shard::puts).sum();
        return "pid=" + ProcessHandle.current().pid()
            + " systemLoader=" + (LanceRuntime.class.getClassLoader() == ClassLoader.getSystemClassLoader())
            + " session=" + (runtime.sharedSession() != null)
            + " budget=" + (runtime.sharedBudget() == null ? -1 : runtime.sharedBudget().bytes())
            + " sessionBytes=" + runtime.sessionSizeBytes()
            + " residentStores=" + stats.residentStores()
            + " puts=" + puts;
      }
    }

    @Override
    public boolean isDeterministic() {
      return false;
    }
  }

  private static Map<String, String> parse(String report) {
    Map<String, String> out = new HashMap<>();
    Matcher m = Pattern.compile("(\\w+)=(\\S+)").matcher(report);
    while (m.find()) {
      out.put(m.group(1), m.group(2));
    }
    return out;
  }

  /** The fewest buckets (from 4) whose keys Flink's key groups spread over both of two subtasks. */
  private static StreamExecutionEnvironment remote(int restPort) {
    Configuration c = new Configuration();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createRemoteEnvironment("127.0.0.1", restPort, c);
    env.setParallelism(2);
    env.setMaxParallelism(MAX_PARALLELISM);
    return env;
  }

  private static Path writeConfig(int rpcPort, int restPort) throws IOException {
    Path conf = Files.createDirectories(dir.resolve("conf"));
    Path tmp = Files.createDirectories(dir.resolve("flink-tmp"));
    String yaml = String.join("\n",
        "jobmanager.rpc.address: 127.0.0.1",
        "jobmanager.rpc.port: " + rpcPort,
        "jobmanager.bind-host: 127.0.0.1",
        "rest.address: 127.0.0.1",
        "rest.bind-address: 127.0.0.1",
        "rest.port: " + restPort,
        "taskmanager.host: 127.0.0.1",
        "taskmanager.bind-host: 127.0.0.1",
        "taskmanager.numberOfTaskSlots: 1",
        "taskmanager.cpu.cores: 1.0",
        "jobmanager.memory.heap.size: 256m",
        "jobmanager.memory.off-heap.size: 64m",
        "jobmanager.memory.jvm-metaspace.size: 192m",
        "jobmanager.memory.jvm-overhead.min: 64m",
        "jobmanager.memory.jvm-overhead.max: 64m",
        "taskmanager.memory.framework.heap.size: 64m",
        "taskmanager.memory.task.heap.size: 192m",
        "taskmanager.memory.managed.size: 16m",
        "taskmanager.memory.framework.off-heap.size: 64m",
        "taskmanager.memory.task.off-heap.size: 64m",
        "taskmanager.memory.network.min: 32m",
        "taskmanager.memory.network.max: 32m",
        "taskmanager.memory.jvm-metaspace.size: 192m",
        "taskmanager.memory.jvm-overhead.min: 64m",
        "taskmanager.memory.jvm-overhead.max: 64m",
        "io.tmp.dirs: " + tmp,
        "web.submit.enable: false",
        "");
    Files.writeString(conf.resolve("config.yaml"), yaml);
    String log4j = String.join("\n",
        "rootLogger.level = info",
        "rootLogger.appenderRef.file.ref = file",
        "appender.file.type = File",
        "appender.file.name = file",
        "appender.file.fileName = ${sys:log.file}",
        "appender.file.layout.type = PatternLayout",
        "appender.file.layout.pattern = %d{HH:mm:ss.SSS} %-5level %c{1} - %msg%n",
        "");
    Files.writeString(conf.resolve("log4j.properties"), log4j);
    return conf;
  }

  private static void start(String name, Class<?> main, Path conf) throws IOException {
    String java = System.getProperty("lancecontext.test.java", Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    Path logs = Files.createDirectories(dir.resolve("logs"));
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx320m", "-XX:MaxDirectMemorySize=512m", "-XX:+UseSerialGC"));
    cmd.addAll(ChildJvm.startFlags());
    cmd.addAll(List.of(
        "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED",
        "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
        "-Dlog4j.configurationFile=" + conf.resolve("log4j.properties").toUri(),
        "-Dlog.file=" + logs.resolve(name + ".log"),
        "-cp", System.getProperty("java.class.path"),
        main.getName(), "--configDir", conf.toString()));
    ProcessBuilder pb = new ProcessBuilder(cmd)
        .redirectOutput(logs.resolve(name + ".out").toFile())
        .redirectError(logs.resolve(name + ".err").toFile());
    // the cluster-wide session budget, as docs/flink.md sets it for TaskManagers
    pb.environment().put("LANCECONTEXT_CACHE_BYTES", Long.toString(BUDGET));
    Process p = pb.start();
    processes.add(p);
  }

  private static void awaitTaskManagers(int restPort, int count, Duration timeout) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + "/taskmanagers"))
        .timeout(Duration.ofSeconds(5)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "(no answer)";
    while (System.nanoTime() < deadline) {
      for (Process p : processes) {
        if (!p.isAlive()) {
          throw new AssertionError("a cluster JVM exited (" + p.exitValue() + "); logs in " + dir.resolve("logs")
              + ":\n" + logTails());
        }
      }
      try {
        last = http.send(request, HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("\"id\"").matcher(last);
        int n = 0;
        while (m.find()) {
          n++;
        }
        if (n >= count) {
          return;
        }
      } catch (IOException e) {
        last = e.toString();
      }
      Thread.sleep(500);
    }
    throw new AssertionError(count + " TaskManagers did not register in " + timeout + "; last answer " + last + "\n"
        + logTails());
  }

  private static String logTails() {
    StringBuilder sb = new StringBuilder();
    try (var files = Files.list(dir.resolve("logs"))) {
      for (Path f : files.sorted().toList()) {
        List<String> lines = Files.readAllLines(f);
        sb.append("== ").append(f.getFileName()).append('\n')
            .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()))).append('\n');
      }
    } catch (IOException e) {
      sb.append(e);
    }
    return sb.toString();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
