package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.internal.lance.TextIndex;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreTest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Full-text search over the LSM view: rows in the indexed base, in base fragments the index does not cover, in
 * generations, in the WAL tail and in a published transaction, with upserts and deletions, are scored alike and
 * exactly: every result equals a model that scores every row of a full scan of the view by the documented formula.
 */
class TextSearchTest extends StoreTest {
  private static final String[] WORDS = {"tool", "error", "retry", "plan", "Step", "reward", "über", "naïve", "x-ray",
      "agent", "memory", "search", "timeout", "ok", "fail", "42"};
  private final Random random = new Random(7);

  private String text() {
    StringBuilder sb = new StringBuilder();
    int n = 1 + random.nextInt(8);
    for (int i = 0; i < n; i++) {
      sb.append(i == 0 ? "" : random.nextInt(5) == 0 ? ", " : " ").append(WORDS[random.nextInt(WORDS.length)]);
    }
    return random.nextInt(10) == 0 ? sb.append('.').toString().toUpperCase(Locale.ROOT) : sb.toString();
  }

  private void put(ContextStore store, int n, int keys) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String key = "k" + random.nextInt(keys);
      Map<String, Object> r = new HashMap<>(rec("id", key, "role", random.nextBoolean() ? "tool" : "user"));
      if (random.nextInt(15) != 0) {
        r.put("text_payload", text());
      }
      rows.add(r);
    }
    // one row per key per add (the newest wins within an add too, but the model reads the view anyway)
    Map<String, Map<String, Object>> byKey = new HashMap<>();
    rows.forEach(r -> byKey.put((String) r.get("id"), r));
    store.add(new ArrayList<>(byKey.values()));
  }

  /**
   * In this JVM: with the index where lance-core can build it ({@link TextIndex#buildable}), else without (a machine
   * of 3 processors or fewer, such as CI's).
   */
  @Test
  void resultsEqualAModelOfTheViewInEveryTier() {
    new TextSearchTest().scenario(dir.resolve("t").toString(), TextIndex.buildable());
  }

  /** In a JVM whose lance-core CPU pool has 2 threads: through the index. */
  @Test
  void resultsThroughTheIndexEqualTheModelToo() throws Exception {
    try (ChildJvm child = ChildJvm.start(Indexed.class, dir.resolve("indexed.log"), Map.of("LANCE_CPU_THREADS", "2"),
        dir.resolve("i").toString())) {
      assertEquals("ok", child.readLine(), child.tail());
      assertEquals(0, child.waitFor(120), child.tail());
    }
  }

  /** Runs the scenario with the index, printing {@code ok} or what failed. */
  public static final class Indexed {
    public static void main(String[] args) {
      try {
        new TextSearchTest().scenario(args[0], true);
        System.out.println("ok");
      } catch (Throwable t) {
        System.out.println("failed: " + t);
        System.exit(1);
      }
      ContextStore.closeAllResident();
    }
  }

  void scenario(String path, boolean indexed) {
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "context", "schema.embedding-dim", "4",
        "search.index.min-rows", "1", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      put(store, 600, 400);
      store.flush();
      assertEquals(indexed, store.buildSearchIndexes().contains("text_payload"), "the full-text index is built");
      put(store, 150, 500);  // upserts and new keys in a fragment the index does not cover
      store.flush();
      put(store, 80, 550);
      store.seal();          // a generation
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("t1", "0/0").build())) {
        for (int i = 0; i < 30; i++) {
          w.write(rec("id", "k" + random.nextInt(600), "role", "tool", "text_payload", text()));
        }
        store.publish("t1", List.of(w.commit()));
      }
      put(store, 50, 600);   // the WAL tail
      store.delete(List.of("k1", "k2", "k3", "k5", "k8", "k13"));
      for (String q : List.of("tool", "TOOL error", "über naïve", "x ray", "42 retry plan", "nothing-here", "step")) {
        for (int k : new int[] {1, 10, 100}) {
          check(store, TextQuery.matching("text_payload", q, k));
          check(store, TextQuery.matching("text_payload", q, k).withFilter(Predicate.eq("role", "tool")));
        }
      }
      check(store, TextQuery.matching("role", "tool", 30));  // a column without an index
      // an earlier snapshot is searched as it was
      String token = store.snapshot().token();
      List<Map<String, Object>> before = model(store, TextQuery.matching("text_payload", "memory", 20), token);
      store.add(List.of(rec("id", "fresh", "text_payload", "memory memory memory")));
      assertEquals("fresh", store.search(TextQuery.matching("text_payload", "memory", 1)).records().get(0).get("id"),
          "an add is searchable when it returns");
      check(store, TextQuery.matching("text_payload", "memory", 20).atSnapshot(token), before);
    }
  }

  /**
   * A search of an unchanged store reuses the count of the base rows searched ({@code N}); a row expiring, an add
   * and a deletion each change {@code N}, and every search still scores as the model does.
   */
  @Test
  void scoresFollowExpiriesAddsAndDeletionsWhileSearchesRepeat() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "n", "context", "schema.embedding-dim", "4",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      Instant soon = Instant.now().plusMillis(1_500);
      store.add(List.of(rec("id", "a", "text_payload", "tool"), rec("id", "b", "text_payload", "tool error"),
          rec("id", "c", "text_payload", "plan"), rec("id", "d", "text_payload", "plan", "expires_at", soon),
          rec("id", "e", "text_payload", "retry", "expires_at", soon.plusSeconds(3_600))));
      store.flush();  // all in the base
      TextQuery tool = TextQuery.matching("text_payload", "tool", 10);
      TextQuery toolError = TextQuery.matching("text_payload", "tool error", 10);
      check(store, tool);
      check(store, tool);       // the kept count
      check(store, toolError);  // another query, the same count
      check(store, tool.withFilter(Predicate.eq("text_payload", "plan")));  // another filter, its own count
      check(store, tool.withFilter(Predicate.eq("text_payload", "tool")));
      Thread.sleep(Math.max(0, java.time.Duration.between(Instant.now(), soon).toMillis()) + 100);
      check(store, tool);       // d expired: one row fewer searched
      store.add(List.of(rec("id", "f", "text_payload", "plan")));
      check(store, tool);
      store.delete(List.of("c"));
      check(store, tool);
    }
  }

  @Test
  void badQueriesAreRefusedNamingWhat() {
    try (ContextStore store = ContextStore.open(options(dir, "b", "context", "schema.embedding-dim", "4"))) {
      store.add(List.of(rec("id", "a", "text_payload", "tool error")));
      SchemaException notText = assertThrows(SchemaException.class,
          () -> store.search(TextQuery.matching("token_count", "tool", 5)));
      assertTrue(notText.getMessage().contains("token_count") && notText.getMessage().contains("string column"),
          notText.getMessage());
      assertThrows(SchemaException.class, () -> store.search(TextQuery.matching("nope", "tool", 5)));
      try (SearchResult noTerms = store.search(TextQuery.matching("text_payload", " -- !", 5))) {
        assertEquals(List.of(), noTerms.records(), "a text without a term matches no row");
      }
      assertThrows(IllegalArgumentException.class, () -> store.search(TextQuery.matching("text_payload", "tool", 0)));
    }
    BadOptionException bad = assertThrows(BadOptionException.class, () -> ContextStore.open(options(dir, "c", "context",
        "schema.embedding-dim", "4", "search.text-columns", "token_count")));
    assertEquals("search.text-columns", bad.key());
    assertTrue(bad.getMessage().contains("token_count"), bad.getMessage());
  }

  private static void check(ContextStore store, TextQuery query) {
    check(store, query, model(store, query, null));
  }

  private static void check(ContextStore store, TextQuery query, List<Map<String, Object>> expected) {
    List<Map<String, Object>> got;
    try (SearchResult r = store.search(query.withColumns(List.of("id", query.column())))) {
      got = r.records();
    }
    assertEquals(expected.stream().map(m -> m.get("id")).toList(), got.stream().map(m -> m.get("id")).toList(),
        query.text() + " k=" + query.k() + " filter=" + query.filter());
    for (int i = 0; i < got.size(); i++) {
      assertEquals(expected.get(i).get(query.column()), got.get(i).get(query.column()));
      float want = ((Number) expected.get(i).get("_score")).floatValue();
      float score = (Float) got.get(i).get("_score");
      assertEquals(want, score, Math.abs(want) * 1e-4, "score of " + got.get(i).get("id"));
    }
  }

  /** The documented score over a full scan of the view: BM25 without length normalisation, k1 = 1.2. */
  private static List<Map<String, Object>> model(ContextStore store, TextQuery query, String snapshot) {
    String column = query.column();
    ScanSpec scan = ScanSpec.all().withColumns(List.of("id", column)).withFilter(query.filter());
    List<Map<String, Object>> rows = store.scanRecords(snapshot == null ? scan : scan.atSnapshot(snapshot));
    List<String> terms = new ArrayList<>(terms(query.text()).keySet());
    Map<String, Integer> df = new HashMap<>();
    List<Map<String, Integer>> counts = new ArrayList<>();
    for (Map<String, Object> r : rows) {
      Map<String, Integer> c = r.get(column) == null ? Map.of() : terms((String) r.get(column));
      counts.add(c);
      terms.forEach(t -> df.merge(t, c.containsKey(t) ? 1 : 0, Integer::sum));
    }
    List<Map<String, Object>> scored = new ArrayList<>();
    for (int i = 0; i < rows.size(); i++) {
      double score = 0;
      for (String t : terms) {
        int tf = counts.get(i).getOrDefault(t, 0);
        if (tf > 0) {
          double idf = Math.log(1 + (rows.size() - df.get(t) + 0.5) / (df.get(t) + 0.5));
          score += idf * tf * 2.2 / (tf + 1.2);
        }
      }
      if (score > 0) {
        Map<String, Object> m = new HashMap<>(rows.get(i));
        m.put("_score", (float) score);
        scored.add(m);
      }
    }
    scored.sort(Comparator.<Map<String, Object>>comparingDouble(m -> -((Float) m.get("_score")))
        .thenComparing(m -> (String) m.get("id")));
    return scored.subList(0, Math.min(query.k(), scored.size()));
  }

  /** Terms as documented: runs of letters and digits, lower-cased. */
  private static Map<String, Integer> terms(String text) {
    Map<String, Integer> out = new java.util.LinkedHashMap<>();
    for (String t : text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+")) {
      if (!t.isEmpty()) {
        out.merge(t, 1, Integer::sum);
      }
    }
    return out;
  }
}
