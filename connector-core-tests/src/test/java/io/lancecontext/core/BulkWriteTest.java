package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The bulk path: large immediate writes are written once as Lance data, small ones through the WAL. */
class BulkWriteTest extends StoreTest {
  private static Map<String, Object> row(String key, int value) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("token_count", value);
    return r;
  }

  private long walEntries() throws Exception {
    try (Stream<Path> files = Files.walk(dir.resolve("s/_mem_wal"))) {
      return files.filter(p -> p.getParent().getFileName().toString().equals("wal")).count();
    }
  }

  @Test
  void aHandleStreamingManyRowsWritesThemOnceAsLanceDataAndSmallAddsKeepTheWal() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "s", "context", "shards", "4",
        "write.batch-rows", "500", "merge.trigger.generations", "1000", "merge.trigger.interval", "1h"))) {
      store.add(List.of(row("k1", 1), row("k2", 1)));
      long walBefore = walEntries();
      assertTrue(walBefore > 0, "a small add goes through the WAL");
      try (StoreWriter w = store.newWriter()) {
        for (int i = 0; i < 2_000; i++) {
          w.write(row("k" + i, 2));
        }
        assertEquals(2_000, store.count(), "full buffers are visible once written (immediate mode)");
        w.delete("k3");
        w.commit();
      }
      assertEquals(walBefore + 1, walEntries(), "2,000 rows in 500-row flushes wrote no WAL entry but the last put");
      assertEquals(1_999, store.count());
      store.add(List.of(row("k1", 3)));  // a small add after the bulk writes: newer
      StoreTestSupport.inEveryTier(store, () -> {
        Map<String, Object> view = StoreTestSupport.view(store, "token_count");
        assertEquals(1_999, view.size());
        assertEquals(3, view.get("k1"));
        assertEquals(2, view.get("k2"));
        assertTrue(!view.containsKey("k3"));
      });
    }
  }

  /** A continuous handle (a stream's) puts full buffers through the WAL, unless write.bulk-rows is set. */
  @Test
  void aContinuousHandleKeepsTheWalForFullBuffersUnlessBulkRowsIsSet() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "s", "context", "shards", "2",
        "write.batch-rows", "100", "merge.trigger.generations", "1000", "merge.trigger.interval", "1h"))) {
      try (StoreWriter w = store.newWriter(WriterOptions.builder().continuous().build())) {
        for (int i = 0; i < 500; i++) {
          w.write(row("c" + i, 1));
        }
        w.commit();
      }
      assertEquals(500, store.count());
      assertEquals(0, store.resident().writes().bulkWrites(), "a continuous handle's full buffers take the WAL");
    }
    try (ContextStore store = ContextStore.open(options(dir, "s", "context", "shards", "2",
        "write.batch-rows", "100", "write.bulk-rows", "100"));
        StoreWriter w = store.newWriter(WriterOptions.builder().continuous().build())) {
      for (int i = 0; i < 500; i++) {
        w.write(row("d" + i, 1));
      }
      w.commit();
      assertTrue(store.resident().writes().bulkWrites() > 0, "an explicit write.bulk-rows applies to it too");
      assertEquals(1_000, store.count());
    }
  }

  @Test
  void aLargeAddTakesTheBulkPathAndKeepsTheOrderOfAddsOnTheSameKeys() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "s", "context", "write.bulk-rows", "100",
        "merge.trigger.generations", "1000", "merge.trigger.interval", "1h"))) {
      List<Map<String, Object>> big = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        big.add(row("k" + i, 1));
      }
      store.add(List.of(row("k0", 0)));
      store.add(big);
      store.add(List.of(row("k1", 2)));
      big.replaceAll(r -> row((String) r.get("id"), 4));
      store.add(big);
      assertEquals(4, store.get("k1").orElseThrow().get("token_count"));
      StoreTestSupport.inEveryTier(store, () -> {
        Map<String, Object> view = StoreTestSupport.view(store, "token_count");
        assertEquals(300, view.size());
        assertTrue(view.values().stream().allMatch(v -> v.equals(4)), view.toString());
      });
    }
  }

  @Test
  void theBulkPathsOwnTransactionsLeaveNothingBehindOnceMergedAndCollected() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "s", "context", "write.bulk-rows", "10",
        "gc.grace", "0s", "merge.trigger.generations", "1000", "merge.trigger.interval", "1h"))) {
      List<Map<String, Object>> big = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        big.add(row("k" + i, 1));
      }
      store.add(big);
      assertTrue(Files.list(dir.resolve("s/_lc/txn")).findAny().isPresent(), "the add was staged as a transaction");
      store.merge();
      Thread.sleep(5);
      store.gc();
      try (Stream<Path> left = Files.list(dir.resolve("s/_lc/txn"))) {
        assertEquals(List.of(), left.toList());
      }
      assertEquals(50, store.count());
    }
  }

  /**
   * A Spark task streams its whole partition through one atomic handle: the store's Arrow memory stays
   * within about three times {@code write.batch-bytes} (buffer, its copy split by bucket, staging buffer)
   * however many rows pass, so a partition four times as large peaks no higher.
   */
  @Test
  void anAtomicHandleStreamsAPartitionWithMemoryBoundedByTheBatchBytesNotTheRows() throws Exception {
    String text = "x".repeat(300);
    long[] peaks = new long[2];
    int[] rows = {8_000, 32_000};
    for (int run = 0; run < 2; run++) {
      String name = "m" + run;
      try (ContextStore store = ContextStore.open(options(dir, name, "context", "shards", "4",
          "write.batch-rows", "100000", "write.batch-bytes", "512KiB", "merge.trigger.generations", "1000",
          "merge.trigger.interval", "1h"))) {
        org.apache.arrow.memory.BufferAllocator allocator = store.resident().allocator();
        long before = allocator.getAllocatedMemory();
        long peak = 0;
        io.lancecontext.core.result.WriteSummary summary;
        try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("t" + run, "0").build())) {
          for (int i = 0; i < rows[run]; i++) {
            Map<String, Object> r = row("k" + i, i);
            r.put("text_payload", text + i);
            w.write(r);
            if (i % 250 == 0) {
              peak = Math.max(peak, allocator.getAllocatedMemory() - before);
            }
          }
          summary = w.commit();
          peak = Math.max(peak, allocator.getAllocatedMemory() - before);
        }
        store.publish("t" + run, List.of(summary));
        assertEquals(rows[run], store.count());
        assertEquals(rows[run], summary.rowsWritten());
        assertTrue(summary.staged().size() > 4, "the staging buffer wrote parts while the rows streamed: "
            + summary.staged().size());
        peaks[run] = peak;
      }
    }
    long bound = 13 * 512 * 1024 / 4;  // 3.25 x write.batch-bytes: room for Arrow's rounding  // buffer + staging buffer, with room for Arrow's rounding
    assertTrue(peaks[0] <= bound && peaks[1] <= bound, "peak Arrow memory " + peaks[0] + " and " + peaks[1]
        + " bytes, over " + bound);
    // 32,000 rows of ~320 bytes (10 MB) streamed within the same bound as 8,000 (2.5 MB)
    assertTrue(peaks[1] < peaks[0] * 3 / 2 + 64 * 1024, "memory grew with the rows: " + peaks[0] + " -> " + peaks[1]);
  }
}
