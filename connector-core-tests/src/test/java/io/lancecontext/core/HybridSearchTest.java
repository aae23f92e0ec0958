package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Hybrid search: the vector and the text search's rankings of the LSM view fused by reciprocal rank fusion. Every
 * result equals a model that fuses what the two searches return alone; rows added a moment ago count, deleted rows
 * never do.
 */
class HybridSearchTest extends StoreTest {
  private static final String[] WORDS = {"tool", "error", "retry", "plan", "reward", "memory", "timeout", "ok"};

  @Test
  void resultsFuseTheTwoRankingsByReciprocalRank() {
    Random random = new Random(5);
    try (ContextStore store = ContextStore.open(options(dir, "h", "context", "schema.embedding-dim", "3",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      put(store, random, 0, 300);
      store.flush();                     // a base
      put(store, random, 250, 350);      // newer versions of some base keys, new keys, in the fresh tier
      store.delete(List.of("k3", "k260", "k301"));
      for (int q = 0; q < 12; q++) {
        float[] v = vector(random);
        String text = WORDS[random.nextInt(WORDS.length)] + " " + WORDS[random.nextInt(WORDS.length)];
        for (int k : new int[] {1, 5, 40}) {
          check(store, VectorQuery.nearest("embedding", v, k), TextQuery.matching("text_payload", text, k), k);
        }
        Predicate tool = Predicate.eq("role", "tool");
        check(store, VectorQuery.nearest("embedding", v, 10).withFilter(tool),
            TextQuery.matching("text_payload", text, 10).withFilter(tool), 10);
      }
      // a row added a moment ago that both searches rank first comes first
      store.add(List.of(rec("id", "now", "embedding", new float[] {9f, 9f, 9f}, "text_payload", "zebra zebra")));
      try (SearchResult r = store.search(VectorQuery.nearest("embedding", new float[] {9f, 9f, 9f}, 3),
          TextQuery.matching("text_payload", "zebra", 3), 3)) {
        Map<String, Object> first = r.records().get(0);
        assertEquals("now", first.get("id"));
        assertEquals(2.0 / 61, ((Number) first.get("_relevance_score")).doubleValue(), 1e-6, "first in both rankings");
      }
      store.delete(List.of("now"));
      try (SearchResult r = store.search(VectorQuery.nearest("embedding", new float[] {9f, 9f, 9f}, 3),
          TextQuery.matching("text_payload", "zebra", 3), 3)) {
        assertTrue(r.records().stream().noneMatch(m -> "now".equals(m.get("id"))), "deleted a moment ago");
      }
    }
  }

  @Test
  void badQueriesAreRefusedNamingWhat() {
    try (ContextStore store = ContextStore.open(options(dir, "b", "context", "schema.embedding-dim", "3"))) {
      store.add(List.of(rec("id", "a", "embedding", new float[] {1f, 0f, 0f}, "text_payload", "tool")));
      String token = store.snapshot().token();
      VectorQuery v = VectorQuery.nearest("embedding", new float[] {1f, 0f, 0f}, 5);
      TextQuery t = TextQuery.matching("text_payload", "tool", 5);
      IllegalArgumentException snapshots = assertThrows(IllegalArgumentException.class,
          () -> store.search(v.atSnapshot(token), t, 5));
      assertTrue(snapshots.getMessage().contains("different snapshots"), snapshots.getMessage());
      assertThrows(IllegalArgumentException.class, () -> store.search(v, t, 0));
      try (SearchResult r = store.search(v.atSnapshot(token), t.atSnapshot(token), 5)) {
        assertEquals(List.of("a"), r.records().stream().map(m -> m.get("id")).toList(), "both at one snapshot");
      }
      try (SearchResult r = store.search(v.withColumns(List.of("id")), t, 5)) {
        assertEquals(List.of("id", "_relevance_score"), r.columns(), "the vector query's columns");
      }
    }
  }

  private static void put(ContextStore store, Random random, int from, int to) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      StringBuilder text = new StringBuilder();
      for (int w = 1 + random.nextInt(4); w > 0; w--) {
        text.append(WORDS[random.nextInt(WORDS.length)]).append(' ');
      }
      rows.add(rec("id", "k" + i, "embedding", vector(random), "text_payload", text.toString(), "role",
          random.nextBoolean() ? "tool" : "user"));
    }
    store.add(rows);
  }

  private static float[] vector(Random random) {
    return new float[] {random.nextFloat() - 0.5f, random.nextFloat() - 0.5f, random.nextFloat() - 0.5f};
  }

  /** The hybrid result against the model: each search alone (2k candidates, at least 20), fused by 1 / (60 + rank). */
  private static void check(ContextStore store, VectorQuery vector, TextQuery text, int k) {
    int candidates = Math.max(2 * k, 20);
    Map<String, Double> relevance = new HashMap<>();
    try (SearchResult r = store.search(new VectorQuery(vector.column(), vector.vector(), candidates, vector.filter(),
        List.of("id"), null))) {
      List<Map<String, Object>> rows = r.records();
      for (int i = 0; i < rows.size(); i++) {
        relevance.merge((String) rows.get(i).get("id"), 1.0 / (61 + i), Double::sum);
      }
    }
    try (SearchResult r = store.search(TextQuery.matching(text.column(), text.text(), candidates)
        .withFilter(text.filter()).withColumns(List.of("id")))) {
      List<Map<String, Object>> rows = r.records();
      for (int i = 0; i < rows.size(); i++) {
        relevance.merge((String) rows.get(i).get("id"), 1.0 / (61 + i), Double::sum);
      }
    }
    List<Map.Entry<String, Double>> expected = new ArrayList<>(relevance.entrySet());
    expected.sort(Comparator.<Map.Entry<String, Double>>comparingDouble(e -> -(float) (double) e.getValue())
        .thenComparing(Map.Entry::getKey));
    List<String> want = expected.subList(0, Math.min(k, expected.size())).stream().map(Map.Entry::getKey).toList();
    try (SearchResult r = store.search(vector.withColumns(List.of("id", "text_payload")), text, k)) {
      List<Map<String, Object>> got = r.records();
      assertEquals(want, got.stream().map(m -> m.get("id")).toList(), text.text() + " k=" + k + " " + vector.filter());
      for (Map<String, Object> m : got) {
        assertEquals(relevance.get((String) m.get("id")), ((Number) m.get("_relevance_score")).doubleValue(), 1e-6);
      }
    }
  }
}
