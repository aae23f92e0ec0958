package io.lancecontext.core.testing;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Another JVM running a main class of the test classpath, driven line by line over stdin/stdout (its
 * stderr goes to a log file). Used for the cross-process guarantees: visibility, crash durability and
 * shard contention.
 */
public final class ChildJvm implements AutoCloseable {
  private final Process process;
  private final BufferedReader out;
  private final BufferedWriter in;
  private final Path log;

  private ChildJvm(Process process, Path log) {
    this.process = process;
    this.log = log;
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.in = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
  }

  /** Starts {@code mainClass} with {@code args}; its stderr goes to {@code log}. */
  public static ChildJvm start(Class<?> mainClass, Path log, String... args) throws IOException {
    return start(mainClass, log, Map.of(), args);
  }

  /** Starts {@code mainClass} with {@code args} and these environment variables added to this JVM's. */
  public static ChildJvm start(Class<?> mainClass, Path log, Map<String, String> env, String... args)
      throws IOException {
    String java = System.getProperty("lancecontext.test.java", Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    // a child lives seconds: one GC thread starts it faster on 2 cores than G1
    List<String> flags = new ArrayList<>(List.of("-Xmx512m", "-XX:+UseSerialGC"));
    flags.addAll(startFlags());
    flags.add("--add-opens=java.base/java.nio=ALL-UNNAMED");
    flags.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    // the JVM's own warnings (a refused class-data archive among them) go to the log, not among the answers on stdout
    flags.addAll(List.of("-Xlog:disable", "-Xlog:all=warning:stderr"));
    boolean simpleLogging = ChildClassPath.simpleLogging()
        && env.keySet().stream().noneMatch(k -> k.endsWith("LOG_LEVEL"));  // S3StoreTest's DEBUG run: Log4j 2's levels
    if (simpleLogging) {
      flags.addAll(ChildClassPath.SIMPLE_LOGGING_FLAGS);
    }
    List<String> classPath = ChildClassPath.of(System.getProperty("java.class.path"), simpleLogging);
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.addAll(flags);
    if (simpleLogging) {  // the rare child with its own logging (a DEBUG run) is not worth a training run
      cmd.addAll(SharedClasses.flags(java, flags, classPath));
    }
    cmd.add("-cp");
    cmd.add(String.join(File.pathSeparator, classPath));
    cmd.add(mainClass.getName());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
    pb.environment().putAll(env);
    return new ChildJvm(pb.start(), log);
  }

  /**
   * The flags that start a test JVM faster (C1 alone, no verification of class-path classes): the build's
   * {@code test.start.flags}, which it passes to test JVMs as system property {@code lancecontext.test.jvm.flags}
   * for the JVMs they start in turn (child processes, Spark executors, Flink TaskManagers). Empty outside the build.
   */
  public static List<String> startFlags() {
    String flags = System.getProperty("lancecontext.test.jvm.flags", "").trim();
    return flags.isEmpty() ? List.of() : List.of(flags.split("\\s+"));
  }

  /** Sends one line. */
  public void send(String line) throws IOException {
    in.write(line);
    in.newLine();
    in.flush();
  }

  /** The next line the child prints, or null at its end. */
  public String readLine() throws IOException {
    return out.readLine();
  }

  /** Sends a command and returns the child's one-line answer. */
  public String ask(String line) throws IOException {
    send(line);
    String answer = readLine();
    if (answer == null) {
      throw new IOException("child exited; its log:\n" + tail());
    }
    return answer;
  }

  /** Waits for the child to exit and returns its exit code (-1 if it had to be killed). */
  public int waitFor(long seconds) throws InterruptedException {
    if (process.waitFor(seconds, TimeUnit.SECONDS)) {
      return process.exitValue();
    }
    process.destroyForcibly().waitFor();
    return -1;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The last lines of the child's stderr log. */
  public String tail() {
    try {
      List<String> lines = java.nio.file.Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }
}
