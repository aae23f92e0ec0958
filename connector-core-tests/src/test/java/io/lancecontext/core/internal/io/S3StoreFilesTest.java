package io.lancecontext.core.internal.io;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.testing.S3ServerExtension;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What S3 adds to the {@link StoreFiles} contract: configuration, client sharing, secrecy, request costs. */
class S3StoreFilesTest {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();

  private static Map<String, String> without(String... keys) {
    Map<String, String> m = new HashMap<>(S3.storageOptions());
    for (String k : keys) {
      m.remove(k);
    }
    return m;
  }

  @Test
  void missingRegionAndCredentialsAreBadOptionsNamingEveryMissingKey() {
    BadOptionException e = assertThrows(BadOptionException.class, () -> StoreFiles.forUri("s3://b/store",
        without("aws_region", "aws_access_key_id", "aws_secret_access_key")));
    assertEquals("storage.aws_region", e.key());
    for (String k : List.of("storage.aws_region", "storage.aws_access_key_id", "storage.aws_secret_access_key")) {
      assertTrue(e.getMessage().contains(k), e.getMessage());
    }
    BadOptionException secret = assertThrows(BadOptionException.class,
        () -> StoreFiles.forUri("s3://b/store", without("aws_secret_access_key")));
    assertEquals("storage.aws_secret_access_key", secret.key());
    assertThrows(BadOptionException.class, () -> StoreFiles.forUri("s3://b/store"), "no storage options at all");
  }

  @Test
  void aPlainHttpEndpointNeedsAllowHttpAsLanceDoes() {
    BadOptionException e = assertThrows(BadOptionException.class,
        () -> StoreFiles.forUri("s3://b/store", without("allow_http")));
    assertEquals("storage.allow_http", e.key());
    Map<String, String> alias = without("allow_http");
    alias.put("aws_allow_http", "true");
    StoreFiles.forUri("s3://b/store", alias);
    Map<String, String> bad = new HashMap<>(S3.storageOptions());
    bad.put("allow_http", "yes");
    assertEquals("storage.allow_http", assertThrows(BadOptionException.class,
        () -> StoreFiles.forUri("s3://b/store", bad)).key());
  }

  @Test
  void twoAliasesOfOneSettingMustAgree() {
    Map<String, String> m = new HashMap<>(S3.storageOptions());
    m.put("endpoint", "http://127.0.0.1:1");
    BadOptionException e = assertThrows(BadOptionException.class, () -> StoreFiles.forUri("s3://b/store", m));
    assertTrue(e.getMessage().contains("storage.aws_endpoint"), e.getMessage());
    m.put("endpoint", S3.endpoint());
    StoreFiles.forUri("s3://b/store", m);
  }

  @Test
  void aUriWithoutABucketIsABadPath() {
    assertEquals("path", assertThrows(BadOptionException.class, () -> StoreFiles.forUri("s3:///x", S3.storageOptions())).key());
  }

  @Test
  void gcsAndAzureAreRefusedNamingWhatIsMissing() {
    for (String uri : List.of("gs://bucket/store", "az://container/store", "abfss://c@acct.dfs.core.windows.net/s")) {
      BadOptionException e = assertThrows(BadOptionException.class, () -> StoreFiles.forUri(uri, Map.of()));
      assertEquals("path", e.key());
      assertTrue(e.getMessage().contains("not supported yet") && e.getMessage().contains("missing:"), e.getMessage());
    }
    assertEquals("path", assertThrows(BadOptionException.class, () -> StoreFiles.forUri("hdfs://nn/s", Map.of())).key());
  }

  @Test
  void storesWithTheSameEndpointAndCredentialsShareOneClient() {
    S3StoreFiles a = (S3StoreFiles) StoreFiles.forUri(S3.newUri("a"), S3.storageOptions());
    S3StoreFiles b = (S3StoreFiles) StoreFiles.forUri(S3.newUri("b"), new LinkedHashMap<>(S3.storageOptions()));
    assertTrue(a.sharesClientWith(b));
    Map<String, String> other = new HashMap<>(S3.storageOptions());
    other.put("aws_secret_access_key", "another-secret");
    S3StoreFiles c = (S3StoreFiles) StoreFiles.forUri(S3.newUri("c"), other);
    assertNotSame(a, c);
    assertFalse(a.sharesClientWith(c), "other credentials, other client");
  }

  @Test
  void secretsAppearInNoToStringExceptionOrLogLine() throws Exception {
    String secret = S3.secretKey();
    String wrongSecret = "wrong-secret-" + System.nanoTime();
    String token = "session-token-" + System.nanoTime();
    // the server's and the SDK's threads may still log while the test reads what was captured
    List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
    try (CapturedLogs logs = new CapturedLogs(lines)) {
      StoreFiles files = StoreFiles.forUri(S3.newUri("secrets"), S3.storageOptions());
      files.overwrite("x", "1".getBytes(UTF_8));
      files.read("x");
      files.listPrefix("");
      assertThrows(StoreFiles.NotFound.class, () -> files.read("absent"));
      lines.add(files.toString());
      lines.add(S3Settings.from(S3.storageOptions()).toString());

      Map<String, String> wrong = new HashMap<>(S3.storageOptions());
      wrong.put("aws_secret_access_key", wrongSecret);
      StoreFiles denied = StoreFiles.forUri(S3.newUri("denied"), wrong);
      lines.add(denied.toString());
      Map<String, String> withToken = new HashMap<>(wrong);
      withToken.put("aws_session_token", token);
      lines.add(StoreFiles.forUri(S3.newUri("token"), withToken).toString());
      lines.add(S3Settings.from(withToken).toString());
      IOException e = assertThrows(IOException.class, () -> denied.read("x"));
      assertTrue(e.getMessage().contains("403"), e.getMessage());
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      lines.add(trace.toString());
    }
    List<String> captured;
    synchronized (lines) {
      captured = new ArrayList<>(lines);
    }
    assertTrue(captured.size() > 6, "the SDK's DEBUG log was captured: " + captured.size());
    for (String line : captured) {
      for (String s : List.of(secret, wrongSecret, token)) {
        assertFalse(line.contains(s), "a secret in: " + line);
      }
    }
  }

  /**
   * A create whose response is lost (the connection drops after the server applied the PUT) is retried
   * by the SDK and then meets its own object: it must still be reported as created, or a lease would be
   * held by nobody until it expires.
   */
  @Test
  void aCreateWhoseResponseWasLostIsStillReportedAsCreated() throws Exception {
    try (ResponseDroppingProxy proxy = new ResponseDroppingProxy(java.net.URI.create(S3.endpoint()).getPort())) {
      Map<String, String> viaProxy = new HashMap<>(S3.storageOptions());
      viaProxy.put("aws_endpoint", "http://127.0.0.1:" + proxy.port());
      String uri = S3.newUri("lost-response");
      StoreFiles files = StoreFiles.forUri(uri, viaProxy);
      byte[] mine = "holder A".getBytes(UTF_8);
      assertTrue(files.createIfAbsent("_lc/lease/1", mine), "the create that won, whose response was lost");
      assertEquals(1, proxy.dropped(), "the first response was dropped");
      assertEquals("holder A", new String(StoreFiles.forUri(uri, S3.storageOptions()).read("_lc/lease/1"), UTF_8));
      assertFalse(files.createIfAbsent("_lc/lease/1", "holder B".getBytes(UTF_8)), "another content still loses");
    }
  }

  /**
   * A TCP proxy to 127.0.0.1:{@code upstreamPort} that forwards everything, except that on the first
   * connection it reads the server's response and closes the connection instead of passing it on.
   */
  private static final class ResponseDroppingProxy implements AutoCloseable {
    private final java.net.ServerSocket server = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    private final java.util.concurrent.atomic.AtomicInteger connections = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger dropped = new java.util.concurrent.atomic.AtomicInteger();
    private final List<java.net.Socket> sockets = java.util.Collections.synchronizedList(new ArrayList<>());

    ResponseDroppingProxy(int upstreamPort) throws IOException {
      Thread acceptor = new Thread(() -> {
        try {
          while (true) {
            java.net.Socket client = server.accept();
            java.net.Socket upstream = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), upstreamPort);
            sockets.add(client);
            sockets.add(upstream);
            boolean drop = connections.incrementAndGet() == 1;
            pump(client, upstream, false);
            pump(upstream, client, drop);
          }
        } catch (IOException closed) {
          // the proxy was closed
        }
      }, "response-dropping-proxy");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    private void pump(java.net.Socket from, java.net.Socket to, boolean drop) {
      Thread t = new Thread(() -> {
        byte[] buf = new byte[8192];
        try {
          int n;
          while ((n = from.getInputStream().read(buf)) >= 0) {
            if (drop) {
              dropped.incrementAndGet();
              to.close();
              from.close();
              return;
            }
            to.getOutputStream().write(buf, 0, n);
            to.getOutputStream().flush();
          }
          to.close();
        } catch (IOException e) {
          // one side closed
        }
      }, "response-dropping-proxy-pump");
      t.setDaemon(true);
      t.start();
    }

    int port() {
      return server.getLocalPort();
    }

    int dropped() {
      return dropped.get();
    }

    @Override
    public void close() throws IOException {
      server.close();
      synchronized (sockets) {
        for (java.net.Socket s : sockets) {
          s.close();
        }
      }
    }
  }

  /**
   * Requests each operation costs, counted by the client (an SDK execution interceptor), printed as the
   * table docs/object-storage.md quotes.
   */
  @Test
  void eachOperationCostsTheDocumentedNumberOfRequests() throws Exception {
    S3StoreFiles files = (S3StoreFiles) StoreFiles.forUri(S3.newUri("costs"), S3.storageOptions());
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
    try {
      List<java.util.concurrent.Future<?>> writes = new ArrayList<>();
      for (int i = 0; i < 1_001; i++) {
        String path = "wal/" + i;
        writes.add(pool.submit(() -> {
          files.overwrite(path, new byte[] {1});
          return null;
        }));
      }
      for (java.util.concurrent.Future<?> w : writes) {
        w.get(120, java.util.concurrent.TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    Map<String, Map<String, Long>> costs = new LinkedHashMap<>();
    costs.put("read", cost(files, () -> files.read("wal/1")));
    costs.put("read (absent)", cost(files, () -> files.readIfPresent("nothing")));
    costs.put("readRange", cost(files, () -> files.readRange("wal/1", 0, 1)));
    costs.put("stat", cost(files, () -> files.stat("wal/1")));
    costs.put("objectExists (present)", cost(files, () -> files.objectExists("wal/1")));
    costs.put("objectExists (absent)", cost(files, () -> files.objectExists("wal/x")));
    costs.put("prefixExists", cost(files, () -> files.prefixExists("wal/")));
    costs.put("createIfAbsent (new)", cost(files, () -> files.createIfAbsent("lease/1", new byte[] {1})));
    costs.put("createIfAbsent (taken)", cost(files, () -> files.createIfAbsent("lease/1", new byte[] {2})));
    costs.put("overwrite", cost(files, () -> {
      files.overwrite("lease/1", new byte[] {3});
      return null;
    }));
    costs.put("delete", cost(files, () -> {
      files.delete("lease/1");
      return null;
    }));
    costs.put("list (1,001 names)", cost(files, () -> files.list("wal")));
    costs.put("listPrefix (1,001 objects)", cost(files, () -> files.listPrefix("wal/")));
    List<String> some = StoreFiles.paths(files.listPrefix("wal/")).subList(0, 3);
    costs.put("deleteAll (3 objects)", cost(files, () -> files.deleteAll(some)));
    costs.put("deletePrefix (998 objects)", cost(files, () -> files.deletePrefix("wal/")));
    costs.forEach((op, c) -> System.out.println("S3 requests: " + op + " = " + c));

    assertEquals(Map.of("GetObject", 1L), costs.get("read"));
    assertEquals(Map.of("GetObject", 1L), costs.get("read (absent)"));
    assertEquals(Map.of("GetObject", 1L), costs.get("readRange"));
    assertEquals(Map.of("HeadObject", 1L), costs.get("stat"));
    assertEquals(Map.of("HeadObject", 1L), costs.get("objectExists (present)"));
    assertEquals(Map.of("HeadObject", 1L), costs.get("objectExists (absent)"));
    assertEquals(Map.of("ListObjectsV2", 1L), costs.get("prefixExists"));
    assertEquals(Map.of("PutObject", 1L), costs.get("createIfAbsent (new)"));
    assertEquals(Map.of("PutObject", 1L), costs.get("createIfAbsent (taken)"));
    assertEquals(Map.of("PutObject", 1L), costs.get("overwrite"));
    assertEquals(Map.of("DeleteObject", 1L), costs.get("delete"));
    assertEquals(Map.of("ListObjectsV2", 2L), costs.get("list (1,001 names)"));
    assertEquals(Map.of("ListObjectsV2", 2L), costs.get("listPrefix (1,001 objects)"));
    assertEquals(Map.of("DeleteObjects", 1L), costs.get("deleteAll (3 objects)"));
    assertEquals(Map.of("ListObjectsV2", 1L, "DeleteObjects", 1L), costs.get("deletePrefix (998 objects)"));
  }

  private interface Op {
    Object run() throws Exception;
  }

  private static Map<String, Long> cost(S3StoreFiles files, Op op) throws Exception {
    Map<String, Long> before = files.requestCounts();
    op.run();
    Map<String, Long> delta = new LinkedHashMap<>();
    files.requestCounts().forEach((k, v) -> {
      long d = v - before.getOrDefault(k, 0L);
      if (d != 0) {
        delta.put(k, d);
      }
    });
    return delta;
  }

  /**
   * Every log event of every logger at DEBUG, formatted, while open; the loggers' own appenders (the
   * console) are detached meanwhile, so the DEBUG flood of the S3 server and the SDK stays out of the build log.
   */
  private static final class CapturedLogs extends AbstractAppender implements AutoCloseable {
    private final List<String> lines;
    private final Map<String, Level> previous = new HashMap<>();
    private final Map<String, Map<String, org.apache.logging.log4j.core.Appender>> detached = new HashMap<>();
    private final List<String> created = new java.util.ArrayList<>();
    private final LoggerContext context = (LoggerContext) LogManager.getContext(false);

    CapturedLogs(List<String> lines) {
      super("captured-" + System.nanoTime(), null, null, true, Property.EMPTY_ARRAY);
      this.lines = lines;
      start();
      Configuration config = context.getConfiguration();
      for (String name : List.of("", "software.amazon.awssdk", "software.amazon.awssdk.request", "org.gaul",
          "io.lancecontext")) {
        LoggerConfig lc = config.getLoggerConfig(name);
        if (!lc.getName().equals(name)) {
          lc = new LoggerConfig(name, Level.DEBUG, true);
          config.addLogger(name, lc);
          created.add(name);
        }
        previous.put(name, lc.getLevel());
        Map<String, org.apache.logging.log4j.core.Appender> own = new HashMap<>(lc.getAppenders());
        detached.put(name, own);
        own.keySet().forEach(lc::removeAppender);
        lc.setLevel(Level.DEBUG);
        lc.addAppender(this, Level.DEBUG, null);
      }
      context.updateLoggers();
    }

    @Override
    public synchronized void append(LogEvent event) {
      StringBuilder sb = new StringBuilder(event.getLoggerName()).append(' ').append(event.getMessage().getFormattedMessage());
      if (event.getThrown() != null) {
        StringWriter w = new StringWriter();
        event.getThrown().printStackTrace(new PrintWriter(w));
        sb.append(' ').append(w);
      }
      lines.add(sb.toString());
    }

    @Override
    public void close() {
      Configuration config = context.getConfiguration();
      // levels first, in effect before the console is back: the server's threads log DEBUG events meanwhile,
      // which must not reach the build log
      previous.forEach((name, level) -> {
        LoggerConfig lc = config.getLoggerConfig(name);
        lc.removeAppender(getName());
        lc.setLevel(level);
      });
      created.forEach(config::removeLogger);
      context.updateLoggers();
      previous.keySet().forEach(name -> {
        if (!created.contains(name)) {
          LoggerConfig lc = config.getLoggerConfig(name);
          detached.getOrDefault(name, Map.of()).values().forEach(a -> lc.addAppender(a, null, null));
        }
      });
      context.updateLoggers();
      stop();
    }
  }
}
