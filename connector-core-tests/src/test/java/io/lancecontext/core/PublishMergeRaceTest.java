package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A merge in another process never moves a bucket's transaction watermark past a publish still in flight.
 *
 * <p>A publish takes its bucket's publish sequence first and writes its record after. Another process can
 * claim the bucket in between, publish a later transaction there and merge it: the bucket's transaction
 * watermark then reaches past the first publish's sequence while its record does not exist yet. Readers treat a
 * part at or below the watermark as merged, so the first transaction's rows, published and acknowledged, would
 * be read from nowhere (seen in {@code SparkClusterTest}: two executors' bulk writes, one part of 35 rows gone).
 */
class PublishMergeRaceTest {
  @TempDir
  Path dir;

  @Test
  void aMergeInAnotherProcessWaitsForAPublishWhoseRecordIsNotWrittenYet() throws Exception {
    Map<String, String> options = StoreTest.options(dir, "s", "context", "shards", "1");
    String path = options.get("path");
    try (ContextStore store = ContextStore.open(options)) {
      WriteSummary staged;
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("t1", "0").build())) {
        w.write(TransactionProcess.row(1, 1));
        staged = w.commit();
      }
      AtomicReference<String> childSaid = new AtomicReference<>();
      // between t1's publish sequence and its record: another process publishes t2 into the same bucket and merges
      store.publish("t1", List.of(staged), () -> {
        try (ChildJvm child = ChildJvm.start(TransactionProcess.class, dir.resolve("child.log"), "publish-merge", path,
            "t2", "2", "2")) {
          childSaid.set(child.readLine());
          assertEquals(0, child.waitFor(120), child::tail);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      assertEquals(Map.of("k1", 1, "k2", 2), tokenCounts(store), "both transactions' rows are read");
      assertTrue(childSaid.get() != null && childSaid.get().startsWith("merged false"),
          "the other process's merge waited for t1's record: " + childSaid.get());
      assertTrue(store.merge().merged());
      assertEquals(Map.of("k1", 1, "k2", 2), tokenCounts(store), "and still once merged");
    }
  }

  /**
   * A live intent (a publish in flight elsewhere) holds back merges of the buckets it names, and only those; one
   * older than {@code PublishIntents.STALE} is a dead publisher's: merges ignore it and garbage collection
   * deletes it.
   */
  @Test
  void aLiveIntentHoldsBackItsBucketsAndAStaleOneIsIgnoredAndCollected() throws Exception {
    Map<String, String> options = StoreTest.options(dir, "s", "context", "shards", "2", "gc.grace", "0s");
    Path intents = Path.of(options.get("path"), "_lc", "txn-publishing");
    try (ContextStore store = ContextStore.open(options)) {
      int[] keyOf = new int[2];
      for (int k = 0; keyOf[0] == 0 || keyOf[1] == 0; k++) {
        keyOf[ContextStore.bucketOf("k" + k, 2)] = k;
      }
      WriteSummary staged;
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("t1", "0").build())) {
        w.write(TransactionProcess.row(keyOf[0], 1));
        w.write(TransactionProcess.row(keyOf[1], 1));
        staged = w.commit();
      }
      store.publish("t1", List.of(staged));
      java.nio.file.Files.createDirectories(intents);
      Path live = java.nio.file.Files.writeString(intents.resolve("other.live"), System.currentTimeMillis() + " 0");
      var first = store.merge();
      assertEquals(Map.of(io.lancecontext.core.internal.txn.TxnIds.txnShardId(1), 1), first.generations(),
          "only bucket 1 merged while a publish into bucket 0 is in flight: " + first);
      java.nio.file.Files.delete(live);
      long stale = System.currentTimeMillis() - io.lancecontext.core.internal.txn.PublishIntents.STALE.toMillis() - 1;
      Path dead = java.nio.file.Files.writeString(intents.resolve("dead.stale"), stale + " 0");
      var second = store.merge();
      assertEquals(Map.of(io.lancecontext.core.internal.txn.TxnIds.txnShardId(0), 1), second.generations(),
          "a stale intent holds nothing back: " + second);
      assertEquals(Map.of("k" + keyOf[0], 1, "k" + keyOf[1], 1), tokenCounts(store));
      store.gc();
      assertTrue(!java.nio.file.Files.exists(dead), "garbage collection deleted the stale intent");
    }
  }

  private static Map<String, Integer> tokenCounts(ContextStore store) {
    Map<String, Integer> out = new java.util.TreeMap<>();
    for (Map<String, Object> r : store.scanRecords(io.lancecontext.core.read.ScanSpec.all())) {
      out.put((String) r.get("id"), (Integer) r.get("token_count"));
    }
    return out;
  }
}
