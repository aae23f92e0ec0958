package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Vector search over the LSM view: the k nearest rows across the base table (through its vector index, or exactly
 * where none covers it) and the fresh tier (exactly), the newest row of each key only, deleted rows never, every
 * acknowledged add searchable at once. Checked against a model of the store (key → current vector).
 */
class VectorSearchTest extends StoreTest {
  private static final int DIM = 8;
  private final Random random = new Random(42);
  /** The model: each live key's current vector and token count. */
  private final Map<String, float[]> model = new HashMap<>();
  private final Map<String, Integer> tokens = new HashMap<>();

  private Map<String, String> storeOptions(String... more) {
    List<String> all = new ArrayList<>(List.of("schema.embedding-dim", String.valueOf(DIM), "search.index.min-rows", "500",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"));
    all.addAll(List.of(more));
    return options(dir, "s", "context", all.toArray(String[]::new));
  }

  private float[] randomVector() {
    float[] v = new float[DIM];
    for (int i = 0; i < DIM; i++) {
      v[i] = (float) random.nextGaussian();
    }
    return v;
  }

  private void put(ContextStore store, int from, int to, String prefix) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      String key = prefix + i;
      float[] v = randomVector();
      model.put(key, v);
      tokens.put(key, i);
      rows.add(rec("id", key, "embedding", v, "token_count", i, "text_payload", "row " + key));
    }
    store.add(rows);
  }

  private void delete(ContextStore store, List<String> keys) {
    store.delete(keys);
    keys.forEach(model::remove);
  }

  private static float cosine(float[] a, float[] b) {
    double dot = 0;
    double na = 0;
    double nb = 0;
    for (int i = 0; i < a.length; i++) {
      dot += (double) a[i] * b[i];
      na += (double) a[i] * a[i];
      nb += (double) b[i] * b[i];
    }
    return (float) (1 - dot / (Math.sqrt(na) * Math.sqrt(nb)));
  }

  /** The exact k nearest keys of the model among those {@code keep} admits. */
  private List<String> exact(float[] q, int k, java.util.function.Predicate<String> keep) {
    return model.keySet().stream().filter(keep)
        .sorted(Comparator.comparingDouble((String key) -> cosine(model.get(key), q)).thenComparing(key -> key))
        .limit(k).toList();
  }

  /** A store with rows in the base (indexed), upserted and deleted base keys, generations and a WAL tail. */
  private ContextStore layered() {
    ContextStore store = ContextStore.open(storeOptions());
    put(store, 0, 2_000, "b");
    store.seal();
    store.merge();
    assertEquals(List.of("embedding"), store.buildSearchIndexes());
    // newer versions of 300 base keys, 100 base keys deleted, 200 new keys: half sealed, half in the WAL tail
    put(store, 0, 150, "b");
    delete(store, keysOf("b", 1_000, 1_050));
    put(store, 0, 100, "f");
    store.seal();
    put(store, 150, 300, "b");
    delete(store, keysOf("b", 1_050, 1_100));
    put(store, 100, 200, "f");
    return store;
  }

  /** Every column of a search's row equals the key's row as {@code get} reads it (arrays by content). */
  private static void assertRowEquals(Map<String, Object> expected, Map<String, Object> actual, String key) {
    assertEquals(new java.util.TreeSet<>(expected.keySet()), new java.util.TreeSet<>(actual.keySet()), key);
    for (Map.Entry<String, Object> e : expected.entrySet()) {
      Object a = actual.get(e.getKey());
      if (e.getValue() instanceof float[] f) {
        assertTrue(java.util.Arrays.equals(f, (float[]) a), key + "." + e.getKey());
      } else if (e.getValue() instanceof byte[] b) {
        assertTrue(java.util.Arrays.equals(b, (byte[]) a), key + "." + e.getKey());
      } else {
        assertEquals(e.getValue(), a, key + "." + e.getKey());
      }
    }
  }

  private static List<String> keysOf(String prefix, int from, int to) {
    List<String> keys = new ArrayList<>();
    for (int i = from; i < to; i++) {
      keys.add(prefix + i);
    }
    return keys;
  }

  @Test
  void findsTheNearestRowsOfTheLsmViewAcrossBaseAndFreshTiers() {
    try (ContextStore store = layered()) {
      int found = 0;
      int expected = 0;
      for (int q = 0; q < 30; q++) {
        // half the queries sit next to a fresh row, so fresh rows must win them
        float[] query = q % 2 == 0 ? randomVector() : model.get((q % 4 == 1 ? "f" : "b") + (q * 7 % 150)).clone();
        List<String> truth = exact(query, 10, key -> true);
        try (SearchResult r = store.search(VectorQuery.nearest("embedding", query, 10))) {
          List<Map<String, Object>> rows = r.records();
          assertEquals(10, rows.size());
          float previous = -1;
          for (Map<String, Object> row : rows) {
            String key = (String) row.get("id");
            assertTrue(model.containsKey(key), "a deleted row is never returned: " + key);
            assertTrue(java.util.Arrays.equals(model.get(key), (float[]) row.get("embedding")),
                "only the newest version of " + key + " is returned");
            float d = (Float) row.get("_distance");
            assertEquals(cosine(model.get(key), query), d, 1e-4, "distance of " + key);
            Map<String, Object> whole = new java.util.HashMap<>(row);
            whole.remove("_distance");
            assertRowEquals(store.get(key).orElseThrow(), whole, key);
            assertTrue(d >= previous, "nearest first");
            previous = d;
          }
          Set<String> returned = new HashSet<>(rows.stream().map(m -> (String) m.get("id")).toList());
          for (String key : truth) {
            boolean fresh = key.startsWith("f") || Integer.parseInt(key.substring(1)) < 300;
            if (fresh) {
              assertTrue(returned.contains(key), "fresh row " + key + " of the exact top 10 is returned for query " + q);
            }
            expected++;
            found += returned.contains(key) ? 1 : 0;
          }
        }
      }
      assertTrue(found >= 0.9 * expected, "recall@10 " + found + "/" + expected);
    }
  }

  @Test
  void aRowIsSearchableTheMomentItsAddReturnsAndGoneTheMomentItsDeleteReturns() {
    try (ContextStore store = layered()) {
      float[] query = randomVector();
      store.add(List.of(rec("id", "new", "embedding", query, "token_count", 1)));
      try (SearchResult r = store.search(VectorQuery.nearest("embedding", query, 1))) {
        assertEquals("new", r.records().get(0).get("id"));
        assertEquals(0f, (Float) r.records().get(0).get("_distance"), 1e-5);
      }
      store.delete(List.of("new"));
      try (SearchResult r = store.search(VectorQuery.nearest("embedding", query, 3))) {
        assertFalse(r.records().stream().anyMatch(m -> m.get("id").equals("new")));
        assertEquals(3, r.size());
      }
    }
  }

  @Test
  void aFilterAppliesBeforeTheSearchAndColumnsAreProjected() {
    try (ContextStore store = layered()) {
      float[] query = randomVector();
      VectorQuery q = VectorQuery.nearest("embedding", query, 5)
          .withFilter(Predicate.compare("token_count", Predicate.Op.GE, 1_900))
          .withColumns(List.of("id", "token_count"));
      try (SearchResult r = store.search(q)) {
        assertEquals(List.of("id", "token_count", "_distance"), r.columns());
        assertEquals(exact(query, 5, key -> tokens.get(key) >= 1_900), r.records().stream().map(m -> m.get("id")).toList());
      }
      // a filter only a few rows match: all of them, nearest first
      VectorQuery few = VectorQuery.nearest("embedding", query, 10).withFilter(Predicate.in("id", List.of("b5", "f5", "b1001", "nope")));
      try (SearchResult r = store.search(few)) {
        assertEquals(exact(query, 10, key -> Set.of("b5", "f5").contains(key)), r.records().stream().map(m -> m.get("id")).toList());
      }
    }
  }

  @Test
  void searchesAtASnapshotSeeTheVectorsOfItsMoment() {
    try (ContextStore store = layered()) {
      String token = store.snapshot().token();
      float[] old = model.get("b10").clone();
      put(store, 10, 11, "b");
      store.seal();
      store.merge();
      try (SearchResult then = store.search(VectorQuery.nearest("embedding", old, 1).atSnapshot(token));
          SearchResult now = store.search(VectorQuery.nearest("embedding", old, 1))) {
        assertEquals("b10", then.records().get(0).get("id"));
        assertEquals(0f, (Float) then.records().get(0).get("_distance"), 1e-5);
        assertTrue((Float) now.records().get(0).get("_distance") > 0 || !now.records().get(0).get("id").equals("b10"));
      }
    }
  }

  @Test
  void mergesAndCompactionKeepResultsExactAndMaintenanceRebuildsTheIndex() {
    try (ContextStore store = layered()) {
      store.flush();
      store.compact();
      for (int q = 0; q < 10; q++) {
        float[] query = randomVector();
        try (SearchResult r = store.search(VectorQuery.nearest("embedding", query, 10))) {
          // no index covers the compacted fragments: the base is searched exactly
          assertEquals(exact(query, 10, key -> true), r.records().stream().map(m -> m.get("id")).toList());
        }
      }
      assertEquals(List.of("embedding"), store.buildSearchIndexes());
      assertEquals(List.of(), store.buildSearchIndexes(), "a current index is not rebuilt");
      float[] query = randomVector();
      try (SearchResult r = store.search(VectorQuery.nearest("embedding", query, 10))) {
        assertEquals(10, r.size());
      }
    }
  }

  @Test
  void backgroundMaintenanceBuildsTheIndexOnceTheBaseHoldsEnoughRowsAndRebuildsItWhenStale() throws Exception {
    try (ContextStore store = ContextStore.open(storeOptions("search.index.check-interval", "500ms",
        "search.index.rebuild-interval", "3s"))) {
      put(store, 0, 400, "b");
      store.flush();
      Thread.sleep(2_500);  // more than two checks (maintenance ticks every second): 400 rows are below min-rows (500)
      assertEquals(0, store.stats().maintenance().searchIndexBuilds(), "no index below search.index.min-rows");
      put(store, 400, 1_000, "b");
      store.flush();
      awaitBuilds(store, 1);
      long firstBuilt = System.nanoTime();
      put(store, 1_000, 1_300, "b");  // 300 of 1,300 rows outside the index: more than a tenth, stale
      store.flush();
      Thread.sleep(1_000);
      assertEquals(1, store.stats().maintenance().searchIndexBuilds(), "no rebuild within search.index.rebuild-interval");
      awaitBuilds(store, 2);
      assertTrue(System.nanoTime() - firstBuilt >= 2_500_000_000L, "rebuilt once the interval had passed");
      assertEquals(List.of(), store.buildSearchIndexes(), "the background left a current index");
      float[] query = randomVector();
      try (SearchResult r = store.search(VectorQuery.nearest("embedding", query, 10))) {
        assertEquals(exact(query, 10, key -> true), r.records().stream().map(m -> m.get("id")).toList());
      }
    }
  }

  private static void awaitBuilds(ContextStore store, long builds) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (store.stats().maintenance().searchIndexBuilds() < builds) {
      assertTrue(System.nanoTime() < deadline, "background maintenance built " + builds + " indexes within 30 s");
      Thread.sleep(200);
    }
  }

  @Test
  void rowsWithoutVectorsGetNoIndexAndNoWarningsAndAreNeverFound() throws Exception {
    try (ContextStore store = ContextStore.open(storeOptions("search.index.check-interval", "500ms"))) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        rows.add(rec("id", "t" + i, "text_payload", "no vector"));
      }
      store.add(rows);
      store.flush();
      assertEquals(List.of(), store.buildSearchIndexes(), "no index over a column without vectors");
      Thread.sleep(2_500);  // background checks: nothing built, nothing failed
      assertEquals(0, store.stats().maintenance().searchIndexBuilds());
      assertEquals(0, store.stats().maintenance().failures());
      try (SearchResult r = store.search(VectorQuery.nearest("embedding", randomVector(), 5))) {
        assertEquals(0, r.size());
      }
    }
  }

  @Test
  void anEmptyStoreReturnsNoRowsAndBadQueriesNameTheColumn() {
    try (ContextStore store = ContextStore.open(storeOptions())) {
      try (SearchResult r = store.search(VectorQuery.nearest("embedding", randomVector(), 5))) {
        assertEquals(0, r.size());
        assertEquals("_distance", r.columns().get(r.columns().size() - 1));
      }
      SchemaException e = assertThrows(SchemaException.class,
          () -> store.search(VectorQuery.nearest("embeding", randomVector(), 5)));
      assertEquals("embeding", e.column().orElseThrow());
      e = assertThrows(SchemaException.class, () -> store.search(VectorQuery.nearest("text_payload", randomVector(), 5)));
      assertTrue(e.getMessage().contains("text_payload"), e.getMessage());
      e = assertThrows(SchemaException.class, () -> store.search(VectorQuery.nearest("embedding", new float[3], 5)));
      assertTrue(e.getMessage().contains("8") && e.getMessage().contains("3"), e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> store.search(VectorQuery.nearest("embedding", randomVector(), 0)));
    }
  }
}
