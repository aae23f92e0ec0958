package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreProcess;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The store's guarantees as other processes see them, with real child JVMs. */
class CrossProcessTest extends StoreTest {
  private String createStore(String name, int shards) {
    String path = dir.resolve(name).toString();
    try (ContextStore ignored = ContextStore.open(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "8",
        "shards", Integer.toString(shards)))) {
      return path;
    } finally {
      ContextStore.closeAllResident();  // the test reopens the store with options of its own
    }
  }

  private static Map<String, Object> record(String key, int seq) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("sequence_order", seq);
    return r;
  }

  @Test
  void addIsDurableAndVisibleToAnotherProcessTheMomentItReturns() throws Exception {
    String path = createStore("visible", 4);
    try (ChildJvm reader = ChildJvm.start(StoreProcess.class, dir.resolve("reader.log"), "reader", path);
        ContextStore store = ContextStore.open(Map.of("path", path, "merge.trigger.generations", "2"))) {
      assertEquals("ready", reader.readLine(), reader::tail);
      for (int i = 0; i < 300; i++) {
        String key = "v-" + i;
        store.add(List.of(record(key, i), record(key + "-b", i)));
        assertEquals(Integer.toString(i), reader.ask("get " + key), "the other process must see add " + i);
        assertEquals(Integer.toString(i), reader.ask("get " + key + "-b"));
        if (i % 50 == 49) {
          store.seal();      // rows move from the WAL tail into generations...
        }
        if (i % 100 == 99) {
          store.merge();     // ...and into the base table, without disappearing
        }
        if (i % 20 == 0) {
          store.add(List.of(record(key, i + 1000)));  // an update is visible too
          assertEquals(Integer.toString(i + 1000), reader.ask("get " + key));
        }
      }
      assertEquals(Long.toString(store.count()), reader.ask("count"));
      reader.send("exit");
      assertEquals(0, reader.waitFor(60), reader::tail);
    }
  }

  @Test
  void writerKilledAfterAcknowledgedAddsLosesNone() throws Exception {
    String path = createStore("crash", 4);
    List<Integer> acked = new ArrayList<>();
    try (ChildJvm writer = ChildJvm.start(StoreProcess.class, dir.resolve("writer.log"), "writer", path, "150", "5", "c")) {
      String line;
      while ((line = writer.readLine()) != null) {
        if (line.startsWith("ack ")) {
          acked.add(Integer.parseInt(line.substring(4)));
        }
        if (acked.size() == 120) {
          writer.close();  // killed (SIGKILL) in the middle of its run
          break;
        }
      }
    }
    assertEquals(120, acked.size());
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      for (int i : acked) {
        for (int j = 0; j < 5; j++) {
          assertTrue(store.get("c-" + i + "-" + j).isPresent(), "acknowledged row c-" + i + "-" + j + " lost");
        }
      }
      // writing again replays the crashed writer's WAL tail; nothing acknowledged goes missing
      store.add(List.of(record("after-crash", 1)));
      store.seal();
      store.merge();
      Set<String> keys = new HashSet<>();
      store.scanRecords(ScanSpec.all().withColumns(List.of("id"))).forEach(r -> keys.add((String) r.get("id")));
      for (int i : acked) {
        for (int j = 0; j < 5; j++) {
          assertTrue(keys.contains("c-" + i + "-" + j), "row c-" + i + "-" + j + " lost after recovery and merge");
        }
      }
      assertTrue(keys.contains("after-crash"));
    }
  }

  @Test
  void contendingProcessesNeverLoseAcknowledgedRowsAndEveryAddEndsWithinThePutTimeout() throws Exception {
    String path = createStore("contended", 1);
    String timeout = "write.put-timeout=3s";
    String go = "test.start-at=go";  // both add from the same moment on, however long each took to start
    try (ChildJvm a = ChildJvm.start(StoreProcess.class, dir.resolve("a.log"), "contender", path, "200", "a", "5", timeout,
            go);
        ChildJvm b = ChildJvm.start(StoreProcess.class, dir.resolve("b.log"), "contender", path, "200", "b", "5", timeout,
            go)) {
      for (ChildJvm c : List.of(a, b)) {
        assertEquals("ready", c.readLine(), c::tail);
      }
      a.send("go");
      b.send("go");
      Outcomes oa = Outcomes.read(a);
      Outcomes ob = Outcomes.read(b);
      assertEquals(0, a.waitFor(120), a::tail);
      assertEquals(0, b.waitFor(120), b::tail);
      assertTrue(oa.abandoned + ob.abandoned > 0, "the two writers took the shard from each other at least once");
      for (Outcomes o : List.of(oa, ob)) {
        assertEquals(200, o.acked.size() + o.unacked.size(), () -> "every add ends acknowledged or not acknowledged (typed); errors: " + o.errors);
        assertTrue(o.errors.isEmpty(), () -> "unexpected errors: " + o.errors);
        assertTrue(o.maxMillis <= 3_000 + 2_000, "an add took " + o.maxMillis + " ms, longer than the put timeout");
      }
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        Set<String> present = new HashSet<>();
        store.scanRecords(ScanSpec.all().withColumns(List.of("id"))).forEach(r -> present.add((String) r.get("id")));
        for (String k : oa.acked) {
          assertTrue(present.contains(k), "acknowledged " + k + " lost");
        }
        for (String k : ob.acked) {
          assertTrue(present.contains(k), "acknowledged " + k + " lost");
        }
        System.out.printf("contention: a acked %d not acknowledged %d, b acked %d not acknowledged %d, max add %d/%d ms%n", oa.acked.size(),
            oa.unacked.size(), ob.acked.size(), ob.unacked.size(), oa.maxMillis, ob.maxMillis);
      }
    }
  }

  @Test
  void twoProcessesWritingTheSameKeysAndShardsBothMakeProgressAndLoseNoAcknowledgedRow() throws Exception {
    String path = createStore("race", 2);
    int adds = 150;
    String[] options = {"write.put-timeout=30s", "test.shared=2"};
    try (ChildJvm a = ChildJvm.start(StoreProcess.class, dir.resolve("a.log"), concat(
            new String[] {"contender", path, Integer.toString(adds), "a", "0", "test.reopen-at=50"}, options));
        ChildJvm b = ChildJvm.start(StoreProcess.class, dir.resolve("b.log"), concat(
            new String[] {"contender", path, Integer.toString(adds), "b", "0", "test.reopen-at=100"}, options))) {
      Outcomes oa = Outcomes.read(a);
      Outcomes ob = Outcomes.read(b);
      assertEquals(0, a.waitFor(300), a::tail);
      assertEquals(0, b.waitFor(300), b::tail);
      System.out.printf("race: a acked %d not acknowledged %d (p50 %d ms, max %d ms), b acked %d not acknowledged %d "
          + "(p50 %d ms, max %d ms)%n", oa.acked.size(), oa.unacked.size(), oa.p50(), oa.maxMillis, ob.acked.size(),
          ob.unacked.size(), ob.p50(), ob.maxMillis);
      for (Outcomes o : List.of(oa, ob)) {
        assertTrue(o.errors.isEmpty(), () -> "every failure is a typed not-acknowledged error: " + o.errors);
        assertEquals(adds, o.acked.size() + o.unacked.size());
        assertTrue(o.acked.size() >= adds * 9 / 10, () -> "each process makes progress: acked " + o.acked.size()
            + " of " + adds + ", not acknowledged " + o.unacked.size());
        assertTrue(o.maxMillis <= 30_000 + 10_000, "an add took " + o.maxMillis + " ms, longer than the put timeout");
      }
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        Set<String> present = new HashSet<>();
        store.scanRecords(ScanSpec.all().withColumns(List.of("id"))).forEach(r -> present.add((String) r.get("id")));
        for (Outcomes o : List.of(oa, ob)) {
          for (String k : o.acked) {
            assertTrue(present.contains(k), "acknowledged " + k + " lost");
            int n = Integer.parseInt(k.substring(2));
            assertTrue(present.contains("shared-" + n + "-0") && present.contains("shared-" + n + "-1"),
                "acknowledged shared rows of add " + k + " lost");
          }
        }
      }
    }
  }

  private static String[] concat(String[] a, String[] b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static final class Outcomes {
    final List<String> acked = new ArrayList<>();
    final List<String> unacked = new ArrayList<>();
    final List<String> errors = new ArrayList<>();
    final List<Long> millis = new ArrayList<>();
    long maxMillis;
    long abandoned;

    long p50() {
      List<Long> sorted = new ArrayList<>(millis);
      java.util.Collections.sort(sorted);
      return sorted.isEmpty() ? 0 : sorted.get(sorted.size() / 2);
    }

    static Outcomes read(ChildJvm child) throws Exception {
      Outcomes o = new Outcomes();
      String line;
      while ((line = child.readLine()) != null && !line.equals("done")) {
        String[] p = line.split(" ", 4);
        if (p[0].equals("abandoned")) {
          o.abandoned = Long.parseLong(p[1]);
          continue;
        }
        o.maxMillis = Math.max(o.maxMillis, Long.parseLong(p[2]));
        o.millis.add(Long.parseLong(p[2]));
        switch (p[0]) {
          case "ack" -> o.acked.add(p[1]);
          case "unacked" -> o.unacked.add(p[1]);
          default -> o.errors.add(line);
        }
      }
      if (line == null) {
        fail("contender exited early:\n" + child.tail());
      }
      return o;
    }
  }
}
