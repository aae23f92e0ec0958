package io.lancecontext.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

/** Shared pieces of the benchmarks: latency statistics, rollout records, scratch directories. */
final class Bench {
  private Bench() {}

  /**
   * What a search benchmark counts over its queries: each query's result against the exact top k of the LSM view,
   * and what a search of the base table alone (lance-spark's view) returned for it.
   */
  static final class SearchCounts {
    private final java.util.Set<String> freshKeys;
    private final java.util.Set<String> deleted;
    int truthTotal;
    int truthHits;
    int freshTruth;
    int freshFound;
    int stale;
    /** Exact top-k rows the base-only search did not return. */
    int baseOnlyMissed;
    /** Exact top-k rows whose newest version is in the fresh tier: a base-only search cannot return it. */
    int baseOnlyFreshMissed;
    /** Exact top-k rows of the base the base-only search did not return (its own ranking's misses). */
    int baseOnlyOtherMissed;
    /** Deleted or replaced rows the base-only search returned. */
    int baseOnlyStale;

    SearchCounts(java.util.Set<String> freshKeys, java.util.Set<String> deleted) {
      this.freshKeys = freshKeys;
      this.deleted = deleted;
    }

    /**
     * One query: the keys it returned ({@code staleRows} of them not the view's newest version), the exact top k,
     * and the keys the base-only search returned.
     */
    void add(List<String> got, int staleRows, List<String> truth, List<String> baseOnly) {
      stale += staleRows;
      java.util.Set<String> found = new java.util.HashSet<>(got);
      for (String key : truth) {
        truthTotal++;
        truthHits += found.contains(key) ? 1 : 0;
        boolean fresh = freshKeys.contains(key);
        if (fresh) {
          freshTruth++;
          freshFound += found.contains(key) ? 1 : 0;
        }
        baseOnlyMissed += baseOnly.contains(key) ? 0 : 1;
        baseOnlyFreshMissed += fresh ? 1 : 0;
        baseOnlyOtherMissed += baseOnly.contains(key) || fresh ? 0 : 1;
      }
      for (String key : baseOnly) {
        baseOnlyStale += deleted.contains(key) || freshKeys.contains(key) ? 1 : 0;
      }
    }

    double recall() {
      return truthHits / (double) truthTotal;
    }

    double freshRecall() {
      return freshTruth == 0 ? 1.0 : freshFound / (double) freshTruth;
    }
  }

  /** Latencies in nanoseconds. */
  static final class Latencies {
    private long[] values = new long[1024];
    private int n;

    synchronized void add(long nanos) {
      if (n == values.length) {
        values = Arrays.copyOf(values, n * 2);
      }
      values[n++] = nanos;
    }

    synchronized int size() {
      return n;
    }

    /** Percentile (0-100) in milliseconds over [from, to) in arrival order. */
    synchronized double percentileMs(double p, int from, int to) {
      long[] s = Arrays.copyOfRange(values, from, to);
      Arrays.sort(s);
      if (s.length == 0) {
        return Double.NaN;
      }
      int i = (int) Math.min(s.length - 1, Math.ceil(p / 100.0 * s.length) - 1);
      return s[Math.max(0, i)] / 1e6;
    }

    double percentileMs(double p) {
      return percentileMs(p, 0, size());
    }

    /** Percentiles, and where the slowest calls came (their positions in arrival order, from 1). */
    synchronized String summary() {
      int slowest = 0;
      int over100 = 0;
      for (int i = 0; i < n; i++) {
        slowest = values[i] > values[slowest] ? i : slowest;
        over100 += values[i] > 100_000_000L ? 1 : 0;
      }
      return String.format("p50 %.2f / p90 %.2f / p99 %.2f / max %.2f ms (call %,d of %,d; %d over 100 ms)",
          percentileMs(50), percentileMs(90), percentileMs(99), percentileMs(100), slowest + 1, n, over100);
    }
  }

  /** 10-row rollout adds like an RL worker logs them: one rollout's steps, text, tokens, rewards. */
  static List<Map<String, Object>> rolloutAdd(Random random, String prefix, int add, int rows, int dim) {
    List<Map<String, Object>> out = new ArrayList<>(rows);
    for (int i = 0; i < rows; i++) {
      Map<String, Object> r = new HashMap<>();
      r.put("id", prefix + "-" + add + "-" + i);
      r.put("rollout_id", prefix + "-" + add);
      r.put("sequence_order", i);
      r.put("group_id", "g" + (add % 64));
      r.put("policy_version", (long) add / 100);
      r.put("model_name", "policy-7b");
      r.put("worker_id", prefix);
      r.put("actor", i % 2 == 0 ? "assistant" : "environment");
      r.put("text_payload", text(random, 200));
      r.put("prompt_tokens", List.of(random.nextInt(50_000), random.nextInt(50_000), random.nextInt(50_000)));
      r.put("completion_tokens", List.of(random.nextInt(50_000), random.nextInt(50_000)));
      r.put("reward", random.nextGaussian());
      r.put("done", i == rows - 1);
      r.put("num_tokens", 5);
      float[] v = new float[dim];
      for (int d = 0; d < dim; d++) {
        v[d] = random.nextFloat();
      }
      r.put("embedding", v);
      r.put("created_at", java.time.Instant.now());
      r.put("split", "train");
      out.add(r);
    }
    return out;
  }

  static String text(Random random, int length) {
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append((char) ('a' + random.nextInt(26)));
    }
    return sb.toString();
  }

  /**
   * {@code options} plus every store option given as a system property {@code bench.store.<key>} (e.g.
   * {@code BENCH_JAVA_OPTS=-Dbench.store.search.index.min-rows=100000000}), which win.
   */
  /**
   * The fresh tier of a search benchmark, added to {@code store} over {@code baseRows} base rows {@code b<i>}: a fifth
   * of {@code fresh} rows are newer versions of random base keys, a tenth deletes base keys, the rest are new keys
   * {@code f<i>}; {@code row} makes a key's row.
   *
   * @param keys the keys whose newest version is in the fresh tier
   * @param deleted the base keys deleted
   */
  record FreshTier(java.util.Set<String> keys, java.util.Set<String> deleted) {
    static FreshTier add(io.lancecontext.core.ContextStore store, Random random, int baseRows, int fresh,
        java.util.function.Function<String, Map<String, Object>> row) {
      java.util.Set<String> keys = new java.util.HashSet<>();
      java.util.Set<String> deleted = new java.util.HashSet<>();
      int upserts = fresh / 5;
      int deletes = fresh / 10;
      List<Map<String, Object>> batch = new ArrayList<>();
      for (int i = 0; i < fresh - deletes; i++) {
        String key = i < upserts ? "b" + random.nextInt(baseRows) : "f" + i;
        keys.add(key);
        batch.add(row.apply(key));
        if (batch.size() == 500) {
          store.add(batch);
          batch = new ArrayList<>();
        }
      }
      store.add(batch);
      List<String> toDelete = new ArrayList<>();
      while (toDelete.size() < deletes) {
        String key = "b" + random.nextInt(baseRows);
        if (!keys.contains(key) && deleted.add(key)) {
          toDelete.add(key);
        }
      }
      for (int i = 0; i < toDelete.size(); i += 500) {
        store.delete(toDelete.subList(i, Math.min(toDelete.size(), i + 500)));
      }
      log("fresh tier: %,d rows (%,d upserts of base keys), %,d deletions; %s", keys.size(), upserts, deletes,
          store.stats().summary());
      return new FreshTier(keys, deleted);
    }
  }

  static Map<String, String> storeOptions(Map<String, String> options) {
    Map<String, String> out = new HashMap<>(options);
    for (String name : System.getProperties().stringPropertyNames()) {
      if (name.startsWith("bench.store.")) {
        out.put(name.substring("bench.store.".length()), System.getProperty(name));
      }
    }
    return out;
  }

  static Path scratch(String name) throws IOException {
    Path root = Paths.get(System.getProperty("bench.dir", "benchmarks/target/bench-data")).toAbsolutePath();
    Path p = root.resolve(name + "-" + System.currentTimeMillis());
    Files.createDirectories(p.getParent());
    return p;
  }

  static void delete(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
    }
  }

  static long rssKb() {
    try {
      for (String l : Files.readAllLines(Paths.get("/proc/self/status"))) {
        if (l.startsWith("VmRSS:")) {
          return Long.parseLong(l.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException e) {
      return -1;
    }
    return -1;
  }

  static void log(String fmt, Object... args) {
    System.out.printf(fmt + "%n", args);
    System.out.flush();
  }
}
