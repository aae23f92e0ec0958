package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.CommitConflictException;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreTest;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Deletions chosen by a read ({@link ContextStore#publishDeletes}, a Spark DELETE Spark evaluates itself): a key
 * another writer writes or deletes after the read is a conflict in every tier it may be in by then, and nothing
 * is deleted; keys written only before the read are deleted.
 */
class DeletePublishTest extends StoreTest {
  private ContextStore open() {
    return DeleteWhereTest.open(dir);
  }

  /** The read: a plan's time, then the deletes staged for the keys it chose. */
  private static Instant read(ContextStore store) throws InterruptedException {
    Thread.sleep(2);  // stamps of the setup's writes fall in an earlier millisecond than the read
    return store.planRead(ScanSpec.all(), 1).plannedAt();
  }

  private static WriteSummary stageDeletes(ContextStore store, String txid, String... keys) {
    try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txid, "000000-0").build())) {
      for (String k : keys) {
        w.delete(k);
      }
      return w.commit();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "wal", "merged", "deleted"})
  void aKeyWrittenAfterTheReadIsAConflictAndNothingIsDeleted(String change) throws Exception {
    try (ContextStore store = open(); ContextStore other = ContextStore.open(TransactionTest.transactionOptions(dir))) {
      Instant readAt = read(store);
      WriteSummary staged = stageDeletes(store, "d", "k1", "k2", "k3");
      switch (change) {
        case "wal" -> other.add(List.of(TransactionTest.row("k3", 50)));
        case "merged" -> {
          other.add(List.of(TransactionTest.row("k3", 50)));
          other.flush();
        }
        case "deleted" -> other.delete(List.of("k3"));
        default -> { }
      }
      if (change.equals("none")) {
        assertEquals(3, store.publishDeletes("d", List.of(staged), readAt).keysDeleted());
        assertEquals(17, store.count());
        assertFalse(store.get("k2").isPresent());
        return;
      }
      CommitConflictException e = assertThrows(CommitConflictException.class,
          () -> store.publishDeletes("d", List.of(staged), readAt));
      assertTrue(e.isRetryable());
      assertTrue(e.getMessage().contains("'k3'"), e.getMessage());
      assertEquals(change.equals("deleted") ? 19 : 20, store.count(), "nothing of the delete is visible");
      assertTrue(store.get("k1").isPresent() && store.get("k2").isPresent());
    }
  }
}
