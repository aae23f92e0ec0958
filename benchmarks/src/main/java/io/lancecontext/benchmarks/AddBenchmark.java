package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.schema.SchemaPresets;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * 10-row {@code rollout} adds, 10,000 of them with 1 caller and then with 8 concurrent callers, through the
 * store (durable and visible to other processes on return) and through the baseline (one Lance commit
 * per add; grouped commits with 8 callers), same data, same run. Then {@code get} latency on the store: of
 * random acknowledged keys, and of keys of 200 adds made just before (the fresh tier).
 *
 * <p>Usage: {@code AddBenchmark [adds=10000] [callers=8] [rows=10] [shards=4]}. Last line:
 * {@code RESULT add speedup_1=.. speedup_8=.. p99_ms=.. last_p99_ms=.. last_p99_ms_8=.. max_ms_1=.. max_ms_8=..
 * get_p50_ms=.. get_fresh_p50_ms=..} ({@code last_p99_ms}: the 1-caller run's last 1,000 adds; {@code _8}: the
 * 8-caller run's).
 */
public final class AddBenchmark {
  private static final int DIM = 64;

  private AddBenchmark() {}

  public static void main(String[] args) throws Exception {
    int adds = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int callers = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    int rows = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    String shards = args.length > 3 ? args[3] : "4";
    SchemaSpec spec = SchemaPresets.rollout(DIM);
    Bench.log("AddBenchmark: %d adds x %d rows, 1 and %d callers, rollout schema (dim %d), store with %s shards, %d cores",
        adds, rows, callers, DIM, shards, Runtime.getRuntime().availableProcessors());
    BufferAllocator allocator = new RootAllocator();  // the baseline's

    // ------------------------------------------------------------------ baseline
    Path naiveDir = Bench.scratch("naive-1");
    Bench.Latencies naive1 = new Bench.Latencies();
    double naive1Rate;
    try (NaiveCommits naive = new NaiveCommits(naiveDir.toString(), spec, allocator)) {
      naive1Rate = run("baseline, 1 caller (one Lance commit per add)", adds, 1, rows, naive1,
          (random, caller, i) -> naive.add(Bench.rolloutAdd(random, "n" + caller, i, rows, DIM)));
      check(naive.count(), (long) adds * rows, "baseline rows");
    }
    Path naive8Dir = Bench.scratch("naive-8");
    Bench.Latencies naive8 = new Bench.Latencies();
    double naive8Rate;
    try (NaiveCommits naive = new NaiveCommits(naive8Dir.toString(), spec, allocator)) {
      naive8Rate = run("baseline, " + callers + " callers (group commit)", adds, callers, rows, naive8,
          (random, caller, i) -> naive.addGrouped(Bench.rolloutAdd(random, "n" + caller, i, rows, DIM)));
      check(naive.count(), (long) adds * rows, "baseline rows");
    }

    // ------------------------------------------------------------------ store
    Path storeDir = Bench.scratch("store");
    Bench.Latencies store1 = new Bench.Latencies();
    Bench.Latencies store8 = new Bench.Latencies();
    Bench.Latencies gets = new Bench.Latencies();
    Bench.Latencies freshGets = new Bench.Latencies();
    double store1Rate;
    double store8Rate;
    try (ContextStore store = ContextStore.open(Bench.storeOptions(Map.of("path", storeDir.toString(), "schema", "rollout",
        "schema.embedding-dim", Integer.toString(DIM), "shards", shards)))) {
      store1Rate = run("store, 1 caller", adds, 1, rows, store1,
          (random, caller, i) -> store.add(Bench.rolloutAdd(random, "a" + caller, i, rows, DIM)));
      long putsBefore = puts(store);
      store8Rate = run("store, " + callers + " callers", adds, callers, rows, store8,
          (random, caller, i) -> store.add(Bench.rolloutAdd(random, "b" + caller, i, rows, DIM)));
      long puts8 = puts(store) - putsBefore;
      Bench.log("store, %d callers: %,d puts for %,d adds (%.2f per add; group commit combines concurrent calls of a "
          + "bucket into one put)", callers, puts8, adds, puts8 / (double) adds);
      check(store.count(), 2L * adds * rows, "store rows");
      Random random = new Random(3);
      int perCaller = adds / callers;
      for (int i = 0; i < 1_000; i++) {
        String key = random.nextBoolean()
            ? "a0-" + random.nextInt(adds) + "-" + random.nextInt(rows)
            : "b" + random.nextInt(callers) + "-" + random.nextInt(perCaller) + "-" + random.nextInt(rows);
        long t = System.nanoTime();
        boolean found = store.get(key).isPresent();
        gets.add(System.nanoTime() - t);
        if (!found) {
          throw new AssertionError("acknowledged row " + key + " not found");
        }
      }
      // right after a burst of 200 more adds: keys in the fresh tier (the WAL tail or a generation just sealed)
      for (int i = 0; i < 200; i++) {
        store.add(Bench.rolloutAdd(random, "f", i, rows, DIM));
      }
      for (int i = 0; i < 1_000; i++) {
        String key = "f-" + random.nextInt(200) + "-" + random.nextInt(rows);
        long t = System.nanoTime();
        boolean found = store.get(key).isPresent();
        freshGets.add(System.nanoTime() - t);
        if (!found) {
          throw new AssertionError("acknowledged row " + key + " not found");
        }
      }
      StoreStats s = store.stats();
      Bench.log("store at the end: %s", s.summary());
      Bench.log("get (1,000 random acknowledged keys, all found): %s", gets.summary());
      Bench.log("get (1,000 keys of the last 200 adds, all found): %s", freshGets.summary());
    }

    double speedup1 = store1Rate / naive1Rate;
    double speedup8 = store8Rate / naive8Rate;
    double p99 = store1.percentileMs(99);
    double firstP99 = store1.percentileMs(99, 0, Math.min(1_000, store1.size()));
    double lastP99 = store1.percentileMs(99, Math.max(0, store1.size() - 1_000), store1.size());
    double lastP99Of8 = store8.percentileMs(99, Math.max(0, store8.size() - 1_000), store8.size());
    Bench.log("");
    Bench.log("| run | rows/s | add latency |");
    Bench.log("|---|---|---|");
    Bench.log("| baseline, 1 caller | %.0f | %s |", naive1Rate, naive1.summary());
    Bench.log("| store, 1 caller | %.0f | %s |", store1Rate, store1.summary());
    Bench.log("| baseline, %d callers | %.0f | %s |", callers, naive8Rate, naive8.summary());
    Bench.log("| store, %d callers | %.0f | %s |", callers, store8Rate, store8.summary());
    Bench.log("store, 1 caller: p99 first 1,000 adds %.2f ms, last 1,000 adds %.2f ms; baseline last 1,000 p99 %.2f ms",
        firstP99, lastP99, naive1.percentileMs(99, Math.max(0, naive1.size() - 1_000), naive1.size()));
    Bench.log("store, %d callers: p99 of the last 1,000 adds %.2f ms", callers, lastP99Of8);
    Bench.log("RESULT add speedup_1=%.2f speedup_8=%.2f p99_ms=%.2f last_p99_ms=%.2f last_p99_ms_8=%.2f max_ms_1=%.2f "
        + "max_ms_8=%.2f get_p50_ms=%.2f get_fresh_p50_ms=%.2f", speedup1, speedup8, p99, lastP99, lastP99Of8,
        store1.percentileMs(100), store8.percentileMs(100), gets.percentileMs(50), freshGets.percentileMs(50));
    ContextStore.closeAllResident();
    allocator.close();
    if (!Boolean.getBoolean("bench.keep")) {
      Bench.delete(naiveDir);
      Bench.delete(naive8Dir);
      Bench.delete(storeDir);
    }
  }

  @FunctionalInterface
  interface Add {
    void run(Random random, int caller, int i) throws Exception;
  }

  /** Runs {@code adds} adds spread over {@code callers} threads; returns rows/s over the whole run. */
  static double run(String label, int adds, int callers, int rows, Bench.Latencies latencies, Add add) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    AtomicInteger done = new AtomicInteger();
    long start = System.nanoTime();
    List<Future<?>> futures = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      int caller = c;
      int mine = adds / callers + (c < adds % callers ? 1 : 0);
      futures.add(pool.submit(() -> {
        Random random = new Random(caller);
        for (int i = 0; i < mine; i++) {
          long t = System.nanoTime();
          add.run(random, caller, i);
          latencies.add(System.nanoTime() - t);
          int n = done.incrementAndGet();
          if (n % 2_000 == 0) {
            Bench.log("  %s: %d adds, %.0f rows/s so far", label, n, n * (double) rows / ((System.nanoTime() - start) / 1e9));
          }
        }
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get();
    }
    pool.shutdown();
    double seconds = (System.nanoTime() - start) / 1e9;
    double rate = adds * (double) rows / seconds;
    Bench.log("%s: %d adds in %.1f s = %.0f rows/s; latency %s", label, adds, seconds, rate, latencies.summary());
    return rate;
  }

  static void check(long actual, long expected, String what) {
    if (actual != expected) {
      throw new AssertionError(what + ": expected " + expected + ", found " + actual);
    }
  }

  /** Puts this JVM made on the store's shards so far. */
  private static long puts(ContextStore store) {
    return store.stats().shards().stream().mapToLong(StoreStats.Shard::puts).sum();
  }
}
