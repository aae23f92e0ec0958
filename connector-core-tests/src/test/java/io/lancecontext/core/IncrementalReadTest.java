package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.SnapshotNotFoundException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Incremental reads: {@code between(from, to)} returns exactly the keys whose newest version changed between two
 * snapshots (as they are at {@code to}) and the keys deleted in between, whatever merges, compactions and
 * garbage collections ran, and reads no base fragment the two snapshots share.
 */
class IncrementalReadTest extends StoreTest {
  private static final List<String> COLUMNS = List.of("id", "token_count");

  /** What a between read returned: changed keys with their value, and deleted keys. */
  private record Diff(Map<String, Object> changed, Set<String> deleted, long fragmentsRead) {}

  private static Diff between(ContextStore store, String from, String to) {
    Map<String, Object> changed = new TreeMap<>();
    Set<String> deleted = new TreeSet<>();
    try (StoreReader r = store.scan(ScanSpec.all().withColumns(COLUMNS).between(from, to))) {
      assertEquals(List.of("id", "token_count", ScanSpec.DELETED), r.columns());
      for (Map<String, Object> m : r.records()) {
        String id = (String) m.get("id");
        assertFalse(changed.containsKey(id) || deleted.contains(id), "a key is reported once: " + id);
        if ((Boolean) m.get(ScanSpec.DELETED)) {
          assertNull(m.get("token_count"), "a deleted key's row holds only the key");
          deleted.add(id);
        } else {
          changed.put(id, m.get("token_count"));
        }
      }
      return new Diff(changed, deleted, r.baseFragmentsRead());
    }
  }

  /** The diff a model of the store predicts: every write writes a value never written before. */
  private static Diff expected(Map<String, Integer> from, Map<String, Integer> to) {
    Map<String, Object> changed = new TreeMap<>();
    to.forEach((k, v) -> {
      if (!v.equals(from.get(k))) {
        changed.put(k, v);
      }
    });
    Set<String> deleted = new TreeSet<>(from.keySet());
    deleted.removeAll(to.keySet());
    return new Diff(changed, deleted, 0);
  }

  @Test
  void betweenMatchesTheModelAcrossAddsUpsertsDeletesTransactionsMergesCompactionAndGc() throws Exception {
    // write.bulk-rows and merge.append-min-rows small: large adds are parts appended to the base whole
    try (ContextStore store = ContextStore.open(options(dir, "m", "context", "gc.grace", "1s",
        "write.bulk-rows", "30", "merge.append-min-rows", "1",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      Random random = new Random(29);
      Map<String, Integer> model = new HashMap<>();
      List<String> tokens = new ArrayList<>();
      List<Map<String, Integer>> models = new ArrayList<>();
      int value = 0;
      for (int round = 0; round < 14; round++) {
        int op = random.nextInt(4);
        if (op == 0) {  // a bulk add: an appended part once merged
          List<Map<String, Object>> rows = new ArrayList<>();
          for (int i = 0; i < 40; i++) {
            String k = "k" + random.nextInt(120);
            if (rows.stream().noneMatch(r -> r.get("id").equals(k))) {
              rows.add(rec("id", k, "token_count", ++value));
              model.put(k, value);
            }
          }
          store.add(rows);
        } else if (op == 1) {  // a published transaction of two parts
          List<WriteSummary> parts = new ArrayList<>();
          for (String part : List.of("a", "b")) {
            try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("t" + round, part).build())) {
              for (int i = 0; i < 5; i++) {
                String k = "k" + random.nextInt(120);
                w.write(rec("id", k, "token_count", ++value));
                model.put(k, value);
              }
              parts.add(w.commit());
            }
          }
          store.publish("t" + round, parts);
        } else {  // small adds (WAL) and deletes
          for (int i = 0; i < 6; i++) {
            String k = "k" + random.nextInt(120);
            store.add(List.of(rec("id", k, "token_count", ++value)));
            model.put(k, value);
          }
          List<String> gone = List.of("k" + random.nextInt(120), "k" + random.nextInt(120));
          store.delete(gone);
          gone.forEach(model::remove);
        }
        switch (random.nextInt(4)) {
          case 0 -> store.seal();
          case 1 -> {
            store.seal();
            store.merge();
          }
          case 2 -> {
            store.seal();
            store.merge();
            store.compact();
          }
          default -> { }
        }
        if (round % 5 == 4) {
          Thread.sleep(1_100);
          store.gc();
        }
        tokens.add(store.snapshot().token());
        models.add(new HashMap<>(model));
        assertEquals(new TreeMap<>(model), StoreTestSupport.view(store, "token_count"), "the model, round " + round);
      }
      store.flush();
      store.compact();
      Thread.sleep(1_100);
      store.gc();
      for (int i = 0; i < tokens.size(); i++) {
        for (int j = i; j < tokens.size(); j += 1 + (j - i) / 2) {
          Diff want = expected(models.get(i), models.get(j));
          Diff got = between(store, tokens.get(i), tokens.get(j));
          assertEquals(want.changed(), got.changed(), "changed " + i + " -> " + j);
          assertEquals(want.deleted(), got.deleted(), "deleted " + i + " -> " + j);
        }
        // to now (null), after the flush, a compaction and gc
        Diff got = between(store, tokens.get(i), null);
        Diff want = expected(models.get(i), model);
        assertEquals(want.changed(), got.changed(), "changed " + i + " -> now");
        assertEquals(want.deleted(), got.deleted(), "deleted " + i + " -> now");
      }
    }
  }

  private static Map<String, Integer> viewAt(ContextStore store, String token) {
    Map<String, Integer> m = new TreeMap<>();
    store.scanRecords(ScanSpec.all().withColumns(COLUMNS).atSnapshot(token))
        .forEach(r -> m.put((String) r.get("id"), (Integer) r.get("token_count")));
    return m;
  }

  /**
   * Snapshots taken at any moment while a writer upserts, deletes, merges, compacts and collects garbage (so some
   * fall between the two commits of a merge, when a generation's rows are in the base and still fresh): between any
   * two consecutive ones, exactly what the two views differ by.
   */
  @Test
  void snapshotsTakenWhileMaintenanceRunsDiffExactly() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "w", "context", "gc.grace", "1s",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
      Thread writer = new Thread(() -> {
        Random random = new Random(7);
        int value = 0;
        try {
          for (int round = 0; round < 40 && !stop.get(); round++) {
            List<Map<String, Object>> rows = new ArrayList<>();
            Set<String> keys = new TreeSet<>();
            for (int i = 0; i < 10; i++) {
              String k = "k" + random.nextInt(60);
              if (keys.add(k)) {
                rows.add(rec("id", k, "token_count", ++value));
              }
            }
            store.add(rows);
            store.delete(List.of("k" + random.nextInt(60)));
            store.seal();
            store.merge();
            if (round % 10 == 9) {
              store.compact();
              store.gc();
            }
          }
        } catch (Throwable t) {
          failed.set(t);
        } finally {
          stop.set(true);
        }
      });
      List<String> tokens = new ArrayList<>();
      writer.start();
      while (!stop.get()) {
        tokens.add(store.snapshot().token());
        // about 4 snapshots per writer round (add, delete, seal, merge), some inside a merge: each pair costs two
        // scans to check, and every 15 ms (7 per round) cost twice the time for the same windows
        Thread.sleep(35);
      }
      writer.join();
      assertNull(failed.get());
      tokens.add(store.snapshot().token());
      assertTrue(tokens.size() > 20, "snapshots: " + tokens.size());
      Map<String, Integer> before = viewAt(store, tokens.get(0));
      for (int i = 1; i < tokens.size(); i++) {
        Map<String, Integer> after = viewAt(store, tokens.get(i));
        Diff want = expected(before, after);
        Diff got = between(store, tokens.get(i - 1), tokens.get(i));
        assertEquals(want.changed(), got.changed(), "changed " + (i - 1) + " -> " + i);
        assertEquals(want.deleted(), got.deleted(), "deleted " + (i - 1) + " -> " + i);
        before = after;
      }
    }
  }

  /** A diff read in another process, after merges, compaction and gc there: the same rows. */
  @Test
  void anotherProcessReadsTheSameDiff() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "x", "context", "gc.grace", "1s",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"));
        io.lancecontext.core.testing.ChildJvm reader = io.lancecontext.core.testing.ChildJvm.start(
            SnapshotReaderProcess.class, dir.resolve("reader.log"), store.uri())) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        rows.add(wide("k" + i, i));
      }
      store.add(rows);
      String from = store.snapshot().token();
      store.add(List.of(wide("k1", 101), wide("new", 1)));
      store.delete(List.of("k2", "k3"));
      store.seal();
      store.merge();
      store.add(List.of(wide("k4", 104)));
      String to = store.snapshot().token();
      String local = SnapshotReaderProcess.checksums(store, ScanSpec.all().between(from, to));
      assertEquals(5, local.split(",").length, local);
      store.flush();
      assertTrue(store.compact().ran());
      Thread.sleep(1_100);
      store.gc();
      assertEquals("ready", reader.readLine(), reader.tail());
      assertEquals("ok " + local, reader.ask(from + " " + to), "between, in another JVM");
      assertEquals(local, SnapshotReaderProcess.checksums(store, ScanSpec.all().between(from, to)), "here, after gc");
      reader.send("exit");
      assertEquals(0, reader.waitFor(60), reader.tail());
    }
  }

  @Test
  void anUnchangedIntervalReturnsNothingEvenAcrossCompactionAndGc() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "u", "context", "gc.grace", "1s"))) {
      for (int i = 0; i < 3; i++) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int k = 0; k < 50; k++) {
          rows.add(rec("id", "k" + k, "token_count", i * 100 + k));
        }
        store.add(rows);
        store.seal();
        store.merge();
      }
      store.add(List.of(rec("id", "fresh", "token_count", 1)));
      StoreSnapshot before = store.snapshot();
      Diff same = between(store, before.token(), store.snapshot().token());
      assertEquals(Map.of(), same.changed());
      assertEquals(Set.of(), same.deleted());
      assertEquals(0, same.fragmentsRead(), "nothing changed: no base fragment read");

      // compaction rewrites every fragment, gc removes what the untagged snapshot does not keep: still nothing new
      store.seal();
      store.merge();
      assertTrue(store.compact().ran());
      Thread.sleep(1_100);
      store.gc();
      Diff rewritten = between(store, before.token(), null);
      assertEquals(Map.of(), rewritten.changed());
      assertEquals(Set.of(), rewritten.deleted());
      assertTrue(rewritten.fragmentsRead() > 0, "compaction rewrote the base: its fragments are compared");
    }
  }

  @Test
  void onlyFreshChangesReadNoBaseFragmentAndMergedOnesReadOnlyTheFragmentsTheMergeAdded() {
    try (ContextStore store = ContextStore.open(options(dir, "f", "context",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      for (int i = 0; i < 4; i++) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int k = 0; k < 100; k++) {
          rows.add(rec("id", "b" + i + "-" + k, "token_count", k));
        }
        store.add(rows);
        store.seal();
        store.merge();
      }
      String from = store.snapshot().token();
      store.add(List.of(rec("id", "new", "token_count", 1), rec("id", "b0-1", "token_count", -1)));
      store.seal();
      store.add(List.of(rec("id", "b1-1", "token_count", -2), rec("id", "b3-3", "token_count", -3)));
      store.delete(List.of("b2-2", "never-there"));
      String to = store.snapshot().token();

      Diff fresh = between(store, from, to);
      assertEquals(Map.of("new", 1, "b0-1", -1, "b1-1", -2, "b3-3", -3), fresh.changed());
      assertEquals(Set.of("b2-2"), fresh.deleted(), "a delete of a key that never was is not reported");
      assertEquals(0, fresh.fragmentsRead(), "only the fresh tier changed: no base fragment read");

      // once merged, the new rows and the tombstone are base rows, and every one of the 4 fragments lost a row to a
      // deletion: only the fragments the merge added are read, not the ones it deleted rows from
      long before = store.stats().fragments();
      store.seal();
      store.merge();
      long added = store.stats().fragments() - before;
      Diff merged = between(store, from, store.snapshot().token());
      assertEquals(fresh.changed(), merged.changed());
      assertEquals(fresh.deleted(), merged.deleted());
      assertTrue(added > 0, "the merge added fragments");
      assertEquals(added, merged.fragmentsRead(), "only the added fragments are read");
      assertEquals(Map.of(), between(store, to, null).changed(), "merging changes no version");
    }
  }

  /** A record with a blob, a vector, a struct and a list: every column type a changed row carries. */
  private static Map<String, Object> wide(String id, int n) {
    Map<String, Object> m = new HashMap<>();
    m.put("id", id);
    m.put("token_count", n);
    m.put("binary_payload", new byte[] {(byte) n, 1, 2, (byte) (n >> 8)});
    m.put("embedding", new float[] {n, 0.5f, -1f, 2f});
    m.put("state_metadata", Map.of("step", n, "custom", "c" + n));
    m.put("tags", List.of("t" + n, "x"));
    m.put("text_payload", "text " + n);
    return m;
  }

  /** Values compared by content (arrays by their elements). */
  private static String canonical(Map<String, Object> row) {
    Map<String, String> out = new TreeMap<>();
    row.forEach((k, v) -> out.put(k, v instanceof byte[] b ? java.util.Arrays.toString(b)
        : v instanceof float[] f ? java.util.Arrays.toString(f) : String.valueOf(v)));
    return out.toString();
  }

  @Test
  void changedRowsCarryEveryColumnAsItIsAtTheLaterSnapshotInEveryTier() {
    // write.bulk-rows small: the 40-row add is a part, appended whole by the merge (its blobs read from the base)
    try (ContextStore store = ContextStore.open(options(dir, "all", "context", "write.bulk-rows", "30",
        "merge.append-min-rows", "1", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      List<Map<String, Object>> first = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        first.add(wide("k" + i, i));
      }
      store.add(first);
      String from = store.snapshot().token();
      List<Map<String, Object>> bulk = new ArrayList<>();
      for (int i = 20; i < 60; i++) {
        bulk.add(wide("k" + i, 1000 + i));
      }
      store.add(bulk);                                        // a part: fresh, then appended to the base
      store.add(List.of(wide("k3", 3003), wide("w", 7)));      // WAL rows: fresh, then a generation merged
      for (boolean merged : List.of(false, true)) {
        if (merged) {
          store.flush();
        }
        Map<String, String> want = new TreeMap<>();
        for (Map<String, Object> r : store.scanRecords(ScanSpec.all())) {
          String id = (String) r.get("id");
          int n = (Integer) r.get("token_count");
          if (n >= 1000 || id.equals("k3") || id.equals("w")) {
            want.put(id, canonical(r));
          }
        }
        Map<String, String> got = new TreeMap<>();
        for (Map<String, Object> r : store.scanRecords(ScanSpec.all().between(from, null))) {
          assertEquals(Boolean.FALSE, r.remove(ScanSpec.DELETED));
          assertNull(got.put((String) r.get("id"), canonical(r)));
        }
        assertEquals(want, got, merged ? "merged" : "fresh");
        assertEquals(42, got.size());
      }
    }
  }

  @Test
  void filtersProjectionsAndPlannedSplitsApplyToTheChangedRows() {
    try (ContextStore store = ContextStore.open(options(dir, "p", "context"))) {
      store.add(List.of(rec("id", "a", "token_count", 1), rec("id", "b", "token_count", 2)));
      String from = store.snapshot().token();
      store.add(List.of(rec("id", "a", "token_count", 10), rec("id", "c", "token_count", 30)));
      store.delete(List.of("b"));
      ScanSpec scan = ScanSpec.all().withColumns(COLUMNS).withFilter(Predicate.compare("token_count", Predicate.Op.GT, 20)).between(from, null);
      List<Map<String, Object>> rows = store.scanRecords(scan);
      assertEquals(Set.of("c", "b"), new TreeSet<>(rows.stream().map(r -> (String) r.get("id")).toList()),
          "the filter selects changed rows; deleted keys are reported whatever it says");

      // a planned read (what Spark does): one split, the same rows, in another handle
      List<ReadSplit> splits = store.planRead(scan, 8).splits();
      assertEquals(1, splits.size());
      List<Map<String, Object>> planned = new ArrayList<>();
      try (ContextStore reader = ContextStore.openForSplit(splits.get(0), Map.of());
          StoreReader r = reader.read(splits.get(0))) {
        planned.addAll(r.records());
      }
      assertEquals(new TreeSet<>(rows.stream().map(Object::toString).toList()),
          new TreeSet<>(planned.stream().map(Object::toString).toList()));
    }
  }

  @Test
  void snapshotIfChangedTakesOneOnlyWhenTheViewChanged() {
    try (ContextStore store = ContextStore.open(options(dir, "c", "context",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      store.add(List.of(rec("id", "a", "token_count", 1)));
      String first = store.snapshot().token();
      assertTrue(store.snapshotIfChanged(first).isEmpty(), "nothing changed");
      store.add(List.of(rec("id", "b", "token_count", 2)));
      String second = store.snapshotIfChanged(first).orElseThrow().token();
      assertEquals(Map.of("b", 2), between(store, first, second).changed());
      assertTrue(store.snapshotIfChanged(second).isEmpty());
      store.seal();
      store.merge();
      String merged = store.snapshotIfChanged(second).orElseThrow().token();
      assertEquals(Map.of(), between(store, second, merged).changed(), "a merge changes the view, not a version");
    }
  }

  @Test
  void snapshotsOutOfOrderOrNoLongerKeptAreRefused() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "o", "context", "gc.grace", "1s",
        "snapshot.retention", "1s"))) {
      store.add(List.of(rec("id", "a", "token_count", 1)));
      String early = store.snapshot().token();
      Thread.sleep(5);
      String late = store.snapshot().token();
      IllegalArgumentException order = assertThrows(IllegalArgumentException.class,
          () -> store.scanRecords(ScanSpec.all().between(late, early)));
      assertTrue(order.getMessage().contains("must not be later"), order.getMessage());
      Thread.sleep(2_100);
      assertThrows(SnapshotNotFoundException.class, () -> store.scanRecords(ScanSpec.all().between(early, null)));
      assertThrows(SnapshotNotFoundException.class, () -> store.scanRecords(ScanSpec.all().between("no-such-tag", null)));
    }
  }
}
