package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.SearchResult;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.VectorQuery;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;

/**
 * Vector search over a live store (issue 28): a base of {@code baseRows} 128-dimension embeddings (clustered,
 * as real embeddings are) indexed by maintenance, then {@code fresh} fresh rows: new keys, newer versions of base
 * keys and deletions of base keys. For each query, {@code store.search} is compared with the exact top 10 of the
 * LSM view (computed from the rows a full scan returns), and with a search of the base table alone, which is
 * what a search that does not see the fresh tier returns (lance-spark's {@code VECTOR_SEARCH}).
 *
 * <p>Args: [baseRows=1000000] [fresh=20000] [queries=200] [search.nprobes=32] [search.refine-factor=20].
 */
public final class VectorSearchBenchmark {
  static final int DIM = 128;
  static final int CLUSTERS = 2_000;
  static final int K = 10;

  public static void main(String[] args) throws Exception {
    int baseRows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int fresh = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    int queries = args.length > 2 ? Integer.parseInt(args[2]) : 200;
    String nprobes = args.length > 3 ? args[3] : "32";
    String refine = args.length > 4 ? args[4] : "20";
    Path dir = Bench.scratch("vector-search");
    Random random = new Random(42);
    float[][] centers = new float[CLUSTERS][];
    for (int c = 0; c < CLUSTERS; c++) {
      centers[c] = gaussian(random, 1f);
    }
    Bench.log("VectorSearchBenchmark: %,d base rows, %,d fresh rows, %d queries, %d dimensions (cosine), k=%d, "
        + "nprobes %s, refine factor %s", baseRows, fresh, queries, DIM, K, nprobes, refine);
    Map<String, String> options = Map.of("path", dir.toString(), "schema", "context", "schema.embedding-dim",
        Integer.toString(DIM), "shards", "2", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d",
        "search.nprobes", nprobes, "search.refine-factor", refine);
    try (ContextStore store = ContextStore.open(options)) {
      long t = System.nanoTime();
      String txid = "load";
      try (StoreWriter writer = store.newWriter(WriterOptions.builder().transaction(txid, "0").build())) {
        for (int start = 0; start < baseRows; start += 10_000) {
          List<Map<String, Object>> rows = new ArrayList<>();
          for (int i = start; i < Math.min(baseRows, start + 10_000); i++) {
            rows.add(row("b" + i, near(random, centers), i));
          }
          writer.write(rows);
        }
        store.publish(txid, List.of(writer.commit()));
      }
      if (!store.flush().complete()) {
        throw new AssertionError("the base rows did not reach the base table");
      }
      Bench.log("loaded and merged %,d rows in %.1f s", baseRows, (System.nanoTime() - t) / 1e9);
      t = System.nanoTime();
      List<String> built = store.buildSearchIndexes();
      double indexSeconds = (System.nanoTime() - t) / 1e9;
      Bench.log("built the vector index of %s in %.1f s", built, indexSeconds);

      Bench.FreshTier tier = Bench.FreshTier.add(store, random, baseRows, fresh, key -> row(key, near(random, centers), -1));
      Set<String> freshKeys = tier.keys();
      Set<String> deleted = tier.deleted();

      // the LSM view, for the exact answers and the exact baseline's time
      t = System.nanoTime();
      View view = View.scan(store);
      double scanSeconds = (System.nanoTime() - t) / 1e9;
      Bench.log("exact baseline: a scan of the view's %,d vectors took %.2f s", view.keys.size(), scanSeconds);

      float[][] qs = new float[queries][];
      for (int q = 0; q < queries; q++) {
        qs[q] = near(random, centers);
      }
      for (int q = 0; q < Math.min(20, queries); q++) {  // warm-up
        try (SearchResult r = store.search(VectorQuery.nearest("embedding", qs[q], K).withColumns(List.of("id")))) {
          r.size();
        }
      }
      Bench.Latencies latencies = new Bench.Latencies();
      Bench.Latencies baseOnlyLatencies = new Bench.Latencies();
      Bench.SearchCounts counts = new Bench.SearchCounts(freshKeys, deleted);
      double exactMillis = 0;
      try (BufferAllocator allocator = new RootAllocator();
          Dataset base = Dataset.open(dir.toString(), allocator)) {
        for (int q = 0; q < queries; q++) {
          long s = System.nanoTime();
          List<String> got = new ArrayList<>();
          List<float[]> vectors = new ArrayList<>();
          try (SearchResult r = store.search(VectorQuery.nearest("embedding", qs[q], K).withColumns(List.of("id", "embedding")))) {
            for (Map<String, Object> m : r.records()) {
              got.add((String) m.get("id"));
              vectors.add((float[]) m.get("embedding"));
            }
          }
          latencies.add(System.nanoTime() - s);
          long e = System.nanoTime();
          List<String> truth = view.exact(qs[q], K);
          exactMillis += (System.nanoTime() - e) / 1e6;
          int stale = 0;
          for (int i = 0; i < got.size(); i++) {
            Integer row = view.rowOf.get(got.get(i));
            if (row == null || !Arrays.equals(view.vector(row), vectors.get(i))) {
              stale++;
            }
          }
          long b = System.nanoTime();
          List<String> baseOnly = baseOnly(base, qs[q]);
          baseOnlyLatencies.add(System.nanoTime() - b);
          counts.add(got, stale, truth, baseOnly);
        }
      }
      double p50 = latencies.percentileMs(50);
      // exact brute force per query: the view's scan (what a search without an index reads) plus the ranking
      double exactPerQuery = scanSeconds * 1000 + exactMillis / queries;
      Bench.log("search: %s", latencies.summary());
      Bench.log("recall@10 %.4f; fresh rows in the exact top 10: %d, returned %d; stale or deleted rows returned: %d",
          counts.recall(), counts.freshTruth, counts.freshFound, counts.stale);
      Bench.log("exact brute force over the view: %.1f ms per query (scan %.0f ms + rank %.1f ms)", exactPerQuery,
          scanSeconds * 1000, exactMillis / queries);
      Bench.log("base-only search (the base table alone, as lance-spark's VECTOR_SEARCH reads it): missed %d of %d "
          + "exact top-10 rows (%d of them rows of the fresh tier, which it cannot see), returned %d stale or deleted "
          + "rows; %s", counts.baseOnlyMissed, counts.truthTotal, counts.baseOnlyFreshMissed, counts.baseOnlyStale,
          baseOnlyLatencies.summary());
      Bench.log("RESULT vector recall_at_10=%.4f fresh_recall=%.4f stale_returned=%d p50_ms=%.2f speedup_vs_exact=%.1f "
          + "base_only_missed=%d base_only_stale=%d index_build_s=%.1f", counts.recall(), counts.freshRecall(),
          counts.stale, p50, exactPerQuery / p50, counts.baseOnlyMissed, counts.baseOnlyStale, indexSeconds);
    } finally {
      ContextStore.closeAllResident();
      Bench.delete(dir);
    }
  }

  /** The top 10 of a search of the base table alone (its index, no fresh tier). */
  static List<String> baseOnly(Dataset base, float[] q) throws Exception {
    Query query = new Query.Builder().setColumn("embedding").setKey(q).setK(K).setMinimumNprobes(32).setRefineFactor(10)
        .setDistanceType(org.lance.index.DistanceType.Cosine).build();
    List<String> out = new ArrayList<>();
    try (LanceScanner scanner = base.newScan(new ScanOptions.Builder().columns(List.of("id", "_distance")).nearest(query).build());
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

  static Map<String, Object> row(String key, float[] v, int tokens) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("embedding", v);
    r.put("token_count", tokens);
    r.put("role", "assistant");
    return r;
  }

  static float[] gaussian(Random random, float sigma) {
    float[] v = new float[DIM];
    for (int d = 0; d < DIM; d++) {
      v[d] = (float) random.nextGaussian() * sigma;
    }
    return v;
  }

  /** A point of a random cluster. */
  static float[] near(Random random, float[][] centers) {
    float[] c = centers[random.nextInt(centers.length)];
    float[] v = gaussian(random, 0.35f);
    for (int d = 0; d < DIM; d++) {
      v[d] += c[d];
    }
    return v;
  }

  /** Every visible key and vector of the store, normalised, for exact answers. */
  static final class View {
    final List<String> keys = new ArrayList<>();
    final Map<String, Integer> rowOf = new HashMap<>();
    float[] data = new float[DIM * 1024];
    float[] raw = new float[DIM * 1024];

    static View scan(ContextStore store) {
      View v = new View();
      try (StoreReader reader = store.scan(ScanSpec.all().withColumns(List.of("id", "embedding")))) {
        while (reader.next()) {
          VectorSchemaRoot b = reader.batch();
          VarCharVector ids = (VarCharVector) b.getVector("id");
          FixedSizeListVector vectors = (FixedSizeListVector) b.getVector("embedding");
          for (int r = 0; r < b.getRowCount(); r++) {
            float[] x = new float[DIM];
            for (int d = 0; d < DIM; d++) {
              x[d] = vectors.getDataVector().getDataBuffer().getFloat((long) (r * DIM + d) * Float.BYTES);
            }
            v.add(new String(ids.get(r), StandardCharsets.UTF_8), x);
          }
        }
      }
      return v;
    }

    void add(String key, float[] x) {
      int row = keys.size();
      if ((row + 1) * DIM > data.length) {
        data = Arrays.copyOf(data, data.length * 2);
        raw = Arrays.copyOf(raw, raw.length * 2);
      }
      double n = 0;
      for (float f : x) {
        n += (double) f * f;
      }
      float inv = (float) (1 / Math.sqrt(n));
      for (int d = 0; d < DIM; d++) {
        data[row * DIM + d] = x[d] * inv;
        raw[row * DIM + d] = x[d];
      }
      keys.add(key);
      rowOf.put(key, row);
    }

    float[] vector(int row) {
      return Arrays.copyOfRange(raw, row * DIM, (row + 1) * DIM);
    }

    /** The exact k nearest keys by cosine distance. */
    List<String> exact(float[] q, int k) {
      double n = 0;
      for (float f : q) {
        n += (double) f * f;
      }
      float inv = (float) (1 / Math.sqrt(n));
      int[] best = new int[k];
      float[] bestSim = new float[k];
      Arrays.fill(bestSim, Float.NEGATIVE_INFINITY);
      for (int row = 0; row < keys.size(); row++) {
        float dot = 0;
        int off = row * DIM;
        for (int d = 0; d < DIM; d++) {
          dot += data[off + d] * q[d];
        }
        dot *= inv;
        if (dot > bestSim[k - 1]) {
          int i = k - 1;
          while (i > 0 && bestSim[i - 1] < dot) {
            bestSim[i] = bestSim[i - 1];
            best[i] = best[i - 1];
            i--;
          }
          bestSim[i] = dot;
          best[i] = row;
        }
      }
      List<String> out = new ArrayList<>();
      for (int i = 0; i < k; i++) {
        out.add(keys.get(best[i]));
      }
      return out;
    }
  }
}
