package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.S3ServerExtension;
import io.lancecontext.core.testing.StoreProcess;
import io.lancecontext.core.testing.StoreTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A store's cross-process guarantees on S3 (a local s3proxy), with real child JVMs started with the
 * {@code AWS_*} environment lance-core 7.0.0's MemWAL needs (this JVM has none: it cannot open a store on S3,
 * see {@link S3StoreTest}). Every child's stdout and log is kept and scanned for the secret key.
 */
class S3ProcessesTest extends StoreTest {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();

  private final List<Path> logs = new ArrayList<>();
  private final List<String> printed = new ArrayList<>();

  private ChildJvm start(Class<?> main, String log, String... args) throws Exception {
    Path file = dir.resolve(log);
    logs.add(file);
    return ChildJvm.start(main, file, S3.memWalEnvironment(), args);
  }

  /** Runs an {@link S3Process} command to its end: its {@code name value} lines, in order. */
  private List<String[]> run(String log, String... args) throws Exception {
    List<String[]> lines = new ArrayList<>();
    try (ChildJvm child = start(S3Process.class, log, args)) {
      String line;
      while ((line = child.readLine()) != null && !line.equals("done")) {
        printed.add(line);
        if (line.startsWith("error ")) {
          fail(line + "\n" + child.tail());
        }
        lines.add(line.split(" ", 2));
      }
      assertEquals("done", line, child::tail);
    }
    return lines;
  }

  private static String value(List<String[]> lines, String name) {
    return lines.stream().filter(l -> l[0].equals(name)).map(l -> l.length > 1 ? l[1] : "").findFirst()
        .orElseThrow(() -> new AssertionError("no '" + name + "' line"));
  }

  private static Map<String, String> keys(List<String[]> lines) {
    Map<String, String> out = new HashMap<>();
    for (String[] l : lines) {
      if (l[0].equals("key")) {
        String[] kv = l[1].split(" ");
        out.put(kv[0], kv[1]);
      }
    }
    return out;
  }

  private String create(String name, int shards, String... options) throws Exception {
    String uri = S3.newUri(name);
    List<String> args = new ArrayList<>(List.of("create", uri, Integer.toString(shards)));
    args.addAll(List.of(options));
    run(name + "-create.log", args.toArray(new String[0]));
    return uri;
  }

  private void assertNoSecretPrinted() throws Exception {
    String secret = S3.secretKey();
    for (String line : printed) {
      assertFalse(line.contains(secret), "a child printed the secret: " + line);
    }
    for (Path log : logs) {
      if (Files.exists(log)) {
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
          assertFalse(line.contains(secret), log.getFileName() + " has the secret in: " + line);
        }
      }
    }
  }

  @Test
  void twoProcessesContendingForOneShardLoseNoAcknowledgedRowAndEveryLostRaceIsTyped() throws Exception {
    String uri = create("contended", 1);
    int adds = 40;
    String timeout = "write.put-timeout=20s";
    // both add from the same moment on (once both have opened the store), and the back-off is short, so that
    // each takes the shard from the other
    String startAt = "test.start-at=go";
    String backoff = "write.fence-backoff=50ms";
    List<List<String>> acked = new ArrayList<>();
    long abandoned = 0;
    try (ChildJvm a = start(StoreProcess.class, "a.log", "contender", uri, Integer.toString(adds), "a", "5", timeout,
            startAt, backoff);
        ChildJvm b = start(StoreProcess.class, "b.log", "contender", uri, Integer.toString(adds), "b", "5", timeout,
            startAt, backoff)) {
      for (ChildJvm c : List.of(a, b)) {
        assertEquals("ready", c.readLine(), c::tail);
      }
      a.send("go");
      b.send("go");
      for (ChildJvm c : List.of(a, b)) {
        List<String> ok = new ArrayList<>();
        int unacked = 0;
        String line;
        while ((line = c.readLine()) != null && !line.equals("done")) {
          printed.add(line);
          String[] p = line.split(" ", 4);
          switch (p[0]) {
            case "ack" -> ok.add(p[1]);
            case "unacked" -> unacked++;
            case "abandoned" -> abandoned += Long.parseLong(p[1]);
            default -> fail("an add ended neither acknowledged nor with a typed not-acknowledged error: " + line
                + "\n" + c.tail());
          }
        }
        assertEquals("done", line, c::tail);
        assertEquals(adds, ok.size() + unacked);
        System.out.printf("S3 contention: %d acknowledged, %d not acknowledged%n", ok.size(), unacked);
        acked.add(ok);
      }
    }
    Map<String, String> present = keys(run("check.log", "keys", uri));
    for (List<String> ok : acked) {
      for (String k : ok) {
        assertTrue(present.containsKey(k), "acknowledged " + k + " lost");
      }
    }
    assertTrue(acked.get(0).size() + acked.get(1).size() > 0, "some add got through");
    assertTrue(abandoned > 0, "the two writers took the shard from each other at least once");
    assertNoSecretPrinted();
  }

  @Test
  void aWriterKilledMidAddLosesNoAcknowledgedRow() throws Exception {
    String uri = create("killed", 2);
    List<Integer> acked = new ArrayList<>();
    try (ChildJvm writer = start(StoreProcess.class, "writer.log", "writer", uri, "200", "5", "c")) {
      String line;
      while ((line = writer.readLine()) != null) {
        if (line.startsWith("ack ")) {
          acked.add(Integer.parseInt(line.substring(4)));
        }
        if (acked.size() == 30) {
          break;
        }
      }
      assertEquals(30, acked.size(), writer::tail);
      writer.close();  // SIGKILL (destroyForcibly) while it is adding: its next add is in flight
    }
    Map<String, String> present = keys(run("reopen.log", "keys", uri));
    for (int i : acked) {
      for (int j = 0; j < 5; j++) {
        assertTrue(present.containsKey("c-" + i + "-" + j), "acknowledged row c-" + i + "-" + j + " lost");
      }
    }
    assertNoSecretPrinted();
  }

  @Test
  void garbageCollectionOnS3RemovesOnlyWhatIsObsolete() throws Exception {
    List<String[]> lines = run("gc.log", "gc", S3.newUri("gc"));
    Set<String> before = set(value(lines, "gens-before"));
    Set<String> after = set(value(lines, "gens-after"));
    assertEquals(2, before.size(), "a merged and an unmerged generation: " + before);
    String merged = before.iterator().next();
    assertFalse(after.contains(merged), "the merged generation " + merged + " is removed: " + after);
    assertEquals(1, after.size(), "the unmerged generation stays: " + after);
    assertTrue(value(lines, "gc").startsWith("true 1 "), "gc: " + value(lines, "gc"));
    List<Long> walBefore = longs(value(lines, "wal-before"));
    List<Long> walAfter = longs(value(lines, "wal-after"));
    assertTrue(walAfter.size() < walBefore.size(), "sealed WAL entries are removed: " + walBefore + " -> " + walAfter);
    assertFalse(walAfter.isEmpty(), "the unsealed WAL tail stays: " + walAfter);
    assertEquals(walBefore.subList(walBefore.size() - walAfter.size(), walBefore.size()), walAfter,
        "only the oldest (sealed) entries go");
    Map<String, String> view = keys(lines);
    assertEquals(160, view.size(), "100 merged keys, 50 in the unmerged generation, 10 in the WAL tail");
    for (int i = 0; i < 100; i++) {
      assertEquals(i < 20 ? "2" : "1", view.get("m" + i), "m" + i);
    }
    for (int i = 0; i < 50; i++) {
      assertEquals("2", view.get("u" + i), "u" + i);
    }
    for (int i = 0; i < 10; i++) {
      assertEquals("3", view.get("w" + i), "w" + i);
    }
    assertNoSecretPrinted();
  }

  private static Set<String> set(String list) {
    Set<String> out = new TreeSet<>();
    for (String s : list.replaceAll("[\\[\\] ]", "").split(",")) {
      if (!s.isEmpty()) {
        out.add(s);
      }
    }
    return out;
  }

  private static List<Long> longs(String list) {
    List<Long> out = new ArrayList<>();
    for (String s : set(list)) {
      out.add(Long.parseLong(s));
    }
    out.sort(null);
    return out;
  }

  @Test
  void anAtomicCommitStagedInTwoProcessesIsPublishedOnceAndWhole() throws Exception {
    String uri = create("atomic", 2);
    String txid = "tx-" + UUID.randomUUID();
    Path a = dir.resolve("a.summary");
    Path b = dir.resolve("b.summary");
    List<String[]> before = run("before.log", "keys", uri);
    assertEquals("0", value(before, "count"), "nothing is visible before the publish");
    try (ChildJvm sa = start(S3Process.class, "stage-a.log", "stage", uri, txid, "0", "0", "60", a.toString());
        ChildJvm sb = start(S3Process.class, "stage-b.log", "stage", uri, txid, "1", "60", "60", b.toString())) {
      for (ChildJvm c : List.of(sa, sb)) {
        String line = c.readLine();
        printed.add(String.valueOf(line));
        assertTrue(line != null && line.startsWith("staged "), () -> line + "\n" + c.tail());
        assertEquals("done", c.readLine(), c::tail);
      }
    }
    assertEquals("0", value(run("staged.log", "keys", uri), "count"), "staged rows stay invisible");
    List<String[]> published = run("publish.log", "publish", uri, txid, a.toString(), b.toString());
    assertEquals("false", value(published, "published"));
    assertEquals("true", value(published, "replayed"), "a replayed publish is recognised");
    Map<String, String> view = keys(run("after.log", "keys", uri));
    assertEquals(120, view.size(), "both processes' rows, once: " + view.size());
    for (int i = 0; i < 120; i++) {
      assertEquals("7", view.get("t" + i), "t" + i);
    }
    assertNoSecretPrinted();
  }

  @Test
  void credentialsAppearInNoLogLineMessageOrToString() throws Exception {
    String wrong = "wrong-" + UUID.randomUUID();
    List<String[]> lines = run("show.log", "show", S3.newUri("show"), wrong);
    assertEquals("true", value(lines, "get"));
    for (String name : List.of("wrong-secret", "no-region", "unknown-key")) {
      String message = value(lines, name);
      assertFalse(message.equals("none"), name + " must fail");
      assertFalse(message.contains(wrong), name + " shows the wrong secret: " + message);
      assertFalse(message.contains(S3.secretKey()), name + " shows the secret: " + message);
    }
    for (String name : List.of("tostring", "config", "stats", "summary")) {
      assertFalse(value(lines, name).contains(S3.secretKey()), name + ": " + value(lines, name));
    }
    String log = Files.readString(dir.resolve("show.log"), StandardCharsets.UTF_8);
    assertFalse(log.contains(wrong), "the log shows the wrong secret");
    assertNoSecretPrinted();
  }
}
