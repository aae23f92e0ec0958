package io.lancecontext.it;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An engine job in a JVM of its own, on this JVM's class path (the engine's), started with the {@code AWS_*}
 * environment lance-core 7.0.0's MemWAL reads at process start. The job reads its store options from stdin
 * ({@code key=value} lines, then {@code end}: never on its command line), prints {@code name value} lines and
 * ends with {@code done}; its stderr (its whole log) goes to a file. Its stdin stays open until {@link #close()}:
 * a job that calls {@link #exitWhenStdinCloses} ends when this JVM does, so a killed build leaves no job behind.
 * JDK only.
 */
public final class JobProcess implements AutoCloseable {
  private final Process process;
  private final BufferedReader out;
  private final Path log;
  private final List<String> printed = new ArrayList<>();
  /** Kept open while the job runs: the job exits when it closes (see {@link #exitWhenStdinCloses}). */
  private BufferedWriter in;

  private JobProcess(Process process, Path log) {
    this.process = process;
    this.log = log;
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }

  /**
   * Starts {@code mainClass} with {@code jvmFlags}, {@code env} added to this JVM's environment (without its
   * {@code AWS_*}), and sends it {@code options}.
   */
  public static JobProcess start(Class<?> mainClass, Path log, List<String> jvmFlags, Map<String, String> env,
      Map<String, String> options) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(S3Server.java());
    cmd.addAll(S3Server.startFlags());
    cmd.addAll(jvmFlags);
    cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(mainClass.getName());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("AWS_"));
    pb.environment().putAll(env);
    JobProcess job = new JobProcess(pb.start(), log);
    job.in = new BufferedWriter(new OutputStreamWriter(job.process.getOutputStream(), StandardCharsets.UTF_8));
    for (Map.Entry<String, String> e : options.entrySet()) {
      job.in.write(e.getKey() + "=" + e.getValue());
      job.in.newLine();
    }
    job.in.write("end");
    job.in.newLine();
    job.in.flush();
    return job;
  }

  /**
   * Reads the job's lines up to {@code done}; fails on an {@code error} line, an early exit, or when the job
   * has not exited within {@code timeoutSeconds} (it is killed then).
   */
  public List<String[]> runToEnd(long timeoutSeconds) throws IOException, InterruptedException {
    Thread watchdog = new Thread(() -> {
      try {
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "job-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    List<String[]> lines = new ArrayList<>();
    String line;
    while ((line = out.readLine()) != null && !line.equals("done")) {
      printed.add(line);
      if (line.startsWith("error ")) {
        throw new AssertionError("the job failed: " + line + "\n" + S3Server.tail(log));
      }
      int sp = line.indexOf(' ');
      lines.add(sp < 0 ? new String[] {line, ""} : new String[] {line.substring(0, sp), line.substring(sp + 1)});
    }
    if (line == null) {
      throw new AssertionError("the job exited before 'done' (or was killed after " + timeoutSeconds
          + " s); its log:\n" + S3Server.tail(log));
    }
    watchdog.join();  // the job exits after 'done' (or is killed at the deadline)
    process.waitFor(30, TimeUnit.SECONDS);
    if (process.isAlive()) {
      throw new AssertionError("the job did not exit within " + timeoutSeconds + " s");
    }
    if (process.exitValue() != 0) {
      throw new AssertionError("the job exited with " + process.exitValue() + "; its log:\n" + S3Server.tail(log));
    }
    return lines;
  }

  /** Everything the job printed on stdout. */
  public List<String> printed() {
    return printed;
  }

  public Path log() {
    return log;
  }

  /** The value of the first line named {@code name}. */
  public static String value(List<String[]> lines, String name) {
    return lines.stream().filter(l -> l[0].equals(name)).map(l -> l[1]).findFirst()
        .orElseThrow(() -> new AssertionError("no '" + name + "' line"));
  }

  /** The values of every line named {@code name}, in order. */
  public static List<String> values(List<String[]> lines, String name) {
    return lines.stream().filter(l -> l[0].equals(name)).map(l -> l[1]).toList();
  }

  /**
   * Fails naming the first place {@code secret} appears: a line of {@code logs} or of {@code printed}. Also
   * fails when the logs are empty (nothing captured proves nothing).
   */
  public static void assertSecretAbsent(String secret, List<Path> logs, List<String> printed) throws IOException {
    if (secret == null || secret.length() < 16) {
      throw new AssertionError("a secret to look for, not " + secret);
    }
    for (Path log : logs) {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      if (lines.isEmpty()) {
        throw new AssertionError(log + " captured nothing");
      }
      for (String line : lines) {
        if (line.contains(secret)) {
          throw new AssertionError(log.getFileName() + " shows the secret key: " + line.replace(secret, "<secret>"));
        }
      }
    }
    for (String line : printed) {
      if (line.contains(secret)) {
        throw new AssertionError("the job printed the secret key: " + line.replace(secret, "<secret>"));
      }
    }
  }

  /** Every message of {@code t}'s cause chain on one line, for a job to print. */
  public static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getClass().getSimpleName()).append(": ").append(String.valueOf(c.getMessage()).replace('\n', ' '))
          .append(" | ");
    }
    return sb.toString();
  }

  /**
   * For a job's main: reads its options from stdin ({@code key=value} lines up to {@code end}), then exits the
   * JVM when stdin closes ({@link #exitWhenStdinCloses}).
   */
  public static Map<String, String> readOptionsFromStdin() throws IOException {
    Map<String, String> options = new java.util.LinkedHashMap<>();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null && !line.equals("end"); ) {
      int eq = line.indexOf('=');
      options.put(line.substring(0, eq), line.substring(eq + 1));
    }
    exitWhenStdinCloses(System.in);  // the test's JVM ended: so does this one
    return options;
  }

  /**
   * For a job's main, after it read its options: exits the JVM (status 3) when stdin closes, which happens when
   * the test's JVM ends or calls {@link #close()}.
   */
  public static void exitWhenStdinCloses(java.io.InputStream stdin) {
    Thread t = new Thread(() -> {
      try {
        while (stdin.read() >= 0) {
          // nothing else comes
        }
      } catch (IOException ignored) {
        // closed
      }
      Runtime.getRuntime().halt(3);
    }, "exit-when-stdin-closes");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws InterruptedException {
    try {
      in.close();
    } catch (IOException ignored) {
      // the job has gone already
    }
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }
}
