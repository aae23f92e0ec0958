package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Atomic commits across processes: readers elsewhere see all of a transaction or none of it. */
class TransactionProcessTest extends StoreTest {
  /** 500 base rows of value 1; 4 writers stage 500 rows each, overlapping: keys k0..k1399. */
  private static final int BASE = 500;
  private static final int WRITERS = 4;
  private static final int STRIDE = 300;
  private static final int ROWS = 500;
  private static final int FINAL = (WRITERS - 1) * STRIDE + ROWS;
  /** The polled transaction: 4 writers stage 5,000 rows each (20,000), overlapping: keys k0..k13999. */
  private static final int BIG_STRIDE = 3_000;
  private static final int BIG_ROWS = 5_000;
  private static final int BIG_FINAL = (WRITERS - 1) * BIG_STRIDE + BIG_ROWS;

  private String create(String name) {
    String path = dir.resolve(name).toString();
    try (ContextStore store = ContextStore.open(options(dir, name, "context", "shards", "4",
        "merge.trigger.generations", "1000", "merge.trigger.interval", "1h", "gc.grace", "0s"))) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (int i = 0; i < BASE; i++) {
        rows.add(TransactionProcess.row(i, 1));
      }
      store.add(rows);
    }
    ContextStore.closeAllResident();
    return path;
  }

  /** Stages the transaction (rows of value 2) in two processes of two threads each; returns the summaries' files. */
  private List<String> stageInTwoProcesses(String path, String txid) throws Exception {
    return stageInTwoProcesses(path, txid, 2, STRIDE, ROWS);
  }

  private List<String> stageInTwoProcesses(String path, String txid, int value, int stride, int rows)
      throws Exception {
    Path out = Files.createDirectories(dir.resolve(txid + "-summaries"));
    List<String> files = new ArrayList<>();
    try (ChildJvm a = ChildJvm.start(TransactionProcess.class, dir.resolve(txid + "-a.log"), "stager", path, txid, "0",
            "2", "0", Integer.toString(stride), Integer.toString(rows), Integer.toString(value), out.toString());
        ChildJvm b = ChildJvm.start(TransactionProcess.class, dir.resolve(txid + "-b.log"), "stager", path, txid, "1",
            "2", "0", Integer.toString(stride), Integer.toString(rows), Integer.toString(value), out.toString())) {
      for (ChildJvm c : List.of(a, b)) {
        String line;
        while ((line = c.readLine()) != null && !line.equals("done")) {
          assertTrue(line.startsWith("staged "), () -> "stager said '" + "': " + c.tail());
          files.add(line.substring("staged ".length()));
        }
        assertEquals(0, c.waitFor(120), c::tail);
      }
    }
    assertEquals(WRITERS, files.size());
    return files;
  }

  /**
   * As {@link #stageInTwoProcesses(String, String, int, int, int)} with its defaults, staged by this JVM (the
   * same parts and keys): for tests whose subject is another step (the kill of a publisher), not the staging.
   */
  private List<String> stageHere(String path, String txid, int value) throws Exception {
    Path out = Files.createDirectories(dir.resolve(txid + "-summaries"));
    List<String> files = new ArrayList<>();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "write.batch-rows", "100"))) {
      for (int writer = 0; writer < WRITERS; writer++) {
        String part = (writer / 2) + "/" + (writer % 2);
        try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txid, part).build())) {
          for (int i = 0; i < ROWS; i++) {
            w.write(TransactionProcess.row(writer * STRIDE + i, value));
          }
          Path file = out.resolve((writer / 2) + "-" + (writer % 2) + ".bin");
          Files.write(file, w.commit().toBytes());
          files.add(file.toString());
        }
      }
    }
    return files;
  }

  private static List<WriteSummary> summaries(List<String> files) throws Exception {
    List<WriteSummary> out = new ArrayList<>();
    for (String f : files) {
      out.add(WriteSummary.fromBytes(Files.readAllBytes(Path.of(f))));
    }
    return out;
  }

  private static void assertAllOrNothing(ContextStore store) {
    assertAllOrNothing(store, BASE, 2, FINAL);
  }

  /**
   * Either none of the transaction that wrote {@code value} is visible ({@code rowsBefore} rows, none of that
   * value) or all of it (every one of the {@code finalRows} keys holds it); returns whether it was all.
   */
  private static boolean assertAllOrNothing(ContextStore store, int rowsBefore, int value, int finalRows) {
    Map<String, Object> view = StoreTestSupport.view(store, "token_count");
    long of = view.values().stream().filter(v -> v.equals(value)).count();
    boolean none = view.size() == rowsBefore && of == 0;
    boolean all = view.size() == finalRows && of == finalRows;
    assertTrue(none || all, "part of a transaction is visible: " + view.size() + " rows, " + of + " of value " + value);
    return all;
  }

  @Test
  void aReaderInAnotherProcessNeverSeesPartOfATransactionStagedByTwoProcesses() throws Exception {
    String path = create("s");
    Set<String> states = new LinkedHashSet<>();
    try (ChildJvm poller = ChildJvm.start(TransactionProcess.class, dir.resolve("poller.log"), "poller", path);
        ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals("ready", poller.readLine(), poller::tail);
      String first = poller.readLine();
      states.add(first);
      assertEquals("state " + BASE + " 0", first);
      // the poller reads the view over and over while 4 threads in 2 processes stage 20,000 rows
      List<String> files = stageInTwoProcesses(path, "job-1", 2, BIG_STRIDE, BIG_ROWS);
      PublishResult r = store.publish("job-1", summaries(files));
      assertFalse(r.alreadyPublished());
      assertEquals(WRITERS * BIG_ROWS, r.rows());
      String line;
      while ((line = poller.readLine()) != null) {
        states.add(line);
        if (line.equals("state " + BIG_FINAL + " " + BIG_FINAL)) {
          break;
        }
        assertTrue(states.size() < 10, () -> "the poller saw " + states);
      }
      poller.send("exit");
      assertEquals(Set.of("state " + BASE + " 0", "state " + BIG_FINAL + " " + BIG_FINAL), states, poller::tail);
      assertAllOrNothing(store, BASE, 2, BIG_FINAL);
      assertEquals(BIG_FINAL, store.count());
      store.merge();
      assertEquals(BIG_FINAL, store.count());
      assertAllOrNothing(store, BASE, 2, BIG_FINAL);
    }
  }

  @Test
  void publishesWhileAnotherProcessAddsToTheSameBucketsLoseNothingOfEither() throws Exception {
    String path = dir.resolve("r").toString();
    ContextStore.open(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "4", "shards", "2")).close();
    ContextStore.closeAllResident();
    int adds = 150;
    try (ChildJvm contender = ChildJvm.start(io.lancecontext.core.testing.StoreProcess.class, dir.resolve("c.log"),
            "contender", path, Integer.toString(adds), "c", "5", "write.fence-backoff=200ms");
        ContextStore store = ContextStore.open(Map.of("path", path, "write.fence-backoff", "200ms"))) {
      List<String> acked = new ArrayList<>();
      Thread reader = new Thread(() -> {
        try {
          String line;
          while ((line = contender.readLine()) != null && !line.equals("done")) {
            if (line.startsWith("ack ")) {
              synchronized (acked) {
                acked.add(line.split(" ")[1]);
              }
            }
          }
        } catch (Exception e) {
          // the assertions below say what is missing
        }
      });
      reader.start();
      int published = 0;
      while (reader.isAlive() && published < 8) {
        String txid = "p" + published;
        try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txid, "0").build())) {
          for (int i = 0; i < 20; i++) {
            w.write(Map.of("id", txid + "-" + i, "sequence_order", i, "rollout_id", txid));
          }
          store.publish(txid, List.of(w.commit()));
        }
        published++;
      }
      reader.join(180_000);
      assertEquals(0, contender.waitFor(60), contender::tail);
      assertTrue(acked.size() > adds / 2, () -> "the contender acknowledged " + acked.size() + " adds: "
          + contender.tail());
      for (String k : acked) {
        assertTrue(store.get(k).isPresent(), "acknowledged add " + k + " is lost");
      }
      for (int p = 0; p < published; p++) {
        for (int i = 0; i < 20; i++) {
          assertTrue(store.get("p" + p + "-" + i).isPresent(), "published row p" + p + "-" + i + " is lost");
        }
      }
      assertTrue(published >= 1);
    }
  }

  @Test
  void aProcessKilledWhileStagingLeavesNothingVisibleAndGcRemovesItsParts() throws Exception {
    String path = create("s");
    try (ChildJvm stager = ChildJvm.start(TransactionProcess.class, dir.resolve("stager.log"), "endless-stager", path,
        "doomed")) {
      assertEquals("staging", stager.readLine(), stager::tail);
      stager.close();  // destroyForcibly: SIGKILL mid-staging
    }
    try (ContextStore store = ContextStore.open(Map.of("path", path, "gc.grace", "0s"))) {
      assertEquals(BASE, store.count());
      assertAllOrNothing(store);
      store.gc();
      try (var staged = Files.list(dir.resolve("s/_lc/txn/doomed"))) {
        assertTrue(staged.anyMatch(p -> p.getFileName().toString().startsWith("b")), "a killed owner's transaction "
            + "lives until its txn.timeout (1 s) after the last renewal");
      }
      Thread.sleep(1_200);
      store.gc();
      try (var left = Files.list(dir.resolve("s/_lc/txn/doomed"))) {
        assertEquals(List.of("record"), left.map(p -> p.getFileName().toString()).toList());
      }
      assertEquals(BASE, store.count());
    }
  }

  @Test
  void aPublishKilledMidwayLeavesNothingOrEverythingAndCompletesWhenCalledAgain() throws Exception {
    String path = create("s");
    // how long a publish takes here, from the publisher's "publishing" to its "published"
    List<String> calibration = new ArrayList<>(List.of("publisher", path, "calibration"));
    calibration.addAll(stageHere(path, "calibration", 9));
    double[] killAt = {0, 0.25, 0.5, 0.75, 1.5};  // of the publish's duration
    List<List<String>> staged = new ArrayList<>();
    for (int attempt = 0; attempt < killAt.length; attempt++) {
      // each attempt writes its own value over the same keys, so a part of it would show as a mix of two values
      staged.add(stageHere(path, "kill-" + attempt, 10 + attempt));
    }
    ContextStore.closeAllResident();
    long publishMillis;
    try (ChildJvm publisher = ChildJvm.start(TransactionProcess.class, dir.resolve("calibration-publisher.log"),
        calibration.toArray(new String[0]))) {
      assertEquals("publishing", publisher.readLine(), publisher::tail);
      long started = System.nanoTime();
      assertEquals("published false", publisher.readLine(), publisher::tail);
      publishMillis = (System.nanoTime() - started) / 1_000_000;
    }
    int rowsBefore = FINAL;
    List<String> outcomes = new ArrayList<>();
    for (int attempt = 0; attempt < killAt.length; attempt++) {
      int value = 10 + attempt;
      String txid = "kill-" + attempt;
      List<String> files = staged.get(attempt);
      List<String> args = new ArrayList<>(List.of("publisher", path, txid));
      args.addAll(files);
      long killAfter = (long) (killAt[attempt] * publishMillis);
      try (ChildJvm publisher = ChildJvm.start(TransactionProcess.class, dir.resolve(txid + "-publisher.log"),
          args.toArray(new String[0]))) {
        assertEquals("publishing", publisher.readLine(), publisher::tail);
        Thread.sleep(killAfter);
        publisher.close();  // SIGKILL before, during or after the publish
      }
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        boolean all = assertAllOrNothing(store, rowsBefore, value, FINAL);
        outcomes.add(killAfter + " ms: " + (all ? "all" : "nothing"));
        PublishResult r = store.publish(txid, summaries(files));
        assertEquals(all, r.alreadyPublished(), "a publish the kill let complete is reported as already published");
        assertTrue(assertAllOrNothing(store, rowsBefore, value, FINAL), "the publish completes when called again");
        assertEquals(FINAL, store.count(), "after " + r);
      }
      ContextStore.closeAllResident();
    }
    System.out.println("a publish takes " + publishMillis + " ms; publishes killed after " + outcomes);
  }

  /** One operation of a mixer: what it wrote and when (its add call, or its publish). */
  private record MixOp(String who, String kind, long start, long end, Map<String, Integer> values) {
    static MixOp parse(String who, String line) {
      String[] p = line.split(" ");
      Map<String, Integer> values = new java.util.HashMap<>();
      for (String kv : p[4].split(",")) {
        String[] e = kv.split("=");
        values.put(e[0], Integer.parseInt(e[1]));
      }
      return new MixOp(who, p[1], Long.parseLong(p[2]), Long.parseLong(p[3]), values);
    }

    boolean acknowledged() {
      return kind.equals("add") || kind.equals("txn") || kind.equals("base");
    }
  }

  @Test
  void twoProcessesMixingAddsAndTransactionsOnTheSameKeysEndAsTheirRealTimeOrderAllows() throws Exception {
    String path = create("mix");
    int keys = 40;
    int ops = 60;
    String[] options = {"write.fence-backoff=50ms", "merge.trigger.generations=2", "merge.trigger.interval=1s",
        "gc.grace=0s"};
    List<MixOp> all = new ArrayList<>();
    for (int i = 0; i < BASE; i++) {
      all.add(new MixOp("base", "base", 0, 0, Map.of("k" + i, 1)));
    }
    long abandoned = 0;
    List<ChildJvm> mixers = new ArrayList<>();
    try {
      for (int proc = 1; proc <= 2; proc++) {
        List<String> args = new ArrayList<>(List.of("mixer", path, Integer.toString(proc), Integer.toString(ops),
            Integer.toString(keys)));
        args.addAll(List.of(options));
        mixers.add(ChildJvm.start(TransactionProcess.class, dir.resolve("mixer-" + proc + ".log"),
            args.toArray(new String[0])));
      }
      for (ChildJvm m : mixers) {
        assertEquals("ready", m.readLine(), m::tail);
      }
      for (ChildJvm m : mixers) {
        m.send("go");  // both open the store first, then start together
      }
      for (ChildJvm m : mixers) {
        String line;
        int seen = 0;
        while ((line = m.readLine()) != null && !line.equals("done")) {
          if (line.startsWith("op ")) {
            all.add(MixOp.parse("mixer-" + (mixers.indexOf(m) + 1), line));
            seen++;
          } else if (line.startsWith("abandoned ")) {
            abandoned += Long.parseLong(line.substring("abandoned ".length()));
          }
        }
        assertEquals(ops, seen, m::tail);
        assertEquals(0, m.waitFor(120), m::tail);
      }
    } finally {
      for (ChildJvm m : mixers) {
        m.close();
      }
    }
    assertTrue(abandoned > 0, "the two processes took buckets from each other at least once");
    long published = all.stream().filter(o -> o.kind().equals("txn")).count();
    long aborted = all.stream().filter(o -> o.kind().equals("aborted")).count();
    long added = all.stream().filter(o -> o.kind().equals("add")).count();
    assertTrue(published > 0 && aborted > 0 && added > 0, "every kind of operation ran: " + published + " published, "
        + aborted + " aborted, " + added + " adds");
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      Map<String, Object> before = StoreTestSupport.view(store, "token_count");
      assertMixMatchesRealTimeOrder(all, before);
      store.flush();
      store.gc();
      assertEquals(before, StoreTestSupport.view(store, "token_count"), "merging everything changed the view");
    }
  }

  /**
   * Every key holds the value of an acknowledged operation (or of an add whose outcome was unknown), never one of
   * an aborted transaction, and no acknowledged operation on that key started after the winner ended: the
   * store's order agrees with real time, across processes and both commit modes.
   */
  private static void assertMixMatchesRealTimeOrder(List<MixOp> all, Map<String, Object> view) {
    Map<String, List<MixOp>> byKey = new java.util.HashMap<>();
    Map<String, MixOp> byWrite = new java.util.HashMap<>();
    for (MixOp o : all) {
      o.values().forEach((k, v) -> {
        byKey.computeIfAbsent(k, x -> new ArrayList<>()).add(o);
        byWrite.put(k + "=" + v, o);
      });
    }
    assertEquals(BASE, view.size(), "keys k0..k" + (BASE - 1) + " and no others");
    for (Map.Entry<String, List<MixOp>> e : byKey.entrySet()) {
      String key = e.getKey();
      Object value = view.get(key);
      MixOp winner = byWrite.get(key + "=" + value);
      assertTrue(winner != null, key + " holds " + value + ", which no operation wrote");
      assertFalse(winner.kind().equals("aborted"), key + " holds " + value + " of an aborted transaction");
      if (!winner.acknowledged()) {
        continue;  // an add whose outcome was unknown may have taken effect at any time after it began
      }
      for (MixOp later : e.getValue()) {
        assertFalse(later.acknowledged() && later.start() > winner.end(), () -> key + " holds " + value + " of "
            + winner + ", but " + later + " wrote it after that ended");
      }
    }
  }
}
