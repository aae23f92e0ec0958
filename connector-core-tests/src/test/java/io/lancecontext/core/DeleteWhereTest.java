package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.CommitConflictException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * DELETE by condition under concurrency: a key another writer changes between the delete's read and its
 * publish so that it no longer matches is never deleted (the delete fails, retryable, having deleted
 * nothing); a change that still matches is deleted.
 */
class DeleteWhereTest extends StoreTest {
  private static final Predicate SMALL = Predicate.compare("token_count", Predicate.Op.LT, 10);

  private ContextStore open() {
    return open(dir);
  }

  /** A store of keys k0..k19 (value i) in the base, k2's newest row in the WAL tail. */
  static ContextStore open(java.nio.file.Path dir) {
    ContextStore store = ContextStore.open(TransactionTest.transactionOptions(dir));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      rows.add(TransactionTest.row("k" + i, i));
    }
    store.add(rows);
    store.seal();
    store.merge();
    store.add(List.of(TransactionTest.row("k2", 2)));  // one key's newest row in the WAL tail
    return store;
  }

  @Test
  void deletesExactlyTheKeysThatMatchInOnePublish() {
    try (ContextStore store = open()) {
      PublishResult r = store.deleteWhere(SMALL);
      assertEquals(10, r.keysDeleted());
      assertEquals(10, store.count());
      assertFalse(store.get("k9").isPresent());
      assertTrue(store.get("k10").isPresent());
    }
  }

  @Test
  void aKeyChangedToNoLongerMatchBeforeThePublishIsAConflictAndNothingIsDeleted() {
    try (ContextStore store = open(); ContextStore other = ContextStore.open(TransactionTest.transactionOptions(dir))) {
      CommitConflictException e = assertThrows(CommitConflictException.class,
          () -> store.deleteWhere(SMALL, () -> other.add(List.of(TransactionTest.row("k3", 50)))));
      assertTrue(e.isRetryable());
      assertTrue(e.getMessage().contains("'k3'"), e.getMessage());
      assertEquals(20, store.count(), "nothing was deleted");
      assertEquals(50, store.get("k3").orElseThrow().get("token_count"), "the concurrent upsert stands");
      assertEquals(9, store.deleteWhere(SMALL).keysDeleted(), "run again, the delete succeeds (k3 no longer matches)");
      assertEquals(50, store.get("k3").orElseThrow().get("token_count"));
    }
  }

  @Test
  void aKeyChangedButStillMatchingIsDeleted() {
    try (ContextStore store = open()) {
      store.deleteWhere(SMALL, () -> store.add(List.of(TransactionTest.row("k3", 4))));
      assertFalse(store.get("k3").isPresent());
      assertEquals(10, store.count());
    }
  }

  @Test
  void aKeyDeletedMeanwhileIsAConflict() {
    try (ContextStore store = open()) {
      assertThrows(CommitConflictException.class, () -> store.deleteWhere(SMALL, () -> store.delete(List.of("k5"))));
      assertEquals(19, store.count());
    }
  }

  @Test
  void aStoreWithoutTombstonesIsRefusedNamingTheCapability() {
    try (ContextStore store = ContextStore.open(options(dir, "r", "rollout"))) {
      SchemaException e = assertThrows(SchemaException.class, () -> store.deleteWhere(SMALL));
      assertTrue(e.getMessage().contains("tombstones"), e.getMessage());
    }
  }
}
