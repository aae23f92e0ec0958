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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine tests' side of {@link S3ServerMain}: starts it in a JVM of its own, on the class path this
 * module wrote for it (system property {@value #CLASSPATH_FILE}, a file with the class path, and
 * {@value #CLASSES}, this module's test classes), and hands out what a job needs to use it: store options
 * ({@code storage.*} only) and the {@code AWS_*} environment lance-core 7.0.0's MemWAL reads. JDK only, so
 * that it adds nothing to an engine's class path.
 */
public final class S3Server implements AutoCloseable {
  public static final String CLASSPATH_FILE = "lancecontext.it.s3-server-classpath";
  public static final String CLASSES = "lancecontext.it.s3-server-classes";

  private final Process process;
  private final BufferedReader out;
  private final BufferedWriter in;
  private final Path log;
  private final Map<String, String> said = new HashMap<>();
  private final AtomicInteger names = new AtomicInteger();

  private S3Server(Process process, Path log) {
    this.process = process;
    this.log = log;
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.in = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
  }

  /** Starts the server; its stderr goes to {@code log}. Returns once the bucket exists. */
  public static S3Server start(Path log) throws IOException {
    String file = System.getProperty(CLASSPATH_FILE);
    String classes = System.getProperty(CLASSES);
    if (file == null || classes == null) {
      throw new IllegalStateException("system properties " + CLASSPATH_FILE + " and " + CLASSES
          + " name the S3 server's class path (set by integration-tests/pom.xml)");
    }
    String cp = classes + java.io.File.pathSeparator + Files.readString(Path.of(file), StandardCharsets.UTF_8).trim();
    List<String> cmd = new java.util.ArrayList<>(List.of(java(), "-Xmx256m"));
    cmd.addAll(startFlags());
    cmd.addAll(List.of("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"), "-cp", cp, S3ServerMain.class.getName()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
    // the server needs no credentials from the environment; keep AWS_* of the build out of it
    pb.environment().keySet().removeIf(k -> k.startsWith("AWS_"));
    pb.environment().put("AWS_EC2_METADATA_DISABLED", "true");
    S3Server server = new S3Server(pb.start(), log);
    String line;
    while ((line = server.out.readLine()) != null && !line.equals("ready")) {
      int sp = line.indexOf(' ');
      server.said.put(line.substring(0, sp), line.substring(sp + 1));
    }
    if (line == null) {
      server.close();
      throw new IOException("the S3 server exited before it was ready; its log:\n" + tail(log));
    }
    return server;
  }

  /**
   * The build's flags that start a test JVM faster (C1 alone, no class verification; {@code test.start.flags} of
   * the project's POM, passed on to the consumer builds as {@code lancecontext.test.jvm.flags}); none outside it.
   */
  static List<String> startFlags() {
    String flags = System.getProperty("lancecontext.test.jvm.flags", "").trim();
    return flags.isEmpty() ? List.of() : List.of(flags.split("\\s+"));
  }

  static String java() {
    return System.getProperty("lancecontext.test.java", Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  /** {@code http://127.0.0.1:<port>}. */
  public String endpoint() {
    return said.get("endpoint");
  }

  public String secretKey() {
    return said.get("secret");
  }

  public String bucket() {
    return said.get("bucket");
  }

  /** A fresh location in the bucket: {@code s3://<bucket>/<name>-<n>}. */
  public String newUri(String name) {
    return "s3://" + bucket() + "/" + name + "-" + names.incrementAndGet();
  }

  /** Endpoint, region, credentials and {@code allow_http} as store options ({@code storage.<key>}). */
  public Map<String, String> storeOptions() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("storage.aws_endpoint", endpoint());
    m.put("storage.aws_region", said.get("region"));
    m.put("storage.aws_access_key_id", said.get("access-key"));
    m.put("storage.aws_secret_access_key", secretKey());
    m.put("storage.allow_http", "true");
    return m;
  }

  /** The environment lance-core 7.0.0's MemWAL reads instead of the storage options (docs/object-storage.md). */
  public Map<String, String> environment() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("AWS_ENDPOINT", endpoint());
    m.put("AWS_REGION", said.get("region"));
    m.put("AWS_ACCESS_KEY_ID", said.get("access-key"));
    m.put("AWS_SECRET_ACCESS_KEY", secretKey());
    m.put("AWS_ALLOW_HTTP", "true");
    m.put("AWS_EC2_METADATA_DISABLED", "true");
    return m;
  }

  /** The keys of the objects under {@code uri} ({@code s3://<bucket>/<prefix>}), relative to it. */
  public synchronized List<String> list(String uri) throws IOException {
    String prefix = uri.substring(("s3://" + bucket() + "/").length()) + "/";
    in.write("list " + prefix);
    in.newLine();
    in.flush();
    List<String> keys = new ArrayList<>();
    String line;
    while ((line = out.readLine()) != null && !line.equals("end")) {
      keys.add(line.substring("object ".length() + prefix.length()));
    }
    if (line == null) {
      throw new IOException("the S3 server exited; its log:\n" + tail(log));
    }
    return keys;
  }

  public Path log() {
    return log;
  }

  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public void close() throws IOException {
    try {
      if (process.isAlive()) {
        in.write("stop");
        in.newLine();
        in.flush();
      }
    } catch (IOException ignored) {
      // it has gone already
    }
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
