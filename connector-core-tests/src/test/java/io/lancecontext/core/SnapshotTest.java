package io.lancecontext.core;

import static io.lancecontext.core.SnapshotReaderProcess.checksums;
import static io.lancecontext.core.testing.StoreTest.options;
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
import java.nio.file.Path;
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
      // taken first: the tag keeps only what its own snapshot reads
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

  /**
   * A tag keeps what its own snapshot reads, not what every later snapshot read: four rounds of upserts, merges,
   * compactions and collections later the store holds the tag's base version and fresh tier next to the current
   * ones only (a never-ending lease an earlier build's tag left changes nothing), and dropping the tag lets the
   * next collection take those too.
   */
  @Test
  void aTagKeepsWhatItsSnapshotReadsAndNothingLaterSnapshotsSuperseded() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "k", "context", "gc.grace", "1s",
        "snapshot.retention", "1s", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      Path root = Path.of(store.uri());
      fill(store, 1);
      // a published transaction the tag holds unmerged: its record and parts outlive the merge that folds it in
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("t1", "0/0").build())) {
        for (int i = 0; i < 30; i++) {
          w.write(rec("id", i % 2 == 0 ? "k" + i : "t" + i, "token_count", 500 + i));
        }
        store.publish("t1", List.of(w.commit()));
      }
      String at = checksums(store, ScanSpec.all());
      StoreSnapshot tag = store.tag("step-1");
      // the never-ending lease a tag of an earlier build wrote next to it: ignored now, deleted with the tag
      String legacy = io.lancecontext.core.internal.io.ReadLeases.holdUntil(store.resident().files(),
          tag.takenAt().toEpochMilli(), io.lancecontext.core.internal.io.ReadLeases.NEVER, "step-1".hashCode());
      int generationsAtTag = count(root.resolve("_mem_wal"), 2, p -> p.getFileName().toString().contains("_gen_"));
      int walAtTag = count(root.resolve("_mem_wal"), 3, p -> p.getParent().getFileName().toString().equals("wal"));
      assertTrue(generationsAtTag > 0 && walAtTag > 0, generationsAtTag + " generations, " + walAtTag + " WAL entries");
      StoreSnapshot after = null;
      for (int round = 2; round <= 5; round++) {
        fill(store, round);
        if (round == 2) {
          after = store.snapshot();  // untagged: kept for snapshot.retention only, not by the older tag
        }
        store.seal();
        store.merge();
        assertTrue(store.compact().ran());
        Thread.sleep(1_100);
        store.gc();
        assertEquals(at, checksums(store, ScanSpec.all().atSnapshot("step-1")), "round " + round);
      }
      store.seal();
      store.merge();
      for (int i = 0; i < 2; i++) {  // WAL entries and manifests go gc.grace and half of it after a collection saw them go
        Thread.sleep(1_600);
        store.gc();
      }
      assertEquals(at, checksums(store, ScanSpec.all().atSnapshot("step-1")));
      int withTag = baseVersions(root);
      assertTrue(count(root.resolve("_mem_wal"), 2, p -> p.getFileName().toString().contains("_gen_")) <= generationsAtTag,
          "only the tag's generations stay");
      assertTrue(count(root.resolve("_mem_wal"), 3, p -> p.getParent().getFileName().toString().equals("wal"))
          <= walAtTag, "only the tag's WAL entries stay");
      String later = after.token();
      SnapshotNotFoundException gone = assertThrows(SnapshotNotFoundException.class,
          () -> store.scanRecords(ScanSpec.all().atSnapshot(later)));
      assertTrue(gone.getMessage().contains("no longer kept"), gone.getMessage());

      assertTrue(java.nio.file.Files.exists(root.resolve(legacy)));
      assertTrue(store.dropTag("step-1"));
      assertFalse(java.nio.file.Files.exists(root.resolve(legacy)));
      Thread.sleep(1_100);
      store.gc();
      // what stays without the tag (the latest, and the versions lance-core's indexes refer to) does not grow with
      // the rounds; the tag kept its own version and the one its indexes refer to, nothing of the 3 per round since
      int withoutTag = baseVersions(root);
      assertTrue(withoutTag <= 6, withoutTag + " base versions without the tag");
      assertTrue(withTag > withoutTag && withTag - withoutTag <= 2, withTag + " base versions with the tag, "
          + withoutTag + " without");
      assertEquals(0, count(root.resolve("_mem_wal"), 2, p -> p.getFileName().toString().contains("_gen_")));
      assertEquals(checksums(store, ScanSpec.all()), checksums(store, ScanSpec.all().atSnapshot(store.snapshot().token())));
    }
  }

  private static int baseVersions(Path root) throws java.io.IOException {
    return count(root.resolve("_versions"), 1, p -> p.getFileName().toString().endsWith(".manifest"));
  }

  private static int count(Path dir, int depth, java.util.function.Predicate<Path> which) throws java.io.IOException {
    try (var s = java.nio.file.Files.walk(dir, depth)) {
      return (int) s.filter(p -> !p.equals(dir) && which.test(p)).count();
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
