package io.lancecontext.core.internal.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.read.KeyHashSet;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;

/** The merge's filter of the keys the base may hold: never misses a base key, and merges stay exact with it. */
class BaseKeysTest extends StoreTest {
  private StoreConfig config(String name) {
    return StoreConfig.of(options(dir, name, "context", "merge.trigger.generations", "1000000",
        "merge.trigger.interval", "1d"));
  }

  /** The filter's false positives at its 16 bits and 11 hashes per key: about 0.05% of absent keys, none missed. */
  @Test
  void aFullFilterAnswersAboutOneAbsentKeyInTwoThousand() {
    BaseKeys filter = new BaseKeys(1 << 20, 1 << 22);
    int keys = 1 << 20;
    filter.reset(keys);
    for (int i = 0; i < keys; i++) {
      filter.put(KeyHashSet.hash("base-" + i));
    }
    for (int i = 0; i < keys; i++) {
      assertTrue(filter.mightContain(KeyHashSet.hash("base-" + i)), "base-" + i);
    }
    int absent = 1_000_000;
    int answered = 0;
    for (int i = 0; i < absent; i++) {
      answered += filter.mightContain(KeyHashSet.hash("new-" + i)) ? 1 : 0;
    }
    assertTrue(answered < absent / 1_000, answered + " of " + absent + " absent keys answered");
  }

  /**
   * A filter that grows past its capacity, fragments added by merges it did not see (another JVM's, here the
   * store's own filter), and a base above its bound: every key the base holds is always among the answer.
   */
  @Test
  void everyKeyTheBaseHoldsIsAnsweredAndFewAbsentOnesAre() {
    StoreConfig config = config("grow");
    BaseKeys filter = new BaseKeys(64, 5_000);
    Set<String> inBase = new LinkedHashSet<>();
    try (ContextStore store = ContextStore.open(config)) {
      SchemaSpec spec = store.spec();
      for (int round = 0; round < 4; round++) {
        List<Map<String, Object>> batch = new ArrayList<>();
        for (int i = 0; i < 700; i++) {
          String key = "r" + round + "-" + i;
          batch.add(new HashMap<>(Map.of("id", key, "token_count", round)));
          inBase.add(key);
        }
        store.add(batch);
        store.seal();
        store.merge();
        if (round == 0) {
          // too few keys to use the filter: looked up, nothing read
          Set<String> one = Set.of("absent");
          assertSame(one, mayHold(config, spec, filter, one));
          // 1,024 keys may read 16,384 base rows: the 700 are read
          Set<String> some = new LinkedHashSet<>(inBase);
          for (int i = 0; some.size() < BaseKeys.MIN_MERGED_KEYS; i++) {
            some.add("other-" + i);
          }
          assertTrue(mayHold(config, spec, filter, some).size() < some.size());
        }
        Set<String> asked = new LinkedHashSet<>(inBase);
        for (int i = 0; i < 2_000; i++) {
          asked.add("absent-" + i);
        }
        Set<String> answer = mayHold(config, spec, filter, asked);
        assertTrue(answer.containsAll(inBase), "round " + round + ": a base key was left out");
        assertTrue(answer.size() - inBase.size() < 100, "round " + round + ": " + (answer.size() - inBase.size())
            + " absent keys of 2,000 answered");
      }
      // above the filter's bound (5,000 base rows): no filter, every key is looked up
      List<Map<String, Object>> batch = new ArrayList<>();
      for (int i = 0; i < 3_000; i++) {
        batch.add(new HashMap<>(Map.of("id", "big-" + i)));
      }
      store.add(batch);
      store.seal();
      store.merge();
      Set<String> asked = Set.of("absent", "big-7");
      assertSame(asked, mayHold(config, spec, filter, asked));
    }
  }

  /** Upserts of merged keys between new keys: the base keeps exactly one row per key, the newest. */
  @Test
  void mergesWithTheFilterReplaceEveryOldRowOfAnUpsertedKey() {
    StoreConfig config = config("upserts");
    Map<String, Object> model = new HashMap<>();
    try (ContextStore store = ContextStore.open(config)) {
      for (int round = 0; round < 3; round++) {
        List<Map<String, Object>> batch = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
          batch.add(new HashMap<>(Map.of("id", "new-" + round + "-" + i, "token_count", round)));
        }
        for (int i = round; i < 3_000; i += 7) {  // keys merged in earlier rounds, spread over their fragments
          batch.add(new HashMap<>(Map.of("id", "new-" + (i % 3) + "-" + (i % 1_000), "token_count", 100 + round)));
        }
        store.add(batch);
        batch.forEach(r -> model.put((String) r.get("id"), r.get("token_count")));
        store.seal();
        store.merge();
      }
      Map<String, Object> tokens = new HashMap<>();
      for (Map<String, Object> r : store.scanRecords(ScanSpec.all().withColumns(List.of("id", "token_count")))) {
        tokens.put((String) r.get("id"), r.get("token_count"));
      }
      assertEquals(3_000, model.size());
      assertEquals(model, tokens);
      try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open().allocator(a).uri(config.uri()).build()) {
        assertEquals(3_000, ds.countRows(), "one base row per key: every replaced row deleted");
      }
    }
  }

  private static Set<String> mayHold(StoreConfig config, SchemaSpec spec, BaseKeys filter, Set<String> keys) {
    try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open().allocator(a).uri(config.uri()).build()) {
      return filter.mayHold(LanceDataset.wrap(ds), spec, keys);
    }
  }
}
