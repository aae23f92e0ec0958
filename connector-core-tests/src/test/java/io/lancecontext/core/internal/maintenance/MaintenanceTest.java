package io.lancecontext.core.internal.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.KeyIndexCoverage;
import io.lancecontext.core.internal.lance.LanceCompaction;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.VectorIndex;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.lance.VersionCleanup;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;

class MaintenanceTest extends StoreTest {
  private Map<String, String> options(String name, String... more) {
    return options(dir, name, "rollout", more);
  }

  private static List<Map<String, Object>> rows(String prefix, int n) {
    return rows(prefix, n, "sequence_order");
  }

  private static List<Map<String, Object>> rows(String prefix, int n, String intColumn) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Map<String, Object> r = new HashMap<>();
      r.put("id", prefix + i);
      r.put(intColumn, i);
      out.add(r);
    }
    return out;
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(100);
    }
  }

  @Test
  void compactionAlwaysDefersIndexRemap() {
    StoreConfig config = StoreConfig.of(options("c"));
    assertEquals(Boolean.TRUE, LanceCompaction.options(config).getDeferIndexRemap().orElse(false));
    try (ContextStore store = ContextStore.open(config)) {
      for (int round = 0; round < 6; round++) {
        store.add(rows("r" + round + "-", 40));
        store.seal();
        store.merge();
      }
      int fragments = store.stats().fragments();
      assertTrue(fragments >= 6, "each merge appended fragments: " + fragments);
      // with lance-core's default (immediate) remap this call aborts the JVM on a MemWAL table
      CompactionResult r = store.compact();
      assertTrue(r.ran());
      assertTrue(r.fragmentsAfter() < r.fragmentsBefore(), r.toString());
      for (int round = 0; round < 6; round++) {
        for (int i = 0; i < 40; i += 7) {
          assertEquals(i, store.get("r" + round + "-" + i).orElseThrow().get("sequence_order"));
        }
      }
      assertEquals(240, store.count());
    }
    try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open().allocator(a).uri(config.uri()).build()) {
      List<String> indexes = ds.listIndexes();
      assertTrue(indexes.contains("id_idx"), indexes.toString());
      assertFalse(indexes.contains(LanceCompaction.FRAG_REUSE_INDEX), indexes.toString());
    }
  }

  @Test
  void compactionThatRewritesAsManyFragmentsKeepsLookupsAndExclusionsCorrect() {
    Map<String, String> o = options("cd");
    o.put("schema", "context");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(rows("k", 200, "token_count"));
      store.seal();
      store.merge();
      List<String> deleted = new ArrayList<>();
      for (int i = 0; i < 200; i += 2) {
        deleted.add("k" + i);
      }
      store.delete(deleted);
      store.seal();
      store.merge();  // deletion files on the base fragments
      CompactionResult r = store.compact();
      assertTrue(r.ran());
      for (int i = 0; i < 200; i++) {
        assertEquals(i % 2 == 1, store.get("k" + i).isPresent(), "k" + i + " after " + r);
      }
      store.add(rows("k", 10, "token_count"));  // k0..k9 again, now in the fresh tier; the base holds k1, k3, ...
      List<Map<String, Object>> all = store.scanRecords(ScanSpec.all().withColumns(List.of("id")));
      assertEquals(105, all.size());
      assertEquals(105, all.stream().map(m -> m.get("id")).distinct().count(), "no key twice");
    }
  }

  @Test
  void backgroundMergeOnTheGenerationCountTrigger() throws Exception {
    try (ContextStore store = ContextStore.open(options("g", "merge.trigger.generations", "3", "merge.trigger.interval", "1h"))) {
      for (int i = 0; i < 3; i++) {
        store.add(rows("g" + i + "-", 5));
        store.seal();
      }
      // each round seals one generation per shard, so the trigger may fire after the second round and
      // leave the third round's generations (fewer than the trigger) for a later merge
      await("a background merge leaving fewer generations than the trigger",
          () -> store.stats().maintenance().merges() >= 1 && store.stats().unmergedGenerations() < 3);
      StoreStats s = store.stats();
      assertTrue(s.baseRows() >= 5, () -> "the merge took at least the first round: " + s.summary());
      assertEquals(15, store.count());
    }
  }

  @Test
  void openGenerationsAreSealedByAgeAndMergedByInterval() throws Exception {
    try (ContextStore store = ContextStore.open(options("i", "merge.trigger.generations", "100", "merge.trigger.interval", "2s"))) {
      store.add(rows("i", 5));
      assertEquals(5, store.stats().freshRows());
      // a merge commits its rows, then marks the generations merged (MergeCommits.replaceAndMark): between the two
      // commits the base holds the rows while the fresh tier still does too, so wait for both at once
      await("sealing by age and merging by interval", () -> {
        StoreStats s = store.stats();
        return s.baseRows() == 5 && s.freshRows() == 0 && s.unmergedGenerations() == 0;
      });
      assertTrue(store.stats().maintenance().merges() >= 1, "merged by the interval trigger");
      assertEquals(5, store.scanRecords(ScanSpec.all()).size());
    }
  }

  @Test
  void aBucketSealsAtItsShareOfHalfTheReadersCacheAtMostWriteBatchBytes() {
    long mib = 1L << 20;
    assertEquals(32 * mib, Maintenance.sealBytes(StoreConfig.of(options("s1")), 4), "defaults, 4 shards");
    assertEquals(64 * mib, Maintenance.sealBytes(StoreConfig.of(options("s2")), 1), "write.batch-bytes bounds it");
    assertEquals(8 * mib, Maintenance.sealBytes(StoreConfig.of(options("s3", "write.batch-bytes", "8MiB")), 4));
    assertEquals(mib, Maintenance.sealBytes(StoreConfig.of(options("s4", "read.fresh-cache-bytes", "1MiB")), 64),
        "never below 1 MiB");
    StoreConfig defaults = StoreConfig.of(options("s5"));
    // buckets that fill at the same pace seal one after the other: a sixteenth less for each step of bucket % 8
    assertEquals(List.of(32 * mib, 30 * mib, 28 * mib, 26 * mib, 32 * mib), List.of(Maintenance.sealBytes(defaults, 4, 0),
        Maintenance.sealBytes(defaults, 4, 1), Maintenance.sealBytes(defaults, 4, 2), Maintenance.sealBytes(defaults, 4, 3),
        Maintenance.sealBytes(defaults, 4, 8)));
  }

  @Test
  void aReadersSmallCacheMakesWritersSealSmallGenerationsWhichReadTheSame() throws Exception {
    // 4 MiB of cache over 2 shards: each bucket seals at 1 MiB, far below write.batch-bytes and 1,024 entries
    try (ContextStore store = ContextStore.open(options("g", "read.fresh-cache-bytes", "4MiB",
        "merge.trigger.interval", "1h", "merge.trigger.generations", "1000", "write.idle-timeout", "1h"))) {
      String text = "x".repeat(2_000);
      List<Map<String, Object>> all = new ArrayList<>();
      for (int batch = 0; batch < 12; batch++) {
        List<Map<String, Object>> rows = rows("g" + batch + "-", 200);
        rows.forEach(r -> r.put("text_payload", text));
        store.add(rows);
        all.addAll(rows);
      }
      await("both buckets to seal a generation", () -> store.stats().shards().stream()
          .filter(sh -> sh.seals() > 0).count() >= 2);
      assertEquals(0, store.stats().maintenance().merges(), "nothing merged: the rows are in the fresh tier");
      assertEquals(all.size(), store.count());
      List<Map<String, Object>> found = store.lookup(List.of("g0-0", "g11-199"), List.of("id", "text_payload"), false);
      assertEquals(2, found.size());
      found.forEach(r -> assertEquals(text, r.get("text_payload")));
      assertEquals(all.size(), store.scanRecords(ScanSpec.all()).size());
    }
  }

  @Test
  void theIndexCheckWaitsForAMergeBacklogAtMostTheRebuildInterval() {
    Duration rebuild = Duration.ofMinutes(5);
    long t0 = 1_000_000_000L;
    assertFalse(Maintenance.indexWaitsForMerges(-1, t0, rebuild), "no backlog");
    assertTrue(Maintenance.indexWaitsForMerges(t0, t0 + Duration.ofSeconds(30).toNanos(), rebuild));
    assertFalse(Maintenance.indexWaitsForMerges(t0, t0 + rebuild.toNanos(), rebuild), "not for ever");
  }

  /**
   * A bulk load's generations are merged a few at a time (merge.max-inputs here); the vector index is built once they
   * are all in the base, over every row, not after the first merge over a quarter of them (and then not again
   * within the rebuild interval, the rest of the load read exactly meanwhile, and merges waiting for the build).
   */
  @Test
  void aVectorIndexIsBuiltOnceTheMergeBacklogIsMergedOverEveryRow() throws Exception {
    List<Map<String, Object>> load = new ArrayList<>();
    try (ContextStore store = ContextStore.open(options("ix", "merge.trigger.generations", "1000000",
        "merge.trigger.interval", "1h"))) {
      for (int round = 0; round < 4; round++) {
        List<Map<String, Object>> rows = rows("x" + round + "-", 400);
        for (int i = 0; i < rows.size(); i++) {
          rows.get(i).put("embedding", new float[] {round, i, i % 7, 1});
        }
        store.add(rows);
        store.seal();
        load.addAll(rows);
      }
      assertEquals(8, store.stats().unmergedGenerations(), "a generation per round and shard, nothing merged");
    }
    // the same store reopened by a handle that merges two generations at a time and indexes from 300 rows
    try (ContextStore store = ContextStore.open(options("ix", "merge.trigger.generations", "2", "merge.max-inputs", "2",
        "merge.trigger.interval", "1h", "search.index.min-rows", "300", "search.index.check-interval", "1s",
        "search.index.rebuild-interval", "1h"))) {
      store.add(List.of(Map.of("id", "start")));  // this JVM writes, so it maintains the store
      await("the backlog merged and a vector index built", () -> {
        StoreStats st = store.stats();
        return st.unmergedGenerations() <= 1 && st.maintenance().searchIndexBuilds() >= 1;
      });
      StoreConfig config = StoreConfig.of(options("ix"));
      try (RootAllocator a = new RootAllocator();
          LanceDataset base = StoreDatasets.open(config.uri(), config, a)) {
        KeyIndexCoverage coverage = KeyIndexCoverage.ofIndex(base, VectorIndex.name("embedding"));
        assertTrue(coverage.exists());
        assertTrue(coverage.rows() >= load.size(), coverage.toString());
        assertTrue(coverage.uncoveredRows() <= 1, "the index covers the whole load: " + coverage.uncoveredRows()
            + " of " + coverage.rows() + " rows uncovered");
      }
      assertEquals(load.size() + 1, store.count());
    }
  }

  @Test
  void idleWritersAreClosed() throws Exception {
    try (ContextStore store = ContextStore.open(options("w", "write.idle-timeout", "1s"))) {
      store.add(rows("w", 5));
      assertTrue(store.stats().shards().stream().anyMatch(StoreStats.Shard::writerOpen));
      await("idle writers to close", () -> store.stats().shards().stream().noneMatch(StoreStats.Shard::writerOpen));
      // the writer is let go at once and its generation flushed in the background
      await("closing to seal them", () -> store.stats().shards().stream().mapToLong(StoreStats.Shard::seals).sum() >= 1);
      assertEquals(5, store.count());
    }
  }

  @Test
  void aLiveMaintenanceLeaseOfAnotherProcessSkipsTheMergeAndAnExpiredOneIsTakenOver() throws Exception {
    try (ContextStore store = ContextStore.open(options("l", "merge.trigger.generations", "1000", "merge.trigger.interval", "1h"))) {
      store.add(rows("l", 5));
      store.seal();
      Path first = Path.of(store.uri(), MaintenanceLock.path(1));
      Files.createDirectories(first.getParent());
      Files.write(first, new MaintenanceLock.Lease("other-process", System.currentTimeMillis() + 60_000, false).encode());
      MergeResult skipped = store.merge();
      assertFalse(skipped.merged());
      assertTrue(skipped.reason().contains("another process"), skipped.reason());
      Files.write(first, new MaintenanceLock.Lease("dead-process", System.currentTimeMillis() - 1, false).encode());
      assertTrue(store.merge().merged());
      StoreFiles files = StoreFiles.forUri(store.uri());
      assertEquals(2, MaintenanceLock.numbers(files).get(MaintenanceLock.numbers(files).size() - 1),
          "the expired lease 1 was taken over by creating lease 2");
      assertTrue(MaintenanceLock.current(files).orElseThrow().released(), "the lease is released after the merge");
    }
  }

  private static VersionCleanup.TableVersion version(long id, long millis) {
    return new VersionCleanup.TableVersion(id, millis);
  }

  @Test
  void aBaseVersionIsKeptWhileItsSuccessorIsYoungerThanTheGrace() {
    // version 1 was committed long ago but superseded only at t=900: it is kept until 900 + grace
    List<VersionCleanup.TableVersion> history = List.of(version(1, 0), version(2, 900), version(3, 950), version(4, 2000));
    assertEquals(1, GarbageCollector.firstVersionToKeep(history, 899), "2 is younger than the grace: keep 1");
    assertEquals(2, GarbageCollector.firstVersionToKeep(history, 900), "1 superseded at the cutoff: drop it");
    assertEquals(3, GarbageCollector.firstVersionToKeep(history, 1999));
    assertEquals(4, GarbageCollector.firstVersionToKeep(history, 5000), "the latest always stays");
    assertEquals(-1, GarbageCollector.newestCommittedBy(history, -1));
    assertEquals(3, GarbageCollector.newestCommittedBy(history, 1999), "merges up to version 3 are older than the grace");
  }

  @Test
  void theLedgerDatesAWalEntryFromTheFirstCollectionThatSawItSealed() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    Files.createDirectories(dir.resolve("_lc"));
    GcLedger ledger = GcLedger.read(files);
    ledger.walObsolete("s", 10, 1_000);
    ledger.walObsolete("s", 10, 5_000);   // the same position seen again: still obsolete since 1,000
    ledger.walObsolete("s", 25, 6_000);
    ledger.manifestsSuperseded("s", 4, 2_000);
    ledger.write(files);
    GcLedger read = GcLedger.read(files);
    assertEquals(1_000, read.walObsoleteSince("s", 1));
    assertEquals(1_000, read.walObsoleteSince("s", 10));
    assertEquals(6_000, read.walObsoleteSince("s", 11));
    assertEquals(-1, read.walObsoleteSince("s", 26), "not sealed yet");
    assertEquals(-1, read.walObsoleteSince("other", 1));
    assertEquals(2_000, read.manifestSupersededSince("s", 3));
    assertEquals(-1, read.manifestSupersededSince("s", 4), "the manifest current then is not superseded");
    assertEquals(7_000, read.orphanedSince("s", "abc_gen_3", 7_000));
    assertEquals(7_000, read.orphanedSince("s", "abc_gen_3", 9_000));
    read.prune(6_500, java.util.Set.of());
    long since = read.walObsoleteSince("s", 10);
    assertTrue(since >= 0 && since <= 6_500, "entries at or below the newest pruned bound stay collectable: " + since);
    assertEquals(-1, read.walObsoleteSince("s", 26));
    assertEquals(9_000, read.orphanedSince("s", "abc_gen_3", 9_000), "a vanished orphan is forgotten");
  }
}
