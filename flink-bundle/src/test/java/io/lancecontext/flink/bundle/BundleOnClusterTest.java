package io.lancecontext.flink.bundle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.flink.bundle.job.BundleJob;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bundle is all a Flink 2.3 cluster needs besides Flink: a standalone session cluster as three JVMs (a
 * JobManager and two TaskManagers with one slot each, loopback only) whose class path is the bundle plus Flink's
 * own jars (the module's provided dependencies: flink-dist's modules, the table runtime and planner loader,
 * slf4j-api 1.7 with log4j's binding for it), as a distribution's {@code lib/} with the bundle copied in would
 * give, none of the connector's own jars or classes. The job is submitted as Flink's {@code bin/flink run} does
 * ({@code CliFrontend}, same class path) in a user jar that holds only {@link BundleJob}'s package: it writes a
 * store from both TaskManagers (DataStream, at-least-once) and through SQL (exactly-once), looks keys up from
 * both, and counts the store with a SQL scan whose split enumerator runs in the JobManager.
 *
 * <p>The JVMs run Flink's entry points (what {@code bin/start-cluster.sh} starts) rather than the distribution's
 * scripts: Maven Central does not serve {@code flink-dist}, so the distribution's scripts and default
 * {@code config.yaml} are not exercised; the JVM options are the ones docs/deploy-flink.md gives.
 */
class BundleOnClusterTest {
  private static final int ROWS = 20_000;
  /** The session budget the TaskManagers get, as docs/deploy-flink.md sets it ({@code env.java.opts.taskmanager}). */
  static final String BUDGET_OPTION = "-DLANCECONTEXT_CACHE_BYTES=64MiB";
  private static final long BUDGET = 64L << 20;
  /** Every Flink JVM's options for Arrow and lance-core (docs/deploy-flink.md, {@code env.java.opts.all}). */
  static final List<String> JVM_OPTIONS = List.of("--add-opens=java.base/java.nio=ALL-UNNAMED",
      "-Dlancecontext.native.sweep=true");
  /** lance-core's native log filter (docs/deploy-flink.md): the environment of every Flink JVM. */
  static final String LANCE_LOG = "warn,lance::index=off";

  @TempDir
  Path dir;

  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stopCluster() throws InterruptedException {
    for (Process p : processes) {
      p.destroy();
    }
    for (Process p : processes) {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void flinkJarsPlusTheBundleWriteLookUpAndScanAStoreOnTwoTaskManagers() throws Exception {
    String bundle = Path.of(System.getProperty("lancecontext.bundle.jar")).toAbsolutePath().toString();
    List<String> flink = List.of(Files.readString(Path.of(System.getProperty("lancecontext.flink.classpath")))
        .strip().split(File.pathSeparator));
    for (String jar : flink) {
      assertFalse(jar.contains("/io/lancecontext/") || jar.endsWith("classes") || jar.contains("/org/lance/")
          || jar.contains("/org/apache/arrow/"), "Flink's class path holds only Flink's jars: " + jar);
    }
    assertTrue(flink.stream().anyMatch(j -> j.contains("slf4j-api-1.7.")), "Flink's slf4j-api 1.7: " + flink);
    // lib/ as bin/config.sh lists it: the bundle sorts before log4j-*.jar, flink-dist comes last
    String classPath = bundle + File.pathSeparator + String.join(File.pathSeparator, flink);

    int rpcPort = freePort();
    int restPort = freePort();
    Path conf = writeConfig(rpcPort, restPort);
    start("jobmanager", "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint", classPath, conf,
        List.of());
    Process tm1 = start("taskmanager-1", "org.apache.flink.runtime.taskexecutor.TaskManagerRunner", classPath, conf,
        List.of(BUDGET_OPTION));
    Process tm2 = start("taskmanager-2", "org.apache.flink.runtime.taskexecutor.TaskManagerRunner", classPath, conf,
        List.of(BUDGET_OPTION));
    awaitTaskManagers(restPort, 2, Duration.ofSeconds(120));

    Path jobJar = jobJar();
    Path store = dir.resolve("store");
    Process client = start("client", "org.apache.flink.client.cli.CliFrontend", classPath, conf, List.of(),
        "run", "-c", BundleJob.class.getName(), jobJar.toString(), store.toString(), Integer.toString(ROWS));
    if (!client.waitFor(200, TimeUnit.SECONDS)) {
      client.destroyForcibly().waitFor();
    }
    List<String> out = Files.readAllLines(dir.resolve("logs").resolve("client.out"));
    System.out.println("flink run printed:\n" + String.join("\n", out));
    assertEquals(0, client.exitValue(), () -> "flink run failed: " + out + "\n" + logTails());

    assertTrue(out.contains("written " + ROWS) && out.contains("inserted 2"), out::toString);
    assertTrue(out.contains("joined 20"), () -> "every probe found its key: " + out);
    assertTrue(out.contains("count " + (ROWS + 2)), () -> "the SQL scan counts every row: " + out);
    List<Map<String, String>> reports = out.stream().filter(l -> l.startsWith("report ")).map(BundleOnClusterTest::parse)
        .toList();
    assertEquals(Set.of(Long.toString(tm1.pid()), Long.toString(tm2.pid())),
        reports.stream().map(r -> r.get("pid")).collect(Collectors.toSet()),
        () -> "the lookup join ran in both TaskManager JVMs: " + out);
    long puts = 0;
    for (Map<String, String> r : reports) {
      assertEquals("true", r.get("systemLoader"), "lancecontext's runtime is lib/'s, not the job's: " + r);
      assertEquals("true", r.get("jobLoader"), "the job's classes come from its jar: " + r);
      assertEquals(Path.of(bundle), Path.of(r.get("from")), "loaded from the bundle: " + r);
      assertEquals("true", r.get("session"), "the TaskManager built the shared session: " + r);
      assertEquals(Long.toString(BUDGET), r.get("budget"), r.toString());
      assertTrue(Long.parseLong(r.get("sessionBytes")) <= BUDGET * 11 / 10, "within its budget: " + r);
      assertEquals("1", r.get("residentStores"), r.toString());
      assertTrue(Long.parseLong(r.get("puts")) > 0, "this TaskManager wrote: " + r);
      puts += Long.parseLong(r.get("puts"));
    }
    assertTrue(puts >= 2);

    // Flink's logging is intact (no slf4j-api 2 in the bundle to shadow Flink's 1.7 binding), and lancecontext's
    // own loggers write into the TaskManagers' log files through it
    for (String tm : List.of("taskmanager-1", "taskmanager-2")) {
      String log = Files.readString(dir.resolve("logs").resolve(tm + ".log"));
      assertTrue(log.contains("org.apache.flink.runtime.taskexecutor.TaskExecutor"), tm + " logs Flink's lines");
      assertTrue(log.contains("io.lancecontext.core.internal.store.ResidentStore - Opened store"),
          tm + " logs lancecontext's lines:\n" + tail(dir.resolve("logs").resolve(tm + ".log"), 40));
      String err = Files.readString(dir.resolve("logs").resolve(tm + ".err"));
      assertFalse(err.contains("SLF4J"), tm + ": SLF4J complains about its bindings:\n" + err);
    }
  }

  /** The user jar: {@link BundleJob}'s package only, as a job project's jar would hold it without the connector. */
  private Path jobJar() throws Exception {
    Path classes = Paths.get(BundleJob.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    String pkg = BundleJob.class.getPackageName().replace('.', '/');
    Path jar = dir.resolve("job.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        Stream<Path> files = Files.walk(classes.resolve(pkg))) {
      for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
        out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace(File.separatorChar, '/')));
        Files.copy(f, (OutputStream) out);
        out.closeEntry();
      }
    }
    return jar;
  }

  private Path writeConfig(int rpcPort, int restPort) throws IOException {
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
        "appender.file.layout.pattern = %d{HH:mm:ss.SSS} %-5level %c - %msg%n",
        "");
    Files.writeString(conf.resolve("log4j.properties"), log4j);
    return conf;
  }

  private Process start(String name, String main, String classPath, Path conf, List<String> jvmOptions,
      String... args) throws IOException {
    String java = System.getProperty("lancecontext.test.java", Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    Path logs = Files.createDirectories(dir.resolve("logs"));
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx320m", "-XX:MaxDirectMemorySize=512m", "-XX:+UseSerialGC",
        "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED"));
    // the build's fast-start flags (C1 alone, no class verification)
    String startFlags = System.getProperty("lancecontext.test.jvm.flags", "").trim();
    if (!startFlags.isEmpty()) {
      cmd.addAll(List.of(startFlags.split("\\s+")));
    }
    cmd.addAll(JVM_OPTIONS);
    cmd.addAll(jvmOptions);
    cmd.addAll(List.of("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
        "-Dlog4j.configurationFile=" + conf.resolve("log4j.properties").toUri(),
        "-Dlog.file=" + logs.resolve(name + ".log"),
        "-cp", classPath, main));
    if (args.length == 0) {
      cmd.addAll(List.of("--configDir", conf.toString()));
    }
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd)
        .redirectOutput(logs.resolve(name + ".out").toFile())
        .redirectError(logs.resolve(name + ".err").toFile());
    pb.environment().put("FLINK_CONF_DIR", conf.toString());
    pb.environment().put("LANCE_LOG", LANCE_LOG);
    pb.environment().remove("LANCECONTEXT_CACHE_BYTES");
    Process p = pb.start();
    processes.add(p);
    return p;
  }

  private void awaitTaskManagers(int restPort, int count, Duration timeout) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + "/taskmanagers"))
        .timeout(Duration.ofSeconds(5)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "(no answer)";
    while (System.nanoTime() < deadline) {
      for (Process p : processes) {
        if (!p.isAlive()) {
          throw new AssertionError("a cluster JVM exited (" + p.exitValue() + "):\n" + logTails());
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

  private static Map<String, String> parse(String report) {
    Map<String, String> out = new HashMap<>();
    Matcher m = Pattern.compile("(\\w+)=(\\S+)").matcher(report);
    while (m.find()) {
      out.put(m.group(1), m.group(2));
    }
    return out;
  }

  private String logTails() {
    StringBuilder sb = new StringBuilder();
    try (Stream<Path> files = Files.list(dir.resolve("logs"))) {
      for (Path f : files.sorted().toList()) {
        sb.append("== ").append(f.getFileName()).append('\n').append(tail(f, 20)).append('\n');
      }
    } catch (IOException e) {
      sb.append(e);
    }
    return sb.toString();
  }

  private static String tail(Path f, int n) {
    try {
      List<String> lines = Files.readAllLines(f);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    } catch (IOException e) {
      return e.toString();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
