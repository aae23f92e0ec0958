package io.lancecontext.core;

import static io.lancecontext.core.TransactionTest.transactionOptions;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreTest;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A JVM that reads a store's published parts keeps the keys of the parts it stages until its readers load them
 * (no key column read after the publish); a JVM that only writes keeps none.
 */
class StagedKeysTest extends StoreTest {
  @Test
  void aReaderInThisJvmReadsTheKeysThisJvmStagedAndSeesEveryUpsertAndDeletion() {
    try (ContextStore store = ContextStore.open(transactionOptions(dir))) {
      StagedKeys staged = store.resident().transactions().stagedKeys();
      Map<String, Object> model = new TreeMap<>();
      WriteSummary first = TransactionTest.stage(store, "tx0", "a", 0, 40, 1);
      store.publish("tx0", List.of(first));
      for (int i = 0; i < 40; i++) {
        model.put("k" + i, 1);
      }
      assertEquals(model, StoreTestSupport.view(store, "token_count"), "read from disk: this JVM had no reader yet");
      assertEquals(0, staged.size());

      WriteSummary upserts = TransactionTest.stage(store, "tx1", "a", 30, 60, 2);
      WriteSummary deletes;
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("tx1", "b").build())) {
        w.delete(List.of("k3", "k35", "k59", "never-written"));
        deletes = w.commit();
      }
      int parts = upserts.staged().size() + deletes.staged().size();
      assertTrue(parts >= 2, upserts + " " + deletes);
      assertEquals(parts, staged.size(), "a reader loaded a part lately: the keys of every part staged are kept");
      assertEquals(model, StoreTestSupport.view(store, "token_count"), "staged, not published: invisible");

      store.publish("tx1", List.of(upserts, deletes));
      for (int i = 30; i < 60; i++) {
        model.put("k" + i, 2);
      }
      List.of("k3", "k35", "k59").forEach(model::remove);
      assertEquals(model, StoreTestSupport.view(store, "token_count"));
      assertEquals(0, staged.size(), "the reader took every part's keys");
      assertEquals(2, store.get("k40").orElseThrow().get("token_count"));
      assertTrue(store.get("k35").isEmpty());
      assertEquals(model.size(), store.count());
      store.merge();  // the parts' data files join the base as they are
      assertEquals(model, StoreTestSupport.view(store, "token_count"), "merged: the same rows");
      for (String k : List.of("k0", "k3", "k35", "k40", "k59", "never-written")) {
        assertEquals(Optional.ofNullable(model.get(k)), store.get(k).map(r -> r.get("token_count")), "merged: " + k);
      }
      assertEquals(model.size(), store.lookup(List.copyOf(model.keySet()), List.of("id"), false).size());
    }
  }

  @Test
  void aJvmThatOnlyWritesKeepsNoKeys() {
    try (ContextStore store = ContextStore.open(transactionOptions(dir))) {
      StagedKeys staged = store.resident().transactions().stagedKeys();
      for (int t = 0; t < 3; t++) {
        WriteSummary s = TransactionTest.stage(store, "tx" + t, "a", 0, 100, t);
        store.publish("tx" + t, List.of(s));
        assertEquals(0, staged.size());
      }
      assertEquals(100, store.count(), "counted, not loaded: still no reader of parts");
    }
  }
}
