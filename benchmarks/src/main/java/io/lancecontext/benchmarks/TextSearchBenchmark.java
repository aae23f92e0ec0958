package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.SearchResult;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.TextQuery;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.ipc.FullTextQuery;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * Full-text search over a live store (issue 28): a base of {@code baseRows} texts of 8 to 30 words drawn from a
 * Zipf-distributed vocabulary, indexed by maintenance, then {@code fresh} fresh rows: new keys, newer versions of
 * base keys and deletions of base keys. For each query (two or three words of middling frequency),
 * {@code store.search(TextQuery)} is compared with the exact top 10 of the LSM view by the documented score
 * (computed from the rows a full scan returns), and with lance-core's full-text search of the base table alone,
 * which is what a search that does not see the fresh tier returns (lance-spark's {@code FTS}).
 *
 * <p>Args: [baseRows=300000] [fresh=20000] [queries=100].
 */
public final class TextSearchBenchmark {
  static final int VOCABULARY = 20_000;
  static final int K = 10;

  public static void main(String[] args) throws Exception {
    int baseRows = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
    int fresh = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    int queries = args.length > 2 ? Integer.parseInt(args[2]) : 100;
    Path dir = Bench.scratch("text-search");
    Random random = new Random(42);
    double[] cdf = new double[VOCABULARY];
    double sum = 0;
    for (int i = 0; i < VOCABULARY; i++) {
      sum += 1.0 / (i + 1);
      cdf[i] = sum;
    }
    for (int i = 0; i < VOCABULARY; i++) {
      cdf[i] /= sum;
    }
    Bench.log("TextSearchBenchmark: %,d base rows, %,d fresh rows, %d queries, %,d words (Zipf), k=%d", baseRows, fresh,
        queries, VOCABULARY, K);
    Map<String, String> options = Map.of("path", dir.toString(), "schema", "context", "schema.embedding-dim", "4",
        "shards", "2", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d");
    try (ContextStore store = ContextStore.open(options)) {
      long t = System.nanoTime();
      try (StoreWriter writer = store.newWriter(WriterOptions.builder().transaction("load", "0").build())) {
        for (int start = 0; start < baseRows; start += 10_000) {
          List<Map<String, Object>> rows = new ArrayList<>();
          for (int i = start; i < Math.min(baseRows, start + 10_000); i++) {
            rows.add(Map.of("id", "b" + i, "text_payload", text(random, cdf)));
          }
          writer.write(rows);
        }
        store.publish("load", List.of(writer.commit()));
      }
      if (!store.flush().complete()) {
        throw new AssertionError("the base rows did not reach the base table");
      }
      Bench.log("loaded and merged %,d rows in %.1f s", baseRows, (System.nanoTime() - t) / 1e9);
      t = System.nanoTime();
      List<String> built = store.buildSearchIndexes();
      double indexSeconds = (System.nanoTime() - t) / 1e9;
      Bench.log("built the indexes of %s in %.1f s", built, indexSeconds);

      Bench.FreshTier tier = Bench.FreshTier.add(store, random, baseRows, fresh,
          key -> Map.of("id", key, "text_payload", text(random, cdf)));
      Set<String> freshKeys = tier.keys();
      Set<String> deleted = tier.deleted();

      t = System.nanoTime();
      View view = View.scan(store);
      double scanSeconds = (System.nanoTime() - t) / 1e9;
      Bench.log("exact baseline: a scan of the view's %,d texts took %.2f s", view.keys.size(), scanSeconds);

      List<String> qs = new ArrayList<>();
      for (int q = 0; q < queries; q++) {
        int words = 2 + random.nextInt(2);
        StringBuilder sb = new StringBuilder();
        for (int w = 0; w < words; w++) {
          sb.append(w == 0 ? "" : " ").append(word(50 + random.nextInt(2_000)));
        }
        qs.add(sb.toString());
      }
      for (int q = 0; q < Math.min(10, queries); q++) {  // warm-up
        try (SearchResult r = store.search(TextQuery.matching("text_payload", qs.get(q), K).withColumns(List.of("id")))) {
          r.size();
        }
      }
      Bench.Latencies latencies = new Bench.Latencies();
      Bench.Latencies baseOnlyLatencies = new Bench.Latencies();
      Bench.SearchCounts counts = new Bench.SearchCounts(freshKeys, deleted);
      try (BufferAllocator allocator = new RootAllocator(); Dataset base = Dataset.open(dir.toString(), allocator)) {
        for (String q : qs) {
          long s = System.nanoTime();
          List<String> got = new ArrayList<>();
          List<String> texts = new ArrayList<>();
          try (SearchResult r = store.search(TextQuery.matching("text_payload", q, K)
              .withColumns(List.of("id", "text_payload")))) {
            for (Map<String, Object> m : r.records()) {
              got.add((String) m.get("id"));
              texts.add((String) m.get("text_payload"));
            }
          }
          latencies.add(System.nanoTime() - s);
          List<String> truth = view.best(q, K);
          int stale = 0;
          for (int i = 0; i < got.size(); i++) {
            Integer row = view.rowOf.get(got.get(i));
            if (row == null || !view.texts.get(row).equals(texts.get(i))) {
              stale++;
            }
          }
          long b = System.nanoTime();
          List<String> baseOnly = baseOnly(base, q);
          baseOnlyLatencies.add(System.nanoTime() - b);
          counts.add(got, stale, truth, baseOnly);
        }
      }
      // exact brute force per query: the view's scan (what a search without an index reads) plus scoring every text
      long e = System.nanoTime();
      int sample = Math.min(5, queries);
      for (int q = 0; q < sample; q++) {
        view.bruteForce(qs.get(q), K);
      }
      double exactPerQuery = scanSeconds * 1000 + (System.nanoTime() - e) / 1e6 / sample;
      double p50 = latencies.percentileMs(50);
      Bench.log("search: %s", latencies.summary());
      Bench.log("recall@10 %.4f; fresh rows in the exact top 10: %d, returned %d; stale or deleted rows returned: %d",
          counts.recall(), counts.freshTruth, counts.freshFound, counts.stale);
      Bench.log("exact brute force over the view: %.1f ms per query (scan %.0f ms + scoring every text)", exactPerQuery,
          scanSeconds * 1000);
      Bench.log("base-only search (lance-core's full-text search of the base table alone): cannot return %d of %d exact "
          + "top-10 rows (their newest version is in the fresh tier), returned %d stale or deleted rows; its own BM25 "
          + "(with length normalisation, over the base) ranked %d more of them out of its top 10; %s",
          counts.baseOnlyFreshMissed, counts.truthTotal, counts.baseOnlyStale, counts.baseOnlyOtherMissed,
          baseOnlyLatencies.summary());
      Bench.log("RESULT fts recall_at_10=%.4f fresh_recall=%.4f stale_returned=%d p50_ms=%.2f speedup_vs_exact=%.1f "
          + "base_only_missed=%d base_only_stale=%d index_build_s=%.1f", counts.recall(), counts.freshRecall(),
          counts.stale, p50, exactPerQuery / p50, counts.baseOnlyFreshMissed, counts.baseOnlyStale, indexSeconds);
    } finally {
      ContextStore.closeAllResident();
      Bench.delete(dir);
    }
  }

  /** A word of the vocabulary: letters only, distinct per rank. */
  static String word(int rank) {
    StringBuilder sb = new StringBuilder();
    int n = rank;
    do {
      sb.append((char) ('a' + n % 26));
      n /= 26;
    } while (n > 0);
    return sb.append("x").toString();
  }

  static String text(Random random, double[] cdf) {
    int words = 8 + random.nextInt(23);
    StringBuilder sb = new StringBuilder();
    for (int w = 0; w < words; w++) {
      int rank = Arrays.binarySearch(cdf, random.nextDouble());
      sb.append(w == 0 ? "" : " ").append(word(rank < 0 ? -rank - 1 : rank));
    }
    return sb.toString();
  }

  /** The top 10 of lance-core's full-text search of the base table alone (its index, no fresh tier). */
  static List<String> baseOnly(Dataset base, String q) throws Exception {
    List<String> out = new ArrayList<>();
    try (LanceScanner scanner = base.newScan(new ScanOptions.Builder().columns(List.of("id", "_score"))
        .fullTextQuery(FullTextQuery.match(q, "text_payload")).limit(K).build());
        ArrowReader reader = scanner.scanBatches()) {
      while (reader.loadNextBatch()) {
        VarCharVector ids = (VarCharVector) reader.getVectorSchemaRoot().getVector("id");
        for (int r = 0; r < ids.getValueCount(); r++) {
          out.add(new String(ids.get(r), StandardCharsets.UTF_8));
        }
      }
    }
    return out;
  }

  /** Terms as docs/search.md defines them: runs of letters and digits, lower-cased. */
  static Map<String, Integer> terms(String text) {
    Map<String, Integer> out = new HashMap<>();
    for (String t : text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+")) {
      if (!t.isEmpty()) {
        out.merge(t, 1, Integer::sum);
      }
    }
    return out;
  }

  /** Every visible key and text of the store, with postings of their terms, for exact answers. */
  static final class View {
    final List<String> keys = new ArrayList<>();
    final List<String> texts = new ArrayList<>();
    final Map<String, Integer> rowOf = new HashMap<>();
    /** term -> rows holding it (ascending) and how often. */
    final Map<String, int[][]> postings = new HashMap<>();

    static View scan(ContextStore store) {
      View v = new View();
      Map<String, List<int[]>> building = new HashMap<>();
      try (StoreReader reader = store.scan(ScanSpec.all().withColumns(List.of("id", "text_payload")))) {
        while (reader.next()) {
          VectorSchemaRoot b = reader.batch();
          VarCharVector ids = (VarCharVector) b.getVector("id");
          FieldVector texts = b.getVector("text_payload");
          for (int r = 0; r < b.getRowCount(); r++) {
            int row = v.keys.size();
            String text = texts.isNull(r) ? "" : texts.getObject(r).toString();
            v.keys.add(new String(ids.get(r), StandardCharsets.UTF_8));
            v.texts.add(text);
            v.rowOf.put(v.keys.get(row), row);
            terms(text).forEach((t, tf) -> building.computeIfAbsent(t, x -> new ArrayList<>()).add(new int[] {row, tf}));
          }
        }
      }
      building.forEach((t, list) -> v.postings.put(t, list.toArray(int[][]::new)));
      return v;
    }

    /** The exact best {@code k} keys by the documented score (ties by key). */
    List<String> best(String query, int k) {
      Map<Integer, Double> scores = new HashMap<>();
      for (String t : terms(query).keySet()) {
        int[][] p = postings.getOrDefault(t, new int[0][]);
        double idf = Math.log(1 + (keys.size() - p.length + 0.5) / (p.length + 0.5));
        for (int[] e : p) {
          scores.merge(e[0], idf * e[1] * 2.2 / (e[1] + 1.2), Double::sum);
        }
      }
      return top(scores, k);
    }

    /** As {@link #best}, tokenizing every text (what a search without an index does). */
    List<String> bruteForce(String query, int k) {
      Set<String> q = terms(query).keySet();
      Map<String, Integer> df = new HashMap<>();
      List<Map<String, Integer>> counts = new ArrayList<>(texts.size());
      for (String text : texts) {
        Map<String, Integer> c = terms(text);
        c.keySet().retainAll(q);
        counts.add(c);
        c.keySet().forEach(t -> df.merge(t, 1, Integer::sum));
      }
      Map<Integer, Double> scores = new HashMap<>();
      for (int row = 0; row < counts.size(); row++) {
        for (var e : counts.get(row).entrySet()) {
          double idf = Math.log(1 + (keys.size() - df.get(e.getKey()) + 0.5) / (df.get(e.getKey()) + 0.5));
          scores.merge(row, idf * e.getValue() * 2.2 / (e.getValue() + 1.2), Double::sum);
        }
      }
      return top(scores, k);
    }

    private List<String> top(Map<Integer, Double> scores, int k) {
      return scores.entrySet().stream()
          .sorted((a, b) -> {
            int c = Float.compare((float) (double) b.getValue(), (float) (double) a.getValue());
            return c != 0 ? c : keys.get(a.getKey()).compareTo(keys.get(b.getKey()));
          })
          .limit(k).map(e -> keys.get(e.getKey())).toList();
    }
  }
}
