package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.TransactionAbortedException;
import io.lancecontext.core.error.TransactionExpiredException;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A transaction lives as long as its owner: garbage collection (here with {@code gc.grace} 0) aborts an
 * unpublished transaction only once nobody renewed it for its {@code txn.timeout}, and a replay after that
 * stages and publishes under a new attempt. Timeouts are a fraction of a second so that the tests run fast.
 */
class TransactionLivenessTest extends StoreTest {
  private static final long TIMEOUT_MILLIS = 1_000;

  private Map<String, String> options(String... more) {
    String[] all = Stream.concat(Stream.of("txn.timeout", TIMEOUT_MILLIS + "ms"), Stream.of(more))
        .toArray(String[]::new);
    return TransactionTest.transactionOptions(dir, all);
  }

  private static WriteSummary stage(ContextStore store, String txid, String part, int from, int to, int value) {
    return TransactionTest.stage(store, txid, part, from, to, value);
  }

  /** Runs garbage collection for {@code millis}, as a store's maintenance would while a job runs. */
  private static void collectFor(ContextStore store, long millis) throws InterruptedException {
    long end = System.currentTimeMillis() + millis;
    while (System.currentTimeMillis() < end) {
      store.gc();
      Thread.sleep(50);
    }
  }

  private Path txnDir(String id) {
    return dir.resolve("s/_lc/txn/" + id);
  }

  private List<String> markers(String id) throws Exception {
    if (!Files.exists(txnDir(id))) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(txnDir(id))) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("live-")).toList();
    }
  }

  @Test
  void aTransactionOlderThanTheGraceButWithinItsTimeoutStillPublishes() throws Exception {
    // a Flink job restored a few minutes after a failure: its committable's transaction must still publish
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary a = stage(store, "tx", "a", 0, 10, 1);
      Thread.sleep(100);
      store.gc();
      PublishResult r = store.publish("tx", List.of(a));
      assertFalse(r.alreadyPublished());
      assertEquals(10, store.count());
    }
  }

  @Test
  void anOpenHandleKeepsItsTransactionAliveLongerThanItsTimeout() throws Exception {
    // a Spark straggler: one task staged and finished, another stays open and stages nothing for a long time
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary done = stage(store, "tx", "a", 0, 10, 1);
      try (StoreWriter straggler = store.newWriter(WriterOptions.builder().transaction("tx", "b").build())) {
        collectFor(store, 3 * TIMEOUT_MILLIS);
        straggler.write(TransactionTest.row("k100", 2));
        WriteSummary late = straggler.commit();
        store.publish("tx", List.of(done, late));
      }
      assertEquals(11, store.count());
    }
  }

  @Test
  void aLeaseKeepsATransactionAliveUntilItIsClosedAndItsTimeoutPassed() throws Exception {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary a;
      try (TransactionLease lease = store.holdTransaction("held")) {
        a = stage(store, "held", "a", 0, 5, 1);
        stage(store, "dropped", "a", 0, 5, 1);
        collectFor(store, 2 * TIMEOUT_MILLIS);
        assertThrows(TransactionExpiredException.class, () -> store.publish("dropped", List.of()),
            "a transaction nobody held expired");
      }
      store.publish("held", List.of(a));
      assertEquals(5, store.count());
    }
  }

  @Test
  void anAbandonedTransactionExpiresAndItsPublishNamesTheTimeout() throws Exception {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary a = stage(store, "gone", "a", 0, 10, 1);
      Thread.sleep(TIMEOUT_MILLIS + 100);
      store.gc();
      TransactionExpiredException e = assertThrows(TransactionExpiredException.class,
          () -> store.publish("gone", List.of(a)));
      assertTrue(e.getMessage().contains("txn.timeout"), e.getMessage());
      assertFalse(e.isRetryable());
      assertEquals(0, store.count());
      try (Stream<Path> left = Files.list(txnDir("gone"))) {
        assertEquals(List.of("record"), left.map(p -> p.getFileName().toString()).toList(),
            "an expired transaction keeps its record only");
      }
    }
  }

  @Test
  void aReplayAfterTheTransactionExpiredPublishesUnderANewAttemptOnce() throws Exception {
    // a Spark streaming epoch replayed the next morning: it stages everything again under the same name
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary first = stage(store, "epoch-7", "0", 0, 10, 1);
      Thread.sleep(TIMEOUT_MILLIS + 100);
      store.gc();
      WriteSummary replay = stage(store, "epoch-7", "0", 0, 10, 2);
      assertEquals("epoch-7..1", replay.transactionId().orElseThrow());
      assertFalse(store.publish("epoch-7", List.of(replay)).alreadyPublished());
      assertEquals(10, store.count());
      assertEquals(2, store.get("k3").orElseThrow().get("token_count"));

      // replayed again (its commit was lost): the attempt is found published, nothing changes
      WriteSummary again = stage(store, "epoch-7", "0", 0, 10, 3);
      assertTrue(store.publish("epoch-7", List.of(again)).alreadyPublished());
      // the first attempt's committable, restored late: the transaction was published by its replay
      assertTrue(store.publish("epoch-7", List.of(first)).alreadyPublished());
      assertTrue(store.publish("epoch-7", List.of()).alreadyPublished());
      store.merge();
      Thread.sleep(5);
      store.gc();
      assertEquals(2, store.get("k3").orElseThrow().get("token_count"));
      assertEquals(10, store.count());
    }
  }

  @Test
  void aCommittableOfAnExpiredAttemptIsRefusedWhileTheNextIsOpen() throws Exception {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary first = stage(store, "cp-3", "0", 0, 10, 1);
      Thread.sleep(TIMEOUT_MILLIS + 100);
      store.gc();
      assertThrows(TransactionExpiredException.class, () -> store.publish("cp-3", List.of(first)));
      assertThrows(TransactionAbortedException.class, () -> store.publish("cp-3", List.of(first)),
          "asked again, the same answer");
      assertEquals(0, store.count());
    }
  }

  @Test
  void markersAreRemovedOnceTheTransactionIsDecidedOrItsHolderIsGone() throws Exception {
    try (ContextStore store = ContextStore.open(options())) {
      WriteSummary a = stage(store, "tx", "a", 0, 10, 1);
      // one marker; two when staging outlasted a renewal period (a quarter of the 1 s timeout) on a loaded machine
      List<String> staged = markers("tx");
      assertTrue(!staged.isEmpty() && staged.size() <= 2, "a staged part renews its transaction: " + staged);
      store.publish("tx", List.of(a));
      store.gc();
      assertEquals(List.of(), markers("tx"));

      try (TransactionLease lease = store.holdTransaction("idle")) {
        Thread.sleep(TIMEOUT_MILLIS);
        assertFalse(markers("idle").isEmpty(), "a held transaction is renewed");
        // two markers per JVM (three for a moment: the next is written before the one before the previous is
        // deleted), so that a collection listing them while a renewal runs always sees one alive
        assertTrue(markers("idle").size() <= 3, "a JVM keeps two markers of a transaction: " + markers("idle"));
      }
      Thread.sleep(TIMEOUT_MILLIS + 100);
      store.gc();
      assertEquals(List.of(), markers("idle"), "markers of a transaction that never staged anything are collected");
    }
  }

  @Test
  void aTimeoutThatIsNotPositiveIsRefusedNamingTheOption() {
    BadOptionException e = assertThrows(BadOptionException.class,
        () -> ContextStore.open(TransactionTest.transactionOptions(dir, "txn.timeout", "0s")));
    assertTrue(e.getMessage().contains("txn.timeout"), e.getMessage());
  }

  @Test
  void aTransactionIdMayNotHoldTheAttemptSeparator() {
    assertThrows(IllegalArgumentException.class, () -> WriterOptions.builder().transaction("a..1", "0"));
  }
}
