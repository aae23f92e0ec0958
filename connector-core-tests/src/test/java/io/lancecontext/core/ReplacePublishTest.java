package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A replacing publish (Spark's Overwrite): the store afterwards holds exactly the transaction's rows, at once,
 * on stores with the {@code tombstones} capability ({@code context}) and without it ({@code rollout}).
 */
class ReplacePublishTest extends StoreTest {
  /** The int column each preset's rows carry their value in. */
  private String column = "token_count";

  private Map<String, String> options(String schema) {
    return options(dir, "s", schema, "merge.trigger.generations", "1000", "merge.trigger.interval",
        "1h", "write.idle-timeout", "1h");
  }

  private ContextStore open(String schema) {
    column = schema.equals("rollout") ? "num_tokens" : "token_count";
    return ContextStore.open(options(schema));
  }

  private Map<String, Object> row(String key, int value) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put(column, value);
    return r;
  }

  private List<Map<String, Object>> rows(int from, int to, int value) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(row("k" + i, value));
    }
    return out;
  }

  private WriteSummary stage(ContextStore store, String txid, String part, int from, int to, int value) {
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

  @ParameterizedTest
  @ValueSource(strings = {"context", "rollout"})
  void afterAReplacingPublishTheStoreHoldsExactlyTheTransactionsRowsInEveryTier(String schema) {
    try (ContextStore store = open(schema)) {
      store.add(rows(0, 10, 1));
      store.seal();
      store.add(rows(8, 12, 1));
      WriteSummary a = stage(store, "tx", "000000-0", 5, 15, 2);
      WriteSummary b = stage(store, "tx", "000001-0", 15, 20, 2);
      PublishResult r = store.publishReplacing("tx", List.of(a, b));
      assertFalse(r.alreadyPublished());
      assertEquals(12, r.keysDeleted(), "one tombstone per key visible before");
      StoreTestSupport.inEveryTier(store, () -> {
        assertEquals(expected(5, 20, 2), StoreTestSupport.view(store, column));
        assertTrue(store.get("k0").isEmpty());
        assertEquals(2, store.get("k7").orElseThrow().get(column));
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
        assertEquals(expected(0, 2, 2), StoreTestSupport.view(store, column));
        assertEquals(2, store.scanRecords(everything).size(), store.scanRecords(everything).toString());
      });
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"context", "rollout"})
  void aReplacingPublishReplayedChangesNothing(String schema) {
    try (ContextStore store = open(schema)) {
      store.add(rows(0, 10, 1));
      WriteSummary a = stage(store, "tx", "a", 3, 6, 2);
      store.publishReplacing("tx", List.of(a));
      store.add(List.of(row("k9", 4)));
      PublishResult again = store.publishReplacing("tx", List.of(a));
      assertTrue(again.alreadyPublished());
      Map<String, Object> want = expected(3, 6, 2);
      want.put("k9", 4);
      assertEquals(want, StoreTestSupport.view(store, column));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"context", "rollout"})
  void aReplacingPublishOfAnEmptyTransactionEmptiesTheStore(String schema) {
    try (ContextStore store = open(schema)) {
      store.add(rows(0, 10, 1));
      store.publishReplacing("tx", List.of());
      assertEquals(0, store.count());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"context", "rollout"})
  void aPollingReaderSeesTheOldContentsOrTheNewNeverAMixNorAnEmptyStore(String schema) throws Exception {
    try (ContextStore store = open(schema)) {
      Map<String, Object> before = expected(0, 300, 1);
      Map<String, Object> after = expected(200, 400, 2);
      store.add(rows(0, 300, 1));
      WriteSummary a = stage(store, "tx", "000000-0", 200, 300, 2);
      WriteSummary b = stage(store, "tx", "000001-0", 300, 400, 2);
      AtomicBoolean done = new AtomicBoolean();
      List<String> bad = new CopyOnWriteArrayList<>();
      int[] seen = new int[2];
      Thread reader = new Thread(() -> {
        try (ContextStore other = ContextStore.open(options(schema))) {
          boolean last = false;
          while (!last) {
            last = done.get();
            Map<String, Object> view = StoreTestSupport.view(other, column);
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

  @ParameterizedTest
  @ValueSource(strings = {"btree", "none"})
  void withoutTheTombstonesCapabilityTheBaseNeverHoldsATombstoneAndADeletedKeyStaysDeletedAfterMerges(String index) {
    column = "num_tokens";
    Map<String, String> options = new HashMap<>(options("rollout"));
    options.put("index.key", index);
    try (ContextStore store = ContextStore.open(options)) {
      assertFalse(store.spec().has(io.lancecontext.core.schema.Capability.TOMBSTONES));
      store.add(rows(0, 10, 1));
      store.flush();
      store.publishReplacing("tx", List.of(stage(store, "tx", "a", 8, 12, 2)));
      store.flush();
      assertEquals(expected(8, 12, 2), StoreTestSupport.view(store, column));
      try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();
          org.lance.Dataset base = org.lance.Dataset.open(store.uri(), allocator)) {
        assertEquals(4, base.countRows(), "the deleted keys' rows are gone from the base, no tombstone row added");
        assertTrue(base.getSchema().getFields().stream().noneMatch(f -> f.getName().equals("_lc_tombstone")),
            base.getSchema().toString());
      }
      store.add(List.of(row("k0", 5)));
      store.flush();
      Map<String, Object> want = expected(8, 12, 2);
      want.put("k0", 5);
      assertEquals(want, StoreTestSupport.view(store, column), "a deleted key written again is an ordinary add");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"context", "rollout"})
  void rowsOtherWritersAddDuringTheReplaceAreDeletedIfTheirKeyWasReadAndKeptIfNew(String schema) {
    try (ContextStore store = open(schema); ContextStore other = ContextStore.open(options(schema))) {
      store.add(rows(0, 10, 1));
      WriteSummary a = stage(store, "tx", "a", 5, 7, 2);
      store.publishReplacing("tx", List.of(a), () -> {
        other.add(List.of(row("k1", 3)));    // a key the replace read: rewritten before the publish
        other.add(List.of(row("new", 3)));   // a key first written after the read
      });
      other.add(List.of(row("k2", 4)));      // after the publish returned
      Map<String, Object> want = expected(5, 7, 2);
      want.put("new", 3);
      want.put("k2", 4);
      StoreTestSupport.inEveryTier(store, () -> assertEquals(want, StoreTestSupport.view(store, column)));
    }
  }
}
