package io.lancecontext.core;

import static io.lancecontext.core.SnapshotReaderProcess.checksums;
import static io.lancecontext.core.StoreTestSupport.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.SnapshotNotFoundException;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreTest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Snapshots: a token reads exactly the rows of the moment it was taken, in any process, after merges,
 * compactions and garbage collections; tags keep theirs until dropped; a snapshot no longer kept fails with
 * a typed error, never with other rows.
 */
class SnapshotTest extends StoreTest {

  /** Rows in the base, in generations and in the WAL tail, with upserts and a deletion. */
  private static void fill(ContextStore store, int round) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      rows.add(rec("id", "k" + i, "token_count", round * 1000 + i, "text_payload", "r" + round));
    }
    store.add(rows);
    store.delete(List.of("k" + (round % 40)));
    store.seal();
    store.merge();
    store.add(List.of(rec("id", "k1", "token_count", -round), rec("id", "g" + round, "token_count", round)));
    store.seal();
    store.add(List.of(rec("id", "k2", "token_count", -round), rec("id", "w" + round, "token_count", round)));
  }

  @Test
  void aTokenReadsTheRowsOfItsMomentInAnyProcessAfterMergesCompactionAndGc() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "s", "context", "gc.grace", "1s",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"));
        ChildJvm reader = ChildJvm.start(SnapshotReaderProcess.class, dir.resolve("reader.log"), store.uri())) {
      fill(store, 1);
      fill(store, 2);
      String before = checksums(store, ScanSpec.all());
      StoreSnapshot quiet = store.snapshot();
      assertTrue(quiet.token().startsWith("lc."), quiet.token());
      assertTrue(quiet.token().length() < 200, "a short token: " + quiet.token());
      assertNull(quiet.tag());
      assertEquals(before, checksums(store, ScanSpec.all().atSnapshot(quiet.token())));

      // a writer keeps adding, upserting and deleting while a token is taken and read
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger n = new AtomicInteger();
      AtomicReference<Throwable> failed = new AtomicReference<>();
      Thread writer = new Thread(() -> {
        try {
          while (!stop.get()) {
            int i = n.incrementAndGet();
            store.add(List.of(rec("id", "k" + (i % 50), "token_count", 100_000 + i), rec("id", "c" + i, "token_count", i)));
            if (i % 7 == 0) {
              store.delete(List.of("c" + (i - 3)));
            }
          }
        } catch (Throwable t) {
          failed.set(t);
        }
      });
      writer.start();
      while (n.get() < 20) {
        Thread.sleep(5);
      }
      StoreSnapshot live = store.snapshot();
      String atLive = checksums(store, ScanSpec.all().atSnapshot(live.token()));
      while (n.get() < 60) {
        Thread.sleep(5);
      }
      stop.set(true);
      writer.join();
      assertNull(failed.get());
      assertNotEquals(atLive, checksums(store, ScanSpec.all()), "the writer changed the store after the token");

      // every tier rewritten: generations merged, the base compacted, garbage collected twice past gc.grace
      store.seal();
      store.merge();
      fill(store, 3);
      store.seal();
      store.merge();
      assertTrue(store.compact().ran());
      Thread.sleep(1_500);
      GcResult first = store.gc();
      Thread.sleep(1_500);
      GcResult second = store.gc();
      assertTrue(first.ran() && second.ran());

      assertEquals("ready", reader.readLine(), reader.tail());
      assertEquals("ok " + before, reader.ask(quiet.token()), "the quiet token, in another JVM");
      assertEquals("ok " + atLive, reader.ask(live.token()), "the token taken while writing, in another JVM");
      assertEquals(atLive, checksums(store, ScanSpec.all().atSnapshot(live.token())));
      // a planned read at the token (what Spark and Flink do), split into parts
      Map<String, Object> split = new TreeMap<>();
      for (ReadSplit s : store.planRead(ScanSpec.all().withColumns(List.of("id", "token_count"))
          .atSnapshot(live.token()), 4).splits()) {
        assertEquals(live.takenAt(), s.snapshot().plannedAt());
        try (StoreReader r = store.read(s)) {
          r.records().forEach(m -> assertNull(split.put((String) m.get("id"), m.get("token_count"))));
        }
      }
      assertEquals(StoreTestSupport.view(store, "token_count", ScanSpec.all().atSnapshot(live.token())), split);
      reader.send("exit");
      assertEquals(0, reader.waitFor(60), reader.tail());
    }
  }

  @Test
  void aTagOutlivesGcGraceManyTimesAndAnUntaggedSnapshotRunsOutWithATypedError() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "t", "context", "gc.grace", "1s",
        "snapshot.retention", "1s", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      fill(store, 1);
      String at = checksums(store, ScanSpec.all());
      // taken first: a tag keeps what every later snapshot reads too
      StoreSnapshot untagged = store.snapshot();
      Thread.sleep(5);
      StoreSnapshot tagged = store.tag("step-1200");
      assertEquals("step-1200", tagged.tag());
      assertEquals(List.of("step-1200"), store.tags().stream().map(StoreSnapshot::tag).toList());
      for (int round = 2; round < 6; round++) {
        fill(store, round);
        store.seal();
        store.merge();
        store.compact();
        Thread.sleep(1_200);
        store.gc();
        assertEquals(at, checksums(store, ScanSpec.all().atSnapshot("step-1200")), "round " + round);
      }
      assertEquals(at, checksums(store, ScanSpec.all().atSnapshot(tagged.token())));
      SnapshotNotFoundException gone = assertThrows(SnapshotNotFoundException.class,
          () -> store.scanRecords(ScanSpec.all().atSnapshot(untagged.token())));
      assertTrue(gone.getMessage().contains("no longer kept"), gone.getMessage());
      assertThrows(SnapshotNotFoundException.class, () -> store.tag("late", untagged.token()));

      // a second tag of the same snapshot, then the first dropped: the second still keeps it
      assertEquals(tagged.token(), store.tag("copy", "step-1200").token());
      assertThrows(IllegalArgumentException.class, () -> store.tag("copy"), "a tag exists");
      assertTrue(store.dropTag("step-1200"));
      assertFalse(store.dropTag("step-1200"));
      store.seal();
      store.merge();
      Thread.sleep(1_200);
      store.gc();
      assertEquals(at, checksums(store, ScanSpec.all().atSnapshot("copy")));
      SnapshotNotFoundException noTag = assertThrows(SnapshotNotFoundException.class,
          () -> store.scanRecords(ScanSpec.all().atSnapshot("step-1200")));
      assertTrue(noTag.getMessage().contains("no tag 'step-1200'"), noTag.getMessage());
      assertTrue(store.dropTag("copy"));
      assertEquals(List.of(), store.tags());
    }
  }

  @Test
  void badTokensAndTagNamesAreRefusedByName() {
    try (ContextStore store = ContextStore.open(options(dir, "b", "context"));
        ContextStore other = ContextStore.open(options(dir, "o", "context", "shards", "3"))) {
      store.add(List.of(rec("id", "a", "token_count", 1)));
      String foreign = other.snapshot().token();
      SnapshotNotFoundException shards = assertThrows(SnapshotNotFoundException.class,
          () -> store.scanRecords(ScanSpec.all().atSnapshot(foreign)));
      assertTrue(shards.getMessage().contains("3 shards"), shards.getMessage());
      for (String bad : List.of("lc.%%%", "lc.AAAA", "lc.")) {
        SnapshotNotFoundException e = assertThrows(SnapshotNotFoundException.class,
            () -> store.scanRecords(ScanSpec.all().atSnapshot(bad)), bad);
        assertTrue(e.getMessage().contains("is not a snapshot token"), e.getMessage());
      }
      assertThrows(SnapshotNotFoundException.class, () -> store.scanRecords(ScanSpec.all().atSnapshot("no such/tag")));
      for (String bad : List.of("", "-x", "a/b", "lc.tag", "x".repeat(129))) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> store.tag(bad), bad);
        assertTrue(e.getMessage().contains("is not a tag name"), e.getMessage());
      }
      assertEquals(List.of(), store.tags(), "nothing half-written");
    }
  }

  /** Expiry is judged at the moment the snapshot was taken, so the same rows come back later. */
  @Test
  void aReadAtASnapshotJudgesExpiryAtTheMomentItWasTaken() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "e", "context"))) {
      store.add(List.of(rec("id", "short", "token_count", 1, "expires_at", Instant.now().plusMillis(1_500)),
          rec("id", "long", "token_count", 2)));
      StoreSnapshot s = store.snapshot();
      Thread.sleep(1_600);
      assertEquals(List.of("long"), store.scanRecords(ScanSpec.all()).stream().map(r -> r.get("id")).toList());
      assertEquals(List.of("long", "short"), store.scanRecords(ScanSpec.all().atSnapshot(s.token())).stream()
          .map(r -> (String) r.get("id")).sorted().toList());
    }
  }
}
