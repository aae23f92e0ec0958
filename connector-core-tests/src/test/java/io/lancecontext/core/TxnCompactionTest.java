package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.TransactionAbortedException;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Garbage collection folds the records of merged transactions into the compact ledger: the records under
 * {@code _lc/txn} stay bounded, and a compacted transaction still reads as published to every publisher and
 * reader, in this process and in others.
 */
class TxnCompactionTest extends StoreTest {
  private Map<String, String> options(String... more) {
    return TransactionTest.transactionOptions(dir, more);
  }

  private static Map<String, Object> row(String key, int value) {
    return TransactionTest.row(key, value);
  }

  private static WriteSummary stage(ContextStore store, String txid, int from, int to, int value) {
    return TransactionTest.stage(store, txid, "p", from, to, value);
  }

  private List<String> transactionDirs() throws Exception {
    Path root = dir.resolve("s/_lc/txn");
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(root)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private List<String> ledgerVersions() throws Exception {
    Path root = dir.resolve("s/_lc/txn-ledger");
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(root)) {
      return s.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith(".")).sorted().toList();
    }
  }

  @Test
  void aMergedTransactionsRecordIsCompactedAndItsReplayStillChangesNothing() throws Exception {
    WriteSummary a;
    PublishResult first;
    try (ContextStore store = ContextStore.open(options())) {
      a = stage(store, "tx", 0, 30, 5);
      first = store.publish("tx", List.of(a));
      assertTrue(store.merge().merged());
      Thread.sleep(5);  // the merge's base version is then older than gc.grace (0s)
      store.gc();
      assertEquals(List.of(), transactionDirs(), "the merged transaction's record and parts are gone");
      assertFalse(ledgerVersions().isEmpty());
    }
    ContextStore.closeAllResident();  // a fresh JVM view: no record cached
    try (ContextStore store = ContextStore.open(options())) {
      store.add(List.of(row("k3", 9)));
      PublishResult again = store.publish("tx", List.of(a));
      assertTrue(again.alreadyPublished(), "a replay of a compacted transaction");
      assertEquals(first.sequences(), again.sequences());
      assertEquals(9, store.get("k3").orElseThrow().get("token_count"), "the replay changed nothing");
      assertEquals(5, store.get("k7").orElseThrow().get("token_count"));
      assertEquals(30, store.count());
      assertThrows(TransactionAbortedException.class, () -> store.abort("tx"),
          "a compacted transaction stays published");
      assertEquals(List.of(), transactionDirs(), "the replay wrote no record again");
    }
  }

  @Test
  void unmergedAndAbortedTransactionsKeepTheirRecords() throws Exception {
    try (ContextStore store = ContextStore.open(options())) {
      store.publish("pub", List.of(stage(store, "pub", 0, 10, 1)));
      stage(store, "ab", 10, 20, 1);
      store.abort("ab");
      Thread.sleep(5);
      store.gc();
      assertEquals(List.of("ab", "pub"), transactionDirs());
      assertTrue(Files.exists(dir.resolve("s/_lc/txn/pub/record")));
      assertTrue(Files.exists(dir.resolve("s/_lc/txn/ab/record")));
      assertEquals(10, store.count());
      assertTrue(store.merge().merged());
      Thread.sleep(5);
      store.gc();
      assertEquals(List.of("ab"), transactionDirs(), "the aborted one is kept, the merged one compacted");
      assertThrows(TransactionAbortedException.class, () -> store.publish("ab", List.of()));
      assertEquals(10, store.count());
    }
  }

  @Test
  void recordsStayBoundedOverManyPublishMergeGcCycles() throws Exception {
    int cycles = 40;
    List<WriteSummary> summaries = new ArrayList<>();
    int most = 0;
    try (ContextStore store = ContextStore.open(options())) {
      for (int c = 0; c < cycles; c++) {
        WriteSummary s = stage(store, "flink-sink-job-" + c, c * 5, c * 5 + 10, c);
        summaries.add(s);
        store.publish("flink-sink-job-" + c, List.of(s));
        assertTrue(store.merge().merged());
        Thread.sleep(2);
        store.gc();
        most = Math.max(most, transactionDirs().size());
        assertTrue(ledgerVersions().size() <= 3, ledgerVersions().toString());
      }
      assertTrue(most <= 1, "records left under _lc/txn after a collection: " + most);
      assertEquals(cycles * 5 + 5, store.count());
    }
    long bytes = Files.size(dir.resolve("s/_lc/txn-ledger/" + ledgerVersions().get(ledgerVersions().size() - 1)));
    System.out.println("ledger of " + cycles + " transactions: " + bytes + " bytes");
    ContextStore.closeAllResident();
    try (ContextStore store = ContextStore.open(options())) {
      for (int c = 0; c < cycles; c++) {
        assertTrue(store.publish("flink-sink-job-" + c, List.of(summaries.get(c))).alreadyPublished(), "txn " + c);
      }
      assertEquals(cycles * 5 + 5, store.count());
      assertEquals(cycles - 1, store.get("k" + (cycles * 5)).orElseThrow().get("token_count"));
    }
  }

  /**
   * A reader in another process polls the whole view while this one publishes, merges and compacts over
   * and over; the reader's cached listing goes stale under every compaction. Each transaction adds 10 new
   * keys: the reader must never see fewer rows than before. Then a publisher in another process replays a
   * compacted transaction.
   */
  @Test
  void readersAndPublishersInAnotherProcessNeverSeeACompactedTransactionAsUnpublished() throws Exception {
    String path = dir.resolve("s").toString();
    int cycles = 12;
    List<Integer> seen = new ArrayList<>();
    Path summaryFile = dir.resolve("first.bin");
    // a non-zero grace: the poller's scans must not lose base versions or files under them
    try (ContextStore store = ContextStore.open(options("gc.grace", "2s"))) {
      store.add(List.of(row("base", 1)));
      try (ChildJvm poller = ChildJvm.start(TransactionProcess.class, dir.resolve("poller.log"), "poller", path)) {
        assertEquals("ready", poller.readLine(), poller::tail);
        Thread reader = new Thread(() -> {
          try {
            String line;
            while ((line = poller.readLine()) != null && !line.equals("stopped")) {
              if (line.startsWith("state ")) {
                synchronized (seen) {
                  seen.add(Integer.parseInt(line.split(" ")[1]));
                }
              }
            }
          } catch (Exception e) {
            // the poller's end
          }
        });
        reader.start();
        for (int c = 0; c < cycles; c++) {
          String txid = "job-" + c;
          WriteSummary s = stage(store, txid, c * 10, c * 10 + 10, 2);
          if (c == 0) {
            Files.write(summaryFile, s.toBytes());
          }
          store.publish(txid, List.of(s));
          assertTrue(store.merge().merged());
          Thread.sleep(700);
          store.gc();
        }
        Thread.sleep(2_100);
        store.gc();
        assertTrue(transactionDirs().size() < cycles, "compaction ran: " + transactionDirs());
        assertFalse(transactionDirs().contains("job-0"));
        long until = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < until) {
          synchronized (seen) {
            if (!seen.isEmpty() && seen.get(seen.size() - 1) == cycles * 10 + 1) {
              break;
            }
          }
          Thread.sleep(50);
        }
        poller.send("exit");
        reader.join(60_000);
        synchronized (seen) {
          assertFalse(seen.isEmpty(), poller::tail);
          for (int i = 1; i < seen.size(); i++) {
            int at = i;
            assertTrue(seen.get(i) >= seen.get(i - 1), () -> "the poller saw rows disappear: " + seen + "\n"
                + poller.tail());
          }
          assertEquals(cycles * 10 + 1, seen.get(seen.size() - 1), poller::tail);
        }
      }
      assertEquals(cycles * 10 + 1, store.count());
    }
    try (ChildJvm publisher = ChildJvm.start(TransactionProcess.class, dir.resolve("publisher.log"), "publisher", path,
        "job-0", summaryFile.toString())) {
      assertEquals("publishing", publisher.readLine(), publisher::tail);
      assertEquals("published true", publisher.readLine(), publisher::tail);
      assertEquals(0, publisher.waitFor(60), publisher::tail);
    }
    assertEquals(List.of(), transactionDirs().stream().filter(d -> d.equals("job-0")).toList(),
        "the replay in another process wrote no record");
  }
}
