package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** A replacing publish (Spark's Overwrite): the store afterwards holds exactly the transaction's rows, at once. */
class ReplacePublishTest extends StoreTest {
  private Map<String, String> options(String schema) {
    return StoreTestSupport.options(dir, "s", schema, "merge.trigger.generations", "1000", "merge.trigger.interval",
        "1h", "write.idle-timeout", "1h");
  }

  private static Map<String, Object> row(String key, int value) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("token_count", value);
    return r;
  }

  private static List<Map<String, Object>> rows(int from, int to, int value) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(row("k" + i, value));
    }
    return out;
  }

  private static WriteSummary stage(ContextStore store, String txid, String part, int from, int to, int value) {
    try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txid, part).build())) {
      w.write(rows(from, to, value));
      return w.commit();
    }
  }

  private static Map<String, Object> expected(int from, int to, int value) {
    Map<String, Object> m = new HashMap<>();
    for (int i = from; i < to; i++) {
      m.put("k" + i, value);
    }
    return m;
  }

  @Test
  void afterAReplacingPublishTheStoreHoldsExactlyTheTransactionsRowsInEveryTier() {
    try (ContextStore store = ContextStore.open(options("context"))) {
      store.add(rows(0, 10, 1));
      store.seal();
      store.add(rows(8, 12, 1));
      WriteSummary a = stage(store, "tx", "000000-0", 5, 15, 2);
      WriteSummary b = stage(store, "tx", "000001-0", 15, 20, 2);
      PublishResult r = store.publishReplacing("tx", List.of(a, b));
      assertFalse(r.alreadyPublished());
      assertEquals(12, r.keysDeleted(), "one tombstone per key visible before");
      StoreTestSupport.inEveryTier(store, () -> {
        assertEquals(expected(5, 20, 2), StoreTestSupport.view(store, "token_count"));
        assertTrue(store.get("k0").isEmpty());
        assertEquals(2, store.get("k7").orElseThrow().get("token_count"));
      });
      store.add(List.of(row("k0", 3)));
      assertEquals(16, store.count(), "a later add is upserted as usual");
    }
  }

  @Test
  void supersededRetiredAndExpiredRecordsAreReplacedTooSoNoneReappears() {
    try (ContextStore store = ContextStore.open(options("context"))) {
      store.add(List.of(Map.of("id", "old"), Map.of("id", "newer", "supersedes", "old"),
          Map.of("id", "retired", "lifecycle_status", "retired")));
      ScanSpec everything = ScanSpec.all().withColumns(List.of("id")).withIncludeSuperseded(true).withIncludeExpired(true);
      assertEquals(3, store.scanRecords(everything).size());
      assertTrue(store.count() < 3, "'old' is hidden by default (superseded)");
      WriteSummary a = stage(store, "tx", "a", 0, 2, 2);
      store.publishReplacing("tx", List.of(a));
      StoreTestSupport.inEveryTier(store, () -> {
        assertEquals(expected(0, 2, 2), StoreTestSupport.view(store, "token_count"));
        assertEquals(2, store.scanRecords(everything).size(), store.scanRecords(everything).toString());
      });
    }
  }

  @Test
  void aReplacingPublishReplayedChangesNothing() {
    try (ContextStore store = ContextStore.open(options("context"))) {
      store.add(rows(0, 10, 1));
      WriteSummary a = stage(store, "tx", "a", 3, 6, 2);
      store.publishReplacing("tx", List.of(a));
      store.add(List.of(row("k9", 4)));
      PublishResult again = store.publishReplacing("tx", List.of(a));
      assertTrue(again.alreadyPublished());
      Map<String, Object> want = expected(3, 6, 2);
      want.put("k9", 4);
      assertEquals(want, StoreTestSupport.view(store, "token_count"));
    }
  }

  @Test
  void aReplacingPublishOfAnEmptyTransactionEmptiesTheStore() {
    try (ContextStore store = ContextStore.open(options("context"))) {
      store.add(rows(0, 10, 1));
      store.publishReplacing("tx", List.of());
      assertEquals(0, store.count());
    }
  }

  @Test
  void aPollingReaderSeesTheOldContentsOrTheNewNeverAMixNorAnEmptyStore() throws Exception {
    try (ContextStore store = ContextStore.open(options("context"))) {
      Map<String, Object> before = expected(0, 300, 1);
      Map<String, Object> after = expected(200, 400, 2);
      store.add(rows(0, 300, 1));
      WriteSummary a = stage(store, "tx", "000000-0", 200, 300, 2);
      WriteSummary b = stage(store, "tx", "000001-0", 300, 400, 2);
      AtomicBoolean done = new AtomicBoolean();
      List<String> bad = new CopyOnWriteArrayList<>();
      int[] seen = new int[2];
      Thread reader = new Thread(() -> {
        try (ContextStore other = ContextStore.open(options("context"))) {
          boolean last = false;
          while (!last) {
            last = done.get();
            Map<String, Object> view = StoreTestSupport.view(other, "token_count");
            if (view.equals(before)) {
              seen[0]++;
            } else if (view.equals(after)) {
              seen[1]++;
            } else {
              bad.add(view.size() + " rows");
            }
          }
        }
      });
      reader.start();
      Thread.sleep(200);
      store.publishReplacing("tx", List.of(a, b));
      done.set(true);
      reader.join(120_000);
      assertTrue(bad.isEmpty(), "a reader saw a half state: " + bad);
      assertTrue(seen[0] > 0 && seen[1] > 0, "the reader saw both states: " + seen[0] + " / " + seen[1]);
    }
  }

  @Test
  void withoutTheTombstonesCapabilityAReplaceIsRefusedNamingItAndNothingChanges() {
    try (ContextStore store = ContextStore.open(options("rollout"))) {
      assertFalse(store.spec().has(io.lancecontext.core.schema.Capability.TOMBSTONES));
      store.add(rows(0, 5, 1).stream().map(r -> Map.<String, Object>of("id", r.get("id"))).toList());
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("tx", "a").build())) {
        w.write(Map.of("id", "n1"));
        WriteSummary a = w.commit();
        SchemaException e = assertThrows(SchemaException.class, () -> store.publishReplacing("tx", List.of(a)));
        assertTrue(e.getMessage().contains("'tombstones'"), e.getMessage());
      }
      assertEquals(5, store.count());
      assertTrue(store.get("n1").isEmpty());
    }
  }
}
