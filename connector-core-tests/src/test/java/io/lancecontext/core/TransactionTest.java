package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.TransactionAbortedException;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Atomic commits: staged rows are invisible until their transaction is published, then visible together. */
class TransactionTest extends StoreTest {
  private Map<String, String> options(String... more) {
    return transactionOptions(dir, more);
  }

  /** A {@code context} store {@code s} under {@code dir} that merges and collects only when a test asks. */
  static Map<String, String> transactionOptions(java.nio.file.Path dir, String... more) {
    List<String> all = new ArrayList<>(List.of("merge.trigger.generations", "1000", "merge.trigger.interval", "1h",
        "write.idle-timeout", "1h", "gc.grace", "0s", "merge.append-min-rows", "1"));
    all.addAll(List.of(more));
    return options(dir, "s", "context", all.toArray(new String[0]));
  }

  static Map<String, Object> row(String key, int value) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("token_count", value);
    return r;
  }

  static WriteSummary stage(ContextStore store, String txid, String part, int from, int to, int value) {
    try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txid, part).build())) {
      for (int i = from; i < to; i++) {
        w.write(row("k" + i, value));
      }
      return w.commit();
    }
  }

  @Test
  void stagedRowsAreInvisibleUntilPublishedThenAllVisible() {
    try (ContextStore store = ContextStore.open(options())) {
      store.add(List.of(row("k0", 1), row("k1", 1)));
      WriteSummary a = stage(store, "tx1", "0/0", 0, 50, 2);
      WriteSummary b = stage(store, "tx1", "1/0", 50, 100, 2);
      assertEquals(50, a.rowsWritten());
      assertFalse(a.staged().isEmpty());
      assertEquals(2, store.count());
      assertEquals(1, store.get("k0").orElseThrow().get("token_count"));
      PublishResult r = store.publish("tx1", List.of(a, b));
      assertFalse(r.alreadyPublished());
      assertEquals(100, r.rows());
      assertEquals(100, store.count());
      Map<String, Object> view = StoreTestSupport.view(store, "token_count");
      assertEquals(100, view.size());
      assertTrue(view.values().stream().allMatch(v -> v.equals(2)), view.toString());
      assertEquals(2, store.get("k0").orElseThrow().get("token_count"));
    }
  }

  @Test
  void aPublishedTransactionReadsTheSameInEveryTierAndFromSplits() {
    try (ContextStore store = ContextStore.open(options())) {
      store.add(List.of(row("k0", 1), row("k5", 1)));
      WriteSummary a = stage(store, "tx", "a", 0, 20, 2);
      store.publish("tx", List.of(a));
      store.add(List.of(row("k5", 3)));  // after the publish returned: newer than the transaction
      StoreTestSupport.inEveryTier(store, () -> {
        Map<String, Object> view = StoreTestSupport.view(store, "token_count");
        assertEquals(20, view.size(), view.toString());
        assertEquals(2, view.get("k0"));
        assertEquals(3, view.get("k5"));
        assertEquals(3, store.get("k5").orElseThrow().get("token_count"));
        ReadPlan plan = store.planRead(ScanSpec.all(), 4);
        Map<String, Object> fromSplits = new HashMap<>();
        for (ReadSplit split : plan.splits()) {
          try (StoreReader reader = store.read(split)) {
            reader.records().forEach(rec -> fromSplits.put((String) rec.get("id"), rec.get("token_count")));
          }
        }
        assertEquals(view, fromSplits);
        // a read by key (one split of the keys' buckets) sees the published parts too
        Map<String, Object> byKey = new HashMap<>();
        var keys = io.lancecontext.core.read.Predicate.in("id", List.of("k0", "k5", "k7", "absent"));
        for (ReadSplit split : store.planRead(ScanSpec.all().withFilter(keys), 4).splits()) {
          try (StoreReader reader = store.read(split)) {
            reader.records().forEach(rec -> byKey.put((String) rec.get("id"), rec.get("token_count")));
          }
        }
        assertEquals(Map.of("k0", 2, "k5", 3, "k7", 2), byKey);
      });
    }
  }

  @Test
  void aReadPlanReadsTheTransactionsPublishedBeforeItWasPlannedAndNoOther() {
    try (ContextStore store = ContextStore.open(options())) {
      store.publish("before", List.of(stage(store, "before", "a", 0, 10, 1)));
      WriteSummary later = stage(store, "after", "a", 5, 15, 2);
      ReadPlan plan = store.planRead(ScanSpec.all(), 4);
      store.publish("after", List.of(later));
      Map<String, Object> fromSplits = new HashMap<>();
      for (ReadSplit split : plan.splits()) {
        try (StoreReader reader = store.read(split)) {
          reader.records().forEach(rec -> fromSplits.put((String) rec.get("id"), rec.get("token_count")));
        }
      }
      assertEquals(10, fromSplits.size(), fromSplits.toString());
      assertTrue(fromSplits.values().stream().allMatch(v -> v.equals(1)), "a split read a later transaction: "
          + fromSplits);
      assertEquals(15, store.count());
    }
  }

  @Test
  void withinATransactionTheGreatestPartIdWinsAKey() {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary b = stage(store, "tx", "b", 0, 10, 2);
      WriteSummary a = stage(store, "tx", "a", 0, 10, 1);
      store.publish("tx", List.of(b, a));
      StoreTestSupport.inEveryTier(store, () -> {
        Map<String, Object> view = StoreTestSupport.view(store, "token_count");
        assertEquals(10, view.size());
        assertTrue(view.values().stream().allMatch(v -> v.equals(2)), view.toString());
      });
    }
  }

  @Test
  void aHandleStagesOnePartPerBucketNotOnePerBucketAndFlush() {
    try (ContextStore store = ContextStore.open(options("write.batch-rows", "10", "shards", "4"))) {
      WriteSummary a = stage(store, "tx", "a", 0, 200, 1);  // 20 flushes of its buffer
      assertEquals(200, a.rowsWritten());
      assertEquals(4, a.staged().size(), a.staged().toString());
      assertEquals(List.of(0, 1, 2, 3), a.staged().stream().map(WriteSummary.StagedPart::bucket).sorted().toList());
      store.publish("tx", List.of(a));
      assertEquals(200, store.count());
    }
  }

  @Test
  void aKeyWrittenAgainInOneHandleStartsANewPartAndTheLastRowWins() {
    try (ContextStore store = ContextStore.open(options("write.batch-rows", "10", "shards", "4"))) {
      WriteSummary a;
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("tx", "a").build())) {
        for (int round = 1; round <= 3; round++) {
          for (int i = 0; i < 40; i++) {
            w.write(row("k" + i, round));
          }
        }
        a = w.commit();
      }
      assertTrue(a.staged().size() >= 12, "each bucket's repeated keys start new parts: " + a.staged());
      store.publish("tx", List.of(a));
      StoreTestSupport.inEveryTier(store, () -> {
        Map<String, Object> view = StoreTestSupport.view(store, "token_count");
        assertEquals(40, view.size());
        assertTrue(view.values().stream().allMatch(v -> v.equals(3)), view.toString());
      });
    }
  }

  @Test
  void aHandlesStagedRowsStayBoundedByBatchBytes() {
    // a 1-byte bound: every flush of the handle's buffer is written out at once, one part per bucket
    try (ContextStore store = ContextStore.open(options("write.batch-rows", "10", "write.batch-bytes", "1",
        "shards", "4"))) {
      WriteSummary a = stage(store, "tx", "a", 0, 40, 1);
      assertTrue(a.staged().size() >= 8, a.staged().toString());
      store.publish("tx", List.of(a));
      assertEquals(40, store.count());
    }
  }

  @Test
  void aHandleWritesABucketsRowsAsAPartOnceTheyReachMergeMaxBytes() {
    // every part must fit in one merge: under a 1-byte merge cap each flush writes its buckets at once
    try (ContextStore store = ContextStore.open(options("write.batch-rows", "10", "merge.max-bytes", "1",
        "shards", "4"))) {
      WriteSummary a = stage(store, "tx", "a", 0, 40, 1);
      assertTrue(a.staged().size() > 4, a.staged().toString());
      assertTrue(a.staged().stream().allMatch(p -> p.rows() <= 10), a.staged().toString());
      store.publish("tx", List.of(a));
      assertEquals(40, store.count());
    }
  }

  @Test
  void aHandleClosedWithoutCommitLeavesNothingBufferedOrVisible() {
    try (ContextStore store = ContextStore.open(options("write.batch-rows", "10"))) {
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("tx", "a").build())) {
        for (int i = 0; i < 35; i++) {
          w.write(row("k" + i, 1));
        }
      }
      assertEquals(0, store.count());
    }
  }

  @Test
  void readsListTheTransactionsAgainOnlyAfterAPublishChangedItsMarker() throws Exception {
    try (ContextStore store = ContextStore.open(options())) {
      store.publish("a", List.of(stage(store, "a", "p", 0, 10, 1)));
      String marker = Files.readString(dir.resolve("s/_lc/txn-published"));
      assertEquals(10, store.count());
      long listings = store.resident().transactions().listings();
      for (int i = 0; i < 20; i++) {
        assertEquals(10, store.count());
        assertEquals(1, store.get("k3").orElseThrow().get("token_count"));
      }
      assertEquals(listings, store.resident().transactions().listings(), "reads without a publish list nothing");
      WriteSummary b = stage(store, "b", "p", 5, 15, 2);
      store.publish("b", List.of(b));
      assertFalse(marker.equals(Files.readString(dir.resolve("s/_lc/txn-published"))), "a publish changes the marker");
      assertEquals(15, store.count());
      assertEquals(2, store.get("k7").orElseThrow().get("token_count"));
      assertEquals(listings + 1, store.resident().transactions().listings());
      marker = Files.readString(dir.resolve("s/_lc/txn-published"));
      assertTrue(store.publish("b", List.of(b)).alreadyPublished());
      assertFalse(marker.equals(Files.readString(dir.resolve("s/_lc/txn-published"))),
          "a replayed publish changes it too (its first publisher may have died before writing it)");
    }
  }

  @Test
  void publishingAPublishedTransactionAgainChangesNothingAndSaysSo() {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary a = stage(store, "tx", "a", 0, 10, 1);
      PublishResult first = store.publish("tx", List.of(a));
      store.add(List.of(row("k3", 9)));
      PublishResult again = store.publish("tx", List.of(a));
      assertTrue(again.alreadyPublished());
      assertEquals(first.sequences(), again.sequences());
      assertEquals(9, store.get("k3").orElseThrow().get("token_count"));
      assertEquals(10, store.count());
    }
  }

  @Test
  void anAbortedTransactionIsNeverVisibleAndCannotBePublished() {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary a = stage(store, "tx", "a", 0, 10, 1);
      assertTrue(store.abort("tx"));
      assertFalse(store.abort("tx"));
      assertThrows(TransactionAbortedException.class, () -> store.publish("tx", List.of(a)));
      assertEquals(0, store.count());
    }
  }

  @Test
  void partsNotNamedByThePublishStayInvisible() {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary winner = stage(store, "tx", "0/1", 0, 10, 1);
      stage(store, "tx", "0/0", 10, 20, 1);  // a failed attempt: staged, never named
      store.publish("tx", List.of(winner));
      assertEquals(10, store.count());
      assertTrue(store.get("k15").isEmpty());
    }
  }

  @Test
  void aMergedTransactionsPartsAreCollectedAndItsRowsStayInTheBase() throws Exception {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary a = stage(store, "tx", "a", 0, 30, 5);
      store.publish("tx", List.of(a));
      assertTrue(store.merge().merged());
      Thread.sleep(5);  // the merge's base version is then older than gc.grace (0s)
      store.gc();
      assertFalse(Files.exists(dir.resolve("s/_lc/txn/tx")), "parts and record collected (the ledger keeps it)");
      ContextStore.closeAllResident();
      try (ContextStore again = ContextStore.open(options())) {
        assertEquals(30, again.count());
        assertEquals(5, again.get("k7").orElseThrow().get("token_count"));
        assertTrue(again.publish("tx", List.of(a)).alreadyPublished(), "a replay after collection changes nothing");
        assertEquals(30, again.count());
      }
    }
  }

  /** The data files of the transaction's staged parts (the .lance files under its directory). */
  private List<java.nio.file.Path> partFiles(String txid) {
    return dataFiles(dir.resolve("s/_lc/txn/" + txid));
  }

  /** Whether the base table's data directory holds {@code partFile} itself (the same file, linked). */
  private boolean inBase(java.nio.file.Path partFile) {
    return inBase(dir.resolve("s"), partFile);
  }

  @Test
  void aMergeAppendsThePartsWhoseRowsAllWinAsTheyAreAndRewritesTheOthers() throws Exception {
    try (ContextStore store = ContextStore.open(options("shards", "2"))) {
      store.publish("new", List.of(stage(store, "new", "a", 0, 60, 1)));
      List<java.nio.file.Path> fresh = partFiles("new");
      assertEquals(2, fresh.size(), fresh.toString());  // one part per bucket
      assertTrue(store.merge().merged());
      for (java.nio.file.Path f : fresh) {
        assertTrue(inBase(f), f + " was rewritten, not appended");
      }
      Map<String, Object> view = StoreTestSupport.view(store, "token_count");
      assertEquals(60, view.size());
      assertTrue(view.values().stream().allMatch(v -> v.equals(1)), view.toString());

      // updates of existing keys and new keys: the part is appended, the base rows it replaces deleted
      store.publish("upsert", List.of(stage(store, "upsert", "a", 30, 90, 2)));
      // a part with a key that a newer add of the same merge overrides is rewritten without that key's row
      store.publish("beaten", List.of(stage(store, "beaten", "a", 100, 110, 3)));
      store.add(List.of(row("k105", 4)));
      store.seal();
      assertTrue(store.merge().merged());
      assertTrue(partFiles("upsert").stream().allMatch(this::inBase));
      java.nio.file.Path beaten = partFiles("beaten").stream().filter(f -> {
        try (var allocator = new org.apache.arrow.memory.RootAllocator();
            var ds = org.lance.Dataset.open(f.getParent().getParent().toString(), allocator)) {
          return ds.countRows("id = 'k105'") == 1;
        }
      }).findFirst().orElseThrow();
      assertFalse(inBase(beaten), "a part whose row lost the merge was appended whole");
      assertEquals(0, store.stats().unmergedGenerations());
      view = StoreTestSupport.view(store, "token_count");
      Map<String, Object> expected = new HashMap<>();
      for (int i = 0; i < 110; i++) {
        if (i < 90 || i >= 100) {
          expected.put("k" + i, i < 30 ? 1 : i < 90 ? 2 : i == 105 ? 4 : 3);
        }
      }
      assertEquals(expected, view);
      assertEquals(110 - 10, store.count());
      assertEquals(4, store.get("k105").orElseThrow().get("token_count"));
      assertEquals(2, store.get("k31").orElseThrow().get("token_count"));
      store.compact();
      assertEquals(expected, StoreTestSupport.view(store, "token_count"));
    }
  }

  @Test
  void theBlobsOfAPartAppendedWholeReadBackFromTheBase() throws Exception {
    try (ContextStore store = ContextStore.open(options("shards", "1"))) {
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("blobs", "a").build())) {
        for (int i = 0; i < 20; i++) {
          Map<String, Object> r = row("k" + i, i);
          r.put("binary_payload", ("blob " + i).repeat(i % 3 == 0 ? 0 : 50).getBytes(java.nio.charset.StandardCharsets.UTF_8));
          w.write(r);
        }
        store.publish("blobs", List.of(w.commit()));
      }
      assertTrue(store.merge().merged());
      assertTrue(inBase(partFiles("blobs").get(0)), "the part was rewritten, not appended");
      assertEquals(0, store.stats().unmergedGenerations());
      for (int i = 0; i < 20; i++) {
        // an empty value is stored as null (a nullable blob column; docs/lance-core-7.md)
        byte[] expected = i % 3 == 0 ? null : ("blob " + i).repeat(50).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertArrayEquals(expected, (byte[]) store.get("k" + i).orElseThrow().get("binary_payload"), "k" + i);
      }
      Map<String, Object> view = StoreTestSupport.view(store, "binary_payload");
      assertEquals(20, view.size());
      assertArrayEquals("blob 7".repeat(50).getBytes(java.nio.charset.StandardCharsets.UTF_8), (byte[]) view.get("k7"));
    }
  }

  @Test
  void aPartSmallerThanAppendMinRowsIsRewrittenWithTheMergesOtherRows() throws Exception {
    try (ContextStore store = ContextStore.open(options("shards", "1", "merge.append-min-rows", "41"))) {
      store.publish("small", List.of(stage(store, "small", "a", 0, 40, 1)));
      store.publish("large", List.of(stage(store, "large", "a", 40, 81, 1)));
      assertTrue(store.merge().merged());
      assertFalse(inBase(partFiles("small").get(0)), "a 40-row part was appended whole");
      assertTrue(inBase(partFiles("large").get(0)), "a 41-row part was rewritten");
      assertEquals(81, store.count());
    }
  }

  @Test
  void aWriterThatClaimsABucketAfterAWholePartWasMergedPublishesAboveIt() throws Exception {
    // the appended part's rows keep no publish stamp; the next owner must still seed above the merged publish
    // (its clock an hour ahead of the next owner's)
    Map<String, String> opts = options("shards", "1");
    long merged;
    try (var ahead = io.lancecontext.core.internal.write.SkewedClock.by(java.time.Duration.ofHours(1));
        ContextStore store = ContextStore.open(opts)) {
      PublishResult r = store.publish("first", List.of(stage(store, "first", "a", 0, 10, 1)));
      merged = r.sequences().get(0);
      assertTrue(store.merge().merged());
      assertTrue(inBase(partFiles("first").get(0)));
    }
    ContextStore.closeAllResident();
    try (ContextStore store = ContextStore.open(opts)) {
      PublishResult second = store.publish("second", List.of(stage(store, "second", "a", 5, 15, 2)));
      assertTrue(second.sequences().get(0) > merged, second.sequences() + " not above " + merged);
      Map<String, Object> view = StoreTestSupport.view(store, "token_count");
      assertEquals(15, view.size());
      assertEquals(2, view.get("k5"));
      assertEquals(1, view.get("k4"));
    }
  }

  @Test
  void anUnpublishedTransactionYoungerThanTheGraceSurvivesGarbageCollection() {
    try (ContextStore store = ContextStore.open(options("gc.grace", "1h"))) {
      WriteSummary a = stage(store, "tx", "a", 0, 10, 1);
      store.gc();
      store.publish("tx", List.of(a));
      assertEquals(10, store.count());
    }
  }

  @Test
  void anUnpublishedTransactionIsGoneAfterGarbageCollection() throws Exception {
    try (ContextStore store = ContextStore.open(options("txn.timeout", "50ms"))) {
      stage(store, "lost", "a", 0, 10, 1);
      stage(store, "kept", "a", 0, 10, 1);
      assertTrue(Files.exists(dir.resolve("s/_lc/txn/lost")));
      store.abort("kept");
      Thread.sleep(100);  // "lost" is no longer renewed by anyone: it expires
      store.gc();
      assertEquals(0, store.count());
      for (String txid : List.of("lost", "kept")) {
        try (var left = Files.list(dir.resolve("s/_lc/txn/" + txid))) {
          assertEquals(List.of("record"), left.map(p -> p.getFileName().toString()).toList(),
              "staged data of unpublished transaction " + txid + " survived gc");
        }
      }
      assertThrows(TransactionAbortedException.class, () -> store.publish("lost", List.of()),
          "a transaction collected unpublished must never publish");
    }
  }
}
