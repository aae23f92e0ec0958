package io.lancecontext.core;

import static io.lancecontext.core.StoreTestSupport.inEveryTier;
import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static io.lancecontext.core.StoreTestSupport.view;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.CommitConflictException;
import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.StoreNotFoundException;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.write.Buckets;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.testing.StoreTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ContextStoreTest extends StoreTest {


  @Test
  void filterNeverReturnsReplacedRows() {
    try (ContextStore store = ContextStore.open(options(dir, "f", "context"))) {
      store.add(List.of(rec("id", "k1", "role", "user"), rec("id", "k2", "role", "user")));
      store.seal();
      store.merge();  // old versions in the base table
      store.add(List.of(rec("id", "k1", "role", "assistant")));  // newer version in the fresh tier
      inEveryTier(store, () -> {
        assertEquals(Map.of("k2", "user"), view(store, "role", ScanSpec.all().withFilter(Predicate.eq("role", "user"))));
        assertEquals(Map.of("k1", "assistant"), view(store, "role", ScanSpec.all().withFilter(Predicate.eq("role", "assistant"))));
        assertEquals(1, store.count(Predicate.eq("role", "user")));
      });
      store.add(List.of(rec("id", "k2", "role", "tool")));
      store.seal();  // newer version in a generation, older in the base
      assertEquals(Map.of(), view(store, "role", ScanSpec.all().withFilter(Predicate.eq("role", "user"))));
    }
  }

  @Test
  void keyWrittenTwiceInOneAddKeepsTheLastValue() {
    try (ContextStore store = ContextStore.open(options(dir, "d", "rollout"))) {
      assertEquals(2, store.add(List.of(rec("id", "k", "reward", 1.0), rec("id", "j", "reward", 5.0),
          rec("id", "k", "reward", 2.0))));
      inEveryTier(store, () -> {
        assertEquals(2.0, store.get("k").orElseThrow().get("reward"));
        assertEquals(Map.of("j", 5.0, "k", 2.0), view(store, "reward"));
      });
      // the same key again in a later add, in the same open generation: the generation is sealed first
      store.add(List.of(rec("id", "k", "reward", 3.0)));
      store.add(List.of(rec("id", "k", "reward", 4.0)));
      inEveryTier(store, () -> assertEquals(4.0, store.get("k").orElseThrow().get("reward")));
    }
  }

  @Test
  void deleteHidesTheKeyInEveryTier() {
    try (ContextStore store = ContextStore.open(options(dir, "t", "context"))) {
      store.add(List.of(rec("id", "a", "role", "x"), rec("id", "b", "role", "y")));
      store.seal();
      store.merge();
      store.delete(List.of("a"));
      inEveryTier(store, () -> {
        assertTrue(store.get("a").isEmpty());
        assertEquals(Map.of("b", "y"), view(store, "role"));
        assertEquals(1, store.count());
      });
      store.add(List.of(rec("id", "a", "role", "back")));
      inEveryTier(store, () -> assertEquals("back", store.get("a").orElseThrow().get("role")));
      assertEquals(2, store.stats().baseRows(), "merged tombstones are purged from the base table");
    }
  }

  @Test
  void deleteNeedsTheTombstonesCapability() {
    try (ContextStore store = ContextStore.open(options(dir, "nt", "rollout"))) {
      SchemaException e = assertThrows(SchemaException.class, () -> store.delete(List.of("a")));
      assertTrue(e.getMessage().contains("tombstones"));
    }
  }

  @Test
  void supersededRecordsAreHiddenByDefault() {
    try (ContextStore store = ContextStore.open(options(dir, "s", "context"))) {
      store.add(List.of(rec("id", "v1", "text_payload", "first")));
      store.seal();
      store.merge();
      store.add(List.of(rec("id", "v2", "text_payload", "second", "supersedes", "v1")));
      inEveryTier(store, () -> {
        assertEquals(Map.of("v2", "second"), view(store, "text_payload"));
        assertEquals(2, view(store, "text_payload", ScanSpec.all().withIncludeSuperseded(true)).size());
        assertTrue(store.get("v1").isPresent(), "lookups by key ignore supersession");
      });
      store.add(List.of(rec("id", "v2", "text_payload", "second, standalone")));  // no longer supersedes v1
      inEveryTier(store, () -> assertEquals(2, view(store, "text_payload").size()));
    }
  }

  /** Live snapshots reuse the superseded keys of an unchanged store: every change shows at the next read. */
  @Test
  void supersessionFollowsEveryChangeWhileReadsRepeat() {
    try (ContextStore store = ContextStore.open(options(dir, "sr", "context", "merge.trigger.interval", "1h"))) {
      store.add(List.of(rec("id", "a"), rec("id", "b")));
      assertEquals(List.of("a", "b"), twice(store));
      store.add(List.of(rec("id", "c", "supersedes", "a")));
      assertEquals(List.of("b", "c"), twice(store));
      store.seal();
      store.merge();  // the superseding row moves to the base: another base version, other views
      assertEquals(List.of("b", "c"), twice(store));
      store.add(List.of(rec("id", "d", "supersedes", "b")));
      assertEquals(List.of("c", "d"), twice(store));
      store.delete(List.of("c"));  // a superseding record deleted: what it superseded is visible again
      assertEquals(List.of("a", "d"), twice(store));
      store.add(List.of(rec("id", "d")));  // d no longer supersedes b
      assertEquals(List.of("a", "b", "d"), twice(store));
      store.seal();
      store.merge();
      store.compact();
      assertEquals(List.of("a", "b", "d"), twice(store));
    }
  }

  /**
   * A column asked for twice is refused, naming it: such a projection used to read fine in some tiers and fail
   * with an IndexOutOfBoundsException ("decode the rows read") in others, e.g. after merges and a deletion.
   */
  @Test
  void aColumnRequestedTwiceIsRefusedNamingIt() {
    try (ContextStore store = ContextStore.open(options(dir, "dup", "context"))) {
      store.add(List.of(rec("id", "a")));
      SchemaException e = assertThrows(SchemaException.class,
          () -> store.scanRecords(ScanSpec.all().withColumns(List.of("id", "text_payload", "id"))));
      assertTrue(e.getMessage().contains("'id'") && e.getMessage().contains("twice"), e.getMessage());
      assertThrows(SchemaException.class, () -> store.planRead(ScanSpec.all().withColumns(List.of("role", "role")), 2));
    }
  }

  /** The visible keys, read twice (the second read reuses what the first computed); both must agree. */
  private static List<String> twice(ContextStore store) {
    List<String> first = List.copyOf(view(store, "role").keySet());
    assertEquals(first, List.copyOf(view(store, "role").keySet()));
    return first;
  }

  @Test
  void retiredAndExpiredRecordsAreHiddenByDefault() {
    Instant now = Instant.now();
    try (ContextStore store = ContextStore.open(options(dir, "l", "context"))) {
      store.add(List.of(
          rec("id", "live", "lifecycle_status", "active"),
          rec("id", "nostatus"),
          rec("id", "archived", "lifecycle_status", "archived"),
          rec("id", "expired", "expires_at", now.minus(1, ChronoUnit.HOURS)),
          rec("id", "later", "expires_at", now.plus(1, ChronoUnit.HOURS))));
      inEveryTier(store, () -> {
        assertEquals(List.of("later", "live", "nostatus"), List.copyOf(view(store, "role").keySet()));
        assertEquals(5, view(store, "role", ScanSpec.all().withIncludeExpired(true)).size());
        assertTrue(store.get("archived").isEmpty());
        assertEquals(1, store.lookup(List.of("expired"), List.of("id"), true).size());
      });
    }
  }

  @Test
  void uniqueIdsRejectsAnExistingKeyAndWritesNothing() {
    String spec = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"v\",\"type\":\"int64\"}],"
        + "\"capabilities\":[\"unique-ids\"]}";
    try (ContextStore store = ContextStore.open(options(dir, "u", spec))) {
      store.add(List.of(rec("id", "a", "v", 1L)));
      io.lancecontext.core.error.UniqueKeyViolationException e = assertThrows(io.lancecontext.core.error.UniqueKeyViolationException.class,
          () -> store.add(List.of(rec("id", "b", "v", 2L), rec("id", "a", "v", 3L))));
      assertTrue(e.getMessage().contains("[a]"), e.getMessage());
      assertEquals(Map.of("a", 1L), view(store, "v"));
      store.seal();
      store.merge();
      assertThrows(io.lancecontext.core.error.UniqueKeyViolationException.class, () -> store.add(List.of(rec("id", "a", "v", 4L))));
      store.add(List.of(rec("id", "b", "v", 2L)));
      assertEquals(Map.of("a", 1L, "b", 2L), view(store, "v"));
    }
  }

  @Test
  void blobsRoundTripThroughEveryTier() {
    byte[] big = new byte[200_000];
    new java.util.Random(7).nextBytes(big);
    try (ContextStore store = ContextStore.open(options(dir, "b", "context"))) {
      store.add(List.of(rec("id", "img", "binary_payload", big), rec("id", "none"), rec("id", "empty", "binary_payload", new byte[0])));
      inEveryTier(store, () -> {
        assertArrayEquals(big, (byte[]) store.get("img").orElseThrow().get("binary_payload"));
        Map<String, Object> scanned = view(store, "binary_payload");
        assertArrayEquals(big, (byte[]) scanned.get("img"));
        assertEquals(null, scanned.get("none"));
        assertEquals(null, scanned.get("empty"), "an empty blob in a nullable column is stored as null");
      });
    }
  }

  @Test
  void mergesUpdateRowsOfStoresWithBlobColumns() {
    try (ContextStore store = ContextStore.open(options(dir, "bu", "rollout"))) {
      for (int round = 0; round < 5; round++) {
        List<Map<String, Object>> rows = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
          // half of each round updates keys already merged, half are new; some carry blob bytes
          int k = round * 150 + i;
          rows.add(rec("id", "k" + k, "reward", (double) round, "binary_payload",
              k % 3 == 0 ? new byte[] {(byte) round, (byte) k} : null));
        }
        store.add(rows);
        store.seal();
        assertTrue(store.merge().merged());
      }
      assertEquals(4.0, store.get("k700").orElseThrow().get("reward"));
      assertArrayEquals(new byte[] {4, (byte) 750}, (byte[]) store.get("k750").orElseThrow().get("binary_payload"));
      assertEquals(3.0, store.get("k599").orElseThrow().get("reward"), "k599 was last written in round 3");
      assertEquals(900, store.count());
    }
  }

  @Test
  void projectionLimitAndOffset() {
    try (ContextStore store = ContextStore.open(options(dir, "p", "rollout"))) {
      for (int batch = 0; batch < 4; batch++) {
        List<Map<String, Object>> rows = new java.util.ArrayList<>();
        for (int i = 0; i < 25; i++) {
          rows.add(rec("id", "k" + (batch * 25 + i), "sequence_order", batch * 25 + i));
        }
        store.add(rows);
        if (batch == 1) {
          store.seal();
          store.merge();
        }
      }
      List<Map<String, Object>> page = store.scanRecords(ScanSpec.all().withColumns(List.of("sequence_order"))
          .withOffset(30).withLimit(40));
      assertEquals(40, page.size());
      assertEquals(List.of("sequence_order"), List.copyOf(page.get(0).keySet()));
      assertEquals(100, store.scanRecords(ScanSpec.all().withColumns(List.of("id"))).size());
      assertEquals(0, store.scanRecords(ScanSpec.all().withOffset(100)).size());
      assertEquals(5, store.scanRecords(ScanSpec.all().withFilter(Predicate.compare("sequence_order", Predicate.Op.GE, 95L))).size());
      SchemaException e = assertThrows(SchemaException.class,
          () -> store.scanRecords(ScanSpec.all().withColumns(List.of("nope"))));
      assertEquals("nope", e.column().orElseThrow());
      SchemaException f = assertThrows(SchemaException.class,
          () -> store.scanRecords(ScanSpec.all().withFilter(Predicate.eq("reward", "high"))));
      assertEquals("reward", f.column().orElseThrow());
    }
  }

  @Test
  void openingErrorsAreTyped() {
    Map<String, String> missing = new HashMap<>(Map.of("path", dir.resolve("missing").toString()));
    StoreNotFoundException nf = assertThrows(StoreNotFoundException.class, () -> ContextStore.open(missing));
    assertTrue(nf.getMessage().contains("schema"), nf.getMessage());
    BadOptionException unknown = assertThrows(BadOptionException.class,
        () -> ContextStore.open(options(dir, "x", "rollout", "shard", "3")));
    assertEquals("shard", unknown.key());
    BadOptionException bad = assertThrows(BadOptionException.class,
        () -> ContextStore.open(options(dir, "x", "rollout", "write.put-timeout", "soon")));
    assertEquals("write.put-timeout", bad.key());
    BadOptionException preset = assertThrows(BadOptionException.class, () -> ContextStore.open(options(dir, "x", "chat")));
    assertEquals("schema", preset.key());
    try (ContextStore ignored = ContextStore.open(options(dir, "y", "rollout"))) {
      // created
    }
    ContextStore.closeAllResident();
    SchemaException other = assertThrows(SchemaException.class, () -> ContextStore.open(options(dir, "y", "context")));
    assertTrue(other.getMessage().contains("another schema spec"));
    BadOptionException shards = assertThrows(BadOptionException.class,
        () -> ContextStore.open(options(dir, "y", "rollout", "shards", "8")));
    assertEquals("shards", shards.key());
    try (ContextStore reopened = ContextStore.open(Map.of("path", dir.resolve("y").toString()))) {
      assertEquals("rollout", reopened.spec().preset().orElseThrow());
      assertEquals(2, reopened.shards());
    }
  }

  @Test
  void badRecordWritesNothing() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "bad", "rollout"))) {
      store.add(List.of(rec("id", "ok", "reward", 1.0)));
      long walFiles = countWalFiles(store);
      InvalidRecordException e = assertThrows(InvalidRecordException.class,
          () -> store.add(List.of(rec("id", "k1", "reward", 1.0), rec("id", "k2", "reward", "lots"))));
      assertEquals("reward", e.column());
      assertEquals(1, e.row());
      assertEquals(walFiles, countWalFiles(store), "nothing reached the WAL");
      assertEquals(Map.of("ok", 1.0), view(store, "reward"));
    }
  }

  private long countWalFiles(ContextStore store) throws Exception {
    long n = 0;
    for (String shard : ShardIds.all(store.shards())) {
      Path wal = Path.of(store.uri(), ShardLayout.walDir(shard));
      if (Files.exists(wal)) {
        try (Stream<Path> s = Files.list(wal)) {
          n += s.count();
        }
      }
    }
    return n;
  }

  @Test
  void mergeIsIdempotentAndNeverReMergesAtOrBelowTheWatermark() {
    try (ContextStore store = ContextStore.open(options(dir, "m", "rollout"))) {
      store.add(List.of(rec("id", "a", "reward", 1.0), rec("id", "b", "reward", 1.0)));
      store.seal();
      store.add(List.of(rec("id", "a", "reward", 2.0)));
      store.seal();
      MergeResult first = store.merge();
      assertTrue(first.merged());
      assertEquals(2, first.rows(), "deduplicated across generations");
      Map<String, Object> before = view(store, "reward");
      MergeResult again = store.merge();
      assertFalse(again.merged());
      assertEquals(first.baseVersion(), store.stats().baseVersion(), "a repeated merge commits nothing");
      assertEquals(before, view(store, "reward"));
      assertEquals(Map.of("a", 2.0, "b", 1.0), before);
    }
  }

  @Test
  void garbageCollectionRemovesMergedGenerationsAndNothingStillNeeded() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "g", "rollout", "gc.grace", "0s", "shards", "1"))) {
      store.add(List.of(rec("id", "a", "reward", 1.0)));
      store.seal();
      store.merge();
      store.add(List.of(rec("id", "b", "reward", 2.0)));
      store.seal();  // an unmerged generation (2)
      store.add(List.of(rec("id", "b", "reward", 2.5)));
      store.seal();  // another one (3)
      store.add(List.of(rec("id", "c", "reward", 3.0)));  // the WAL tail
      Path shard = Path.of(store.uri(), ShardLayout.shardDir(ShardIds.forLane(0, 0)));
      List<String> listed = new ArrayList<>(generationDirs(shard));
      assertEquals(3, listed.size(), "generation 1 (merged), 2 and 3 in lane 0: " + listed);
      listed.removeIf(n -> n.endsWith("_gen_1"));
      // an orphan of a fenced writer (a number below a listed one) and a flush in progress (above all)
      Files.createDirectories(shard.resolve("0dd0dd00_gen_2/data"));
      Files.createDirectories(shard.resolve("f1e1d000_gen_4/data"));
      Thread.sleep(20);
      var gc = store.gc();
      assertTrue(gc.ran());
      assertEquals(2, gc.generationDirs(), "the merged generation and the orphan");
      assertEquals(3, gc.walEntries(), "the three sealed entries");
      List<String> expected = new ArrayList<>(listed);
      expected.add("f1e1d000_gen_4");
      assertEquals(expected.stream().sorted().toList(), generationDirs(shard), "unmerged and in-flight generations stay");
      Files.delete(shard.resolve("f1e1d000_gen_4/data"));
      Files.delete(shard.resolve("f1e1d000_gen_4"));
      assertEquals(Map.of("a", 1.0, "b", 2.5, "c", 3.0), view(store, "reward"));
      store.seal();
      store.merge();
      assertEquals(Map.of("a", 1.0, "b", 2.5, "c", 3.0), view(store, "reward"));
    }
    ContextStore.closeAllResident();
    try (ContextStore reopened = ContextStore.open(Map.of("path", dir.resolve("g").toString()))) {
      assertEquals(3, reopened.count());
    }
  }

  /**
   * A reader that last looked at a shard longer ago than {@code gc.grace} finds its newest manifest even once
   * garbage collection removed the versions between (it used to look for the version after the one it knew only,
   * found none, and kept reading the fresh tier as it was).
   */
  @Test
  void aReadAfterAnIdleSpellLongerThanGcGraceSeesTheNewestShardManifest() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "idle", "rollout", "gc.grace", "1s", "shards", "1",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      store.add(List.of(rec("id", "a", "reward", 0.0)));
      assertEquals(Map.of("a", 0.0), view(store, "reward"));  // the read caches the shard's manifest
      Map<String, Object> expected = new TreeMap<>();
      expected.put("a", 0.0);
      for (int i = 0; i < 12; i++) {  // more manifest versions than garbage collection always keeps
        store.add(List.of(rec("id", "k" + i, "reward", (double) i)));
        expected.put("k" + i, (double) i);
        store.seal();
      }
      store.merge();
      store.add(List.of(rec("id", "a", "reward", 9.0)));  // in the WAL tail
      expected.put("a", 9.0);
      for (int i = 0; i < 2; i++) {
        Thread.sleep(1_600);
        assertTrue(store.gc().ran());
      }
      assertEquals(expected, view(store, "reward"));
    }
  }

  private static List<String> generationDirs(Path shard) throws IOException {
    try (Stream<Path> s = Files.list(shard)) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.contains("_gen_")).sorted().toList();
    }
  }

  @Test
  void bucketsAreIcebergCompatible() {
    // The hash test vectors of the Iceberg spec (appendix B, 32-bit hash requirements); Iceberg's bucket
    // transform is (hash & Integer.MAX_VALUE) % n, so each expected bucket below follows from its vector.
    assertEquals(1210000089, io.lancecontext.core.internal.write.BucketsTestAccess.murmur3("iceberg"));
    assertEquals(9, Buckets.of("iceberg", 16));
    assertEquals(89, Buckets.of("iceberg", 1000));
    assertEquals(441, Buckets.of(new byte[] {0, 1, 2, 3}, 0, 4, 1000), "binary 00 01 02 03: hash -188683207");
    assertEquals(441, Buckets.of(new byte[] {9, 9, 0, 1, 2, 3, 9}, 2, 4, 1000), "the same bytes at an offset");
    assertEquals(379, Buckets.of(new byte[] {34, 0, 0, 0, 0, 0, 0, 0}, 0, 8, 1000), "long 34: hash 2017239379");
    assertEquals(3226, Buckets.of(new byte[] {0x4e, 0x44, 0, 0, 0, 0, 0, 0}, 0, 8, 10_000),
        "date 2017-11-16 (day 17486): hash -653330422");
    assertEquals(59, Buckets.of(new byte[] {0x05, (byte) 0x8c}, 0, 2, 1000), "decimal 14.20 (unscaled 1420): hash -500754589");
    byte[] uuid = java.util.HexFormat.of().parseHex("f79c3e09677c4bbda4793f349cb785e7");
    assertEquals(340, Buckets.of(uuid, 0, 16, 1000), "uuid f79c3e09-677c-4bbd-a479-3f349cb785e7: hash 1488055340");
    try (ContextStore store = ContextStore.open(options(dir, "bk", "rollout", "shards", "16"))) {
      assertEquals(9, store.bucketOf("iceberg"));
      store.add(List.of(rec("id", "iceberg")));
      List<Integer> written = store.stats().shards().stream().filter(s -> s.puts() > 0).map(StoreStats.Shard::bucket)
          .distinct().toList();
      assertEquals(List.of(9), written, "the row was written to a shard of bucket 9");
    }
  }

  @Test
  void statsDescribeTheStore() {
    try (ContextStore store = ContextStore.open(options(dir, "st", "rollout"))) {
      store.add(List.of(rec("id", "a"), rec("id", "b"), rec("id", "c")));
      StoreStats s = store.stats();
      assertEquals(4, s.shards().size(), "two buckets of two lanes");
      assertEquals(3, s.freshRows());
      assertEquals(0, s.baseRows());
      assertTrue(s.bytesOnDisk() > 0);
      assertTrue(s.openWriters() >= 1);
      store.seal();
      store.merge();
      s = store.stats();
      assertEquals(3, s.baseRows());
      assertEquals(0, s.freshRows());
      assertEquals(0, s.unmergedGenerations());
      assertTrue(s.shards().stream().anyMatch(x -> x.mergedWatermark() > 0));
      assertEquals(1, s.maintenance().merges());
      assertTrue(s.summary().contains("3 rows"), s.summary());
    }
  }
}
