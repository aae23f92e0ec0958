package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.internal.write.SkewedClock;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreProcess;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The write sequence orders a key's rows by the order their adds returned in, even when the shard moves
 * between hosts whose clocks disagree: a later owner stamps above everything already acknowledged.
 */
class OwnerClockSkewTest extends StoreTest {

  @Test
  void aLaterOwnerWithAClockBehindStillWinsInEveryTier() throws Exception {
    String path = dir.resolve("skew").toString();
    Map<String, String> options = Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "8", "shards", "1",
        "write.fence-backoff", "100ms", "write.put-timeout", "10s");
    try (SkewedClock behind = SkewedClock.by(Duration.ofHours(-1));
        ContextStore b = ContextStore.open(options)) {
      b.add(List.of(rec("fresh-k", 1), rec("merged-k", 1)));

      // host A, its clock 1 h ahead, takes the shard over: one key ends in the base table, one in its WAL tail
      try (ChildJvm a = ChildJvm.start(SkewedClock.class, dir.resolve("a.log"), path, Long.toString(3_600_000))) {
        assertEquals("ready", a.readLine(), a::tail);
        assertEquals("ack", a.ask("add merged-k 2"), a::tail);
        assertEquals("ok", a.ask("seal"));
        assertEquals("ok", a.ask("merge"));
        assertEquals("ack", a.ask("add fresh-k 2"), a::tail);
        a.send("halt");
        a.waitFor(60);
      }

      // host B, its clock 1 h behind, takes the shard back and writes both keys again
      addClaimingBack(b, List.of(rec("fresh-k", 3), rec("merged-k", 3)));
      assertNewestIsB(b, path, "before the merge");
      b.seal();
      assertNewestIsB(b, path, "after sealing");
      b.merge();
      assertNewestIsB(b, path, "after the merge");
      b.add(List.of(rec("other", 9)));
      b.seal();
      b.merge();
      assertNewestIsB(b, path, "after another merge");
    }
  }

  /** The first add after the shard was claimed away fails as fenced; it is retried after the back-off. */
  private static void addClaimingBack(ContextStore store, List<Map<String, Object>> rows) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      try {
        store.add(rows);
        return;
      } catch (FencedWriterException e) {
        assertTrue(System.nanoTime() < deadline, "could not claim the shard back: " + e);
        Thread.sleep(50);
      }
    }
  }

  private static void assertNewestIsB(ContextStore store, String path, String when) throws Exception {
    for (String k : List.of("fresh-k", "merged-k")) {
      assertEquals(3, store.get(k).orElseThrow().get("sequence_order"), when + ": get " + k + "; "
          + StoreTestSupport.diagnose(store, k));
    }
    Map<String, Object> view = new TreeMap<>(StoreTestSupport.view(store, "sequence_order"));
    view.remove("other");
    assertEquals(Map.of("fresh-k", 3, "merged-k", 3), view, when + ": scan");
    assertEquals(2, store.count(Predicate.eq("sequence_order", 3)), when + ": filter on the new value");
    assertEquals(0, store.count(Predicate.in("sequence_order", List.of(1, 2))), when + ": filter on replaced values");
    assertEquals(2, store.scanRecords(ScanSpec.all().withFilter(Predicate.eq("sequence_order", 3))).size(), when);
    try (ChildJvm reader = ChildJvm.start(StoreProcess.class, Path.of(path).resolveSibling("reader.log"), "reader", path)) {
      assertEquals("ready", reader.readLine(), reader::tail);
      assertEquals("3", reader.ask("get fresh-k"), when + ": another process");
      assertEquals("3", reader.ask("get merged-k"), when + ": another process");
      reader.send("exit");
      reader.waitFor(60);
    }
  }

  private static Map<String, Object> rec(String key, int seq) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("sequence_order", seq);
    return r;
  }
}
