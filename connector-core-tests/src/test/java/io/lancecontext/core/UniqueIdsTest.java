package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.UniqueKeyViolationException;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Capability {@code unique-ids}: a key is accepted once, however many writers race to add it. */
class UniqueIdsTest extends StoreTest {
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"v\",\"type\":\"int64\"},"
      + "{\"name\":\"tags\",\"type\":\"list\",\"item\":{\"type\":\"string\"}},{\"name\":\"b\",\"type\":\"binary\"}],"
      + "\"capabilities\":[\"unique-ids\"]}";
  private static final int KEYS = 25;

  private Map<String, String> options(String name) {
    return Map.of("path", dir.resolve(name).toString(), "schema", SPEC, "shards", "2");
  }

  @Test
  void eightThreadsAddingTheSameNewKeysGetEachKeyAcceptedOnce() throws Exception {
    try (ContextStore store = ContextStore.open(options("threads"))) {
      Map<String, List<Long>> accepted = new ConcurrentHashMap<>();
      List<Throwable> unexpected = new CopyOnWriteArrayList<>();
      CountDownLatch start = new CountDownLatch(1);
      ExecutorService pool = Executors.newFixedThreadPool(8);
      List<Future<?>> futures = new ArrayList<>();
      for (long t = 0; t < 8; t++) {
        long writer = t;
        futures.add(pool.submit(() -> {
          List<String> order = new ArrayList<>();
          for (int i = 0; i < KEYS; i++) {
            order.add("k-" + i);
          }
          Collections.shuffle(order, new Random(writer));
          // odd writers add two keys of one bucket per add (check-and-put is atomic per bucket), even ones one
          List<List<String>> adds = new ArrayList<>();
          Map<Integer, List<String>> pending = new HashMap<>();
          for (String k : order) {
            if (writer % 2 == 0) {
              adds.add(List.of(k));
              continue;
            }
            List<String> p = pending.computeIfAbsent(store.bucketOf(k), b -> new ArrayList<>());
            p.add(k);
            if (p.size() == 2) {
              adds.add(List.copyOf(p));
              p.clear();
            }
          }
          pending.values().stream().filter(p -> !p.isEmpty()).forEach(p -> adds.add(List.copyOf(p)));
          start.await();
          for (List<String> add : adds) {
            List<Map<String, Object>> rows = new ArrayList<>();
            for (String k : add) {
              rows.add(Map.of("id", k, "v", writer));
            }
            try {
              store.add(rows);
              rows.forEach(r -> accepted.computeIfAbsent((String) r.get("id"), k -> new CopyOnWriteArrayList<>()).add(writer));
            } catch (UniqueKeyViolationException e) {
              assertTrue(!e.keys().isEmpty() && rows.stream().map(r -> r.get("id")).toList().containsAll(e.keys()), e.getMessage());
            } catch (RuntimeException e) {
              unexpected.add(e);
            }
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get(5, TimeUnit.MINUTES);
      }
      pool.shutdown();
      assertTrue(unexpected.isEmpty(), () -> "unexpected failures: " + unexpected);
      assertEachKeyAcceptedOnce(store, accepted);
    }
  }

  private static void assertEachKeyAcceptedOnce(ContextStore store, Map<String, List<Long>> accepted) {
    assertEachKeyAcceptedOnce(store, accepted, KEYS, k -> null);
  }

  /** {@code answers}: what the writers answered for a key, for the failure message (null: nothing to add). */
  private static void assertEachKeyAcceptedOnce(ContextStore store, Map<String, List<Long>> accepted, int keys,
      java.util.function.Function<String, Object> answers) {
    for (int i = 0; i < keys; i++) {
      String key = "k-" + i;
      List<Long> by = accepted.getOrDefault(key, List.of());
      assertEquals(1, by.size(), () -> key + " accepted by writers " + by + "; answers " + answers.apply(key));
      assertEquals(by.get(0), store.get(key).orElseThrow().get("v"), key + " holds the accepted writer's row");
    }
    assertEquals(keys, store.count());
    store.seal();
    store.merge();
    for (int i = 0; i < keys; i++) {
      assertEquals(accepted.get("k-" + i).get(0), store.get("k-" + i).orElseThrow().get("v"), "after the merge");
    }
  }

  @Test
  void twoProcessesRacingOnTheSameNewKeysGetEachKeyAcceptedExactlyOnce() throws Exception {
    String path = dir.resolve("procs").toString();
    try (ContextStore ignored = ContextStore.open(options("procs"))) {
      // created
    }
    ContextStore.closeAllResident();
    Map<String, List<Long>> accepted = new HashMap<>();
    Map<String, List<String>> answers = new HashMap<>();
    int keys = 2 * KEYS;
    try (ChildJvm a = ChildJvm.start(UniqueRacer.class, dir.resolve("a.log"), path, "1");
        ChildJvm b = ChildJvm.start(UniqueRacer.class, dir.resolve("b.log"), path, "2")) {
      assertEquals("ready", a.readLine(), a::tail);
      assertEquals("ready", b.readLine(), b::tail);
      List<String> errors = new ArrayList<>();
      for (int i = 0; i < keys; i++) {
        String key = "k-" + i;
        a.send("add " + key);  // both add the key at the same moment
        b.send("add " + key);
        for (long writer = 1; writer <= 2; writer++) {
          ChildJvm child = writer == 1 ? a : b;
          String answer = child.readLine();
          assertTrue(answer != null, child::tail);
          answers.computeIfAbsent(key, k -> new ArrayList<>()).add("writer " + writer + ": " + answer);
          switch (answer.split(" ")[0]) {
            case "ack" -> accepted.computeIfAbsent(key, k -> new ArrayList<>()).add(writer);
            case "dup" -> { }
            default -> errors.add(key + ": " + answer);
          }
        }
      }
      assertTrue(errors.isEmpty(), () -> "errors: " + errors);
      a.send("exit");
      b.send("exit");
      assertEquals(0, a.waitFor(60), a::tail);
      assertEquals(0, b.waitFor(60), b::tail);
    }
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEachKeyAcceptedOnce(store, accepted, keys, answers::get);
    }
  }

  @Test
  void retryingAnAddWithNullColumnsSucceedsInEveryTier() {
    try (ContextStore store = ContextStore.open(options("nulls"))) {
      List<Map<String, Object>> row = List.of(Map.of("id", "n", "v", 7L));
      store.add(row);
      store.add(row);  // from the open generation
      store.seal();
      store.add(row);  // from a sealed generation
      store.seal();
      store.flush();
      store.add(row);  // from a flushed generation
      store.merge();
      store.add(row);  // from the base table
      assertEquals(7L, store.get("n").orElseThrow().get("v"));
      assertEquals(1, store.count());
    }
  }

  @Test
  void aCheckedAddClaimsBackALaneItsWriterStillHoldsOpenAfterAnotherProcessClaimedIt() throws Exception {
    String path = dir.resolve("stale").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", SPEC, "shards", "1"))) {
      store.add(List.of(Map.of("id", "a", "v", 1L)));
      store.add(List.of(Map.of("id", "a", "v", 1L)));  // the same add again: its key is in lane 0, so lane 1 takes it
      long before = lane1(store).writerEpoch();
      assertTrue(before > 0, "lane 1 is open here");
      try (ChildJvm other = ChildJvm.start(UniqueRacer.class, dir.resolve("other.log"), path, "2")) {
        assertEquals("ready", other.readLine(), other::tail);
        other.send("add b");  // claims both lanes of the bucket (lane 1 from this JVM, which keeps it open)
        assertEquals("ack", other.readLine(), other::tail);
        // the next checked add must hold every lane before its check: the other process could otherwise go on
        // putting rows into lane 1 that the check never sees
        store.add(List.of(Map.of("id", "c", "v", 3L)));
        StoreStats.Shard lane1 = lane1(store);
        assertTrue(lane1.writerOpen() && lane1.writerEpoch() > before, () -> "lane 1 claimed back: " + lane1);
        other.send("exit");
        assertEquals(0, other.waitFor(60), other::tail);
      }
      assertEquals(3, store.count());
      assertEquals(2L, store.get("b").orElseThrow().get("v"));
    }
  }

  private static StoreStats.Shard lane1(ContextStore store) {
    return store.stats().shards().stream().filter(sh -> sh.lane() == 1).findFirst().orElseThrow();
  }

  @Test
  void retryingAnIdenticalAddSucceedsAndADifferentRowForAnExistingKeyFails() {
    try (ContextStore store = ContextStore.open(options("retry"))) {
      Map<String, Object> row = new HashMap<>(Map.of("id", "a", "v", 1L, "tags", List.of("x", "y"), "b", new byte[] {1, 2}));
      store.add(List.of(row, Map.of("id", "c", "v", 3L)));
      store.add(List.of(row));  // the same add again, as after an unacknowledged attempt
      store.add(List.of(Map.of("id", "c", "v", 3L), Map.of("id", "d", "v", 4L)));
      UniqueKeyViolationException e = assertThrows(UniqueKeyViolationException.class,
          () -> store.add(List.of(Map.of("id", "e", "v", 5L), Map.of("id", "a", "v", 2L))));
      assertEquals(List.of("a"), e.keys());
      assertTrue(e.getMessage().contains("[a]"), e.getMessage());
      assertTrue(store.get("e").isEmpty(), "nothing of a refused add is written");
      assertEquals(1L, store.get("a").orElseThrow().get("v"));
      store.seal();
      store.merge();
      store.add(List.of(row));
      assertThrows(UniqueKeyViolationException.class, () -> store.add(List.of(Map.of("id", "d", "v", 40L))));
      assertEquals(3, store.count());
      assertEquals(4L, store.get("d").orElseThrow().get("v"));
    }
  }
}
