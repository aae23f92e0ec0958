package io.lancecontext.core;

import static io.lancecontext.core.TransactionTest.transactionOptions;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.store.StoreRegistry;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.RandomRecords;
import io.lancecontext.core.testing.RecordAssertions;
import io.lancecontext.core.testing.StoreTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A JVM that reads a store keeps the keys and rows of the parts it stages until its readers load them (no key column
 * read after the publish, no part opened for a lookup); a JVM that only writes keeps none.
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
  void aReaderInThisJvmCopiesTheRowsThisJvmStagedWithoutOpeningTheirParts() throws Exception {
    Map<String, String> options = options(dir, "rich", LsmModelTest.RICH_SPEC, "gc.grace", "0s",
        "merge.trigger.generations", "1000", "merge.trigger.interval", "1h", "write.idle-timeout", "1h");
    long baseline = LanceRuntime.get().allocator().getAllocatedMemory();
    StoreRegistry registry = new StoreRegistry(8, Duration.ofMillis(200));
    try (ContextStore store = ContextStore.open(registry, StoreConfig.of(options))) {
      List<Map<String, Object>> records = new RandomRecords(store.spec(), 11, 0.3).next(120);
      Map<String, Map<String, Object>> model = new TreeMap<>();
      for (int i = 0; i < records.size(); i++) {
        Map<String, Object> r = records.get(i);
        r.put("id", "k" + i);
        if (i % 4 == 0) {
          r.put("meta", null);
          r.put("rels", null);
        }
        model.put("k" + i, r);
      }
      store.publish("tx0", List.of(stageRecords(store, "tx0", records.subList(0, 20))));
      assertEquals(20, store.lookup(List.copyOf(model.keySet()), List.of("id"), false).size(),
          "a reader loaded the first part: from now on this JVM keeps what it stages");
      WriteSummary first = stageRecords(store, "tx1", records.subList(20, 70));
      store.publish("tx1", List.of(first));
      store.publish("tx2", List.of(stageRecords(store, "tx2", records.subList(70, records.size()))));

      List<String> all = store.spec().columnNames();
      List<String> columns = all.stream().filter(c -> !store.spec().column(c).blob()).toList();
      List<String> keys = new java.util.ArrayList<>(model.keySet());
      keys.add("never-written");
      assertLookups(model, store.lookup(keys, columns, false), columns, "copied from the staged rows");
      Map<String, Map<String, Object>> second = only(model, 70, records.size());
      assertLookups(second, store.lookup(List.copyOf(second.keySet()), all, false), all,
          "a blob column is taken from the part's file");

      // tx1's part files gone: lookups of its kept rows neither open nor read them
      for (WriteSummary.StagedPart p : first.staged()) {
        java.nio.file.Path part = dir.resolve("rich").resolve(TxnIds.partDir("tx1", p.bucket(), p.name()));
        try (var files = java.nio.file.Files.walk(part)) {
          files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
      }
      Map<String, Map<String, Object>> firstRows = only(model, 20, 70);
      assertLookups(firstRows, store.lookup(List.copyOf(firstRows.keySet()), columns, false), columns,
          "from memory only");
      StorageException gone = assertThrows(StorageException.class, () -> store.scanRecords(ScanSpec.all()),
          "a scan opens the part, whose files are gone");
      assertTrue(gone.getMessage().contains("staged part"), gone.getMessage());
    }
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (registry.residentStores() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(50);
      registry.cleanUp();
    }
    assertEquals(0, registry.residentStores());
    assertEquals(baseline, LanceRuntime.get().allocator().getAllocatedMemory(), "the kept rows were freed");
  }

  private static Map<String, Map<String, Object>> only(Map<String, Map<String, Object>> model, int from, int to) {
    Map<String, Map<String, Object>> out = new TreeMap<>(model);
    out.keySet().removeIf(k -> Integer.parseInt(k.substring(1)) < from || Integer.parseInt(k.substring(1)) >= to);
    return out;
  }

  private static WriteSummary stageRecords(ContextStore store, String txid, List<Map<String, Object>> records) {
    try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txid, "a").build())) {
      records.forEach(w::write);
      return w.commit();
    }
  }

  private static void assertLookups(Map<String, Map<String, Object>> model, List<Map<String, Object>> found,
      List<String> columns, String context) {
    Map<String, Map<String, Object>> byKey = new TreeMap<>();
    found.forEach(r -> byKey.put((String) r.get("id"), r));
    assertEquals(model.keySet(), byKey.keySet(), context);
    model.forEach((k, expected) -> {
      Map<String, Object> e = new TreeMap<>(expected);
      e.keySet().retainAll(columns);
      String d = RecordAssertions.difference(e, new TreeMap<>(byKey.get(k)), k);
      assertTrue(d == null, context + ": " + d);
    });
  }

  @Test
  void aReaderThatStartedBeforeTheFirstPublishFindsThatPublishsPartsKept() {
    try (ContextStore store = ContextStore.open(transactionOptions(dir))) {
      StagedKeys staged = store.resident().transactions().stagedKeys();
      assertTrue(store.get("k0").isEmpty(), "a reader polls before anything is published (a Flink job's lookups)");
      WriteSummary first = TransactionTest.stage(store, "tx0", "a", 0, 40, 1);
      assertEquals(first.staged().size(), staged.size(), "a reader read the store lately: the first parts are kept");
      store.publish("tx0", List.of(first));
      assertEquals(1, store.get("k7").orElseThrow().get("token_count"));
      Map<String, Object> model = new TreeMap<>();
      for (int i = 0; i < 40; i++) {
        model.put("k" + i, 1);
      }
      assertEquals(model, StoreTestSupport.view(store, "token_count"));
      assertEquals(0, staged.size(), "the reader took every part");
    }
  }

  @Test
  void aJvmThatOnlyWritesKeepsNoKeys() {
    try (ContextStore store = ContextStore.open(transactionOptions(dir))) {
      StagedKeys staged = store.resident().transactions().stagedKeys();
      // immediate writes and publishes read the fresh tier's write sequences themselves: not a reader
      store.add(List.of(TransactionTest.row("w0", 0)));
      for (int t = 0; t < 3; t++) {
        WriteSummary s = TransactionTest.stage(store, "tx" + t, "a", 0, 100, t);
        store.publish("tx" + t, List.of(s));
        assertEquals(0, staged.size());
      }
      assertEquals(101, store.count(), "counted, not loaded: still no reader of parts");
    }
  }
}
