package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.StoreStats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Incremental reads: a store of {@code rows} merged rows, then the newest {@code newest} rows (half new keys, half
 * upserts spread over the whole key space, so every old fragment loses rows to the merge's deletions), merged too.
 * Times a full scan at the later snapshot and the incremental read between the two snapshots (same columns),
 * each {@code rounds} times, and checks the incremental read returns exactly the newest rows.
 *
 * <p>Usage: {@code IncrementalReadBenchmark [rows=1000000] [newest=10000] [rounds=5]} (after one uncounted warm-up round). Last line:
 * {@code RESULT incremental ratio_vs_full_scan=<median incremental / median full> rows=<rows read incrementally>}.
 */
public final class IncrementalReadBenchmark {
  private IncrementalReadBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int newest = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    Path dir = Bench.scratch("incremental-read");
    Map<String, String> options = Map.of("path", dir.toString(), "schema", "context", "schema.embedding-dim", "8",
        "shards", "4", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d");
    Bench.log("IncrementalReadBenchmark: %d rows, newest %d, %d rounds", rows, newest, rounds);
    Random random = new Random(29);
    try (ContextStore store = ContextStore.open(options)) {
      long t = System.nanoTime();
      for (int start = 0; start < rows; start += 20_000) {
        store.add(batch(random, "b", start, Math.min(20_000, rows - start), 1));
        if ((start / 20_000) % 10 == 9) {
          store.flush();
        }
      }
      store.flush();
      store.compact();
      String from = store.snapshot().token();
      // the newest rows: half new keys, half upserts of keys spread over the whole base
      for (int start = 0; start < newest / 2; start += 1_000) {
        store.add(batch(random, "n", start, Math.min(1_000, newest / 2 - start), 2));
        List<Map<String, Object>> upserts = new ArrayList<>();
        for (int i = 0; i < Math.min(1_000, newest / 2 - start); i++) {
          long k = (long) (start + i) * rows / (newest / 2);
          upserts.add(row(random, "b" + k, 2));
        }
        store.add(upserts);
      }
      store.flush();
      String to = store.snapshot().token();
      StoreStats stats = store.stats();
      Bench.log("filled in %.1f s: base %d rows in %d fragments", (System.nanoTime() - t) / 1e9, stats.baseRows(),
          stats.fragments());

      List<String> columns = List.of("id", "token_count", "text_payload");
      double[] full = new double[rounds];
      double[] incremental = new double[rounds];
      long fullRows = 0;
      long incRows = 0;
      long fragmentsRead = 0;
      // one warm-up round of each read, not counted: the first read of a JVM runs interpreted code and opens the
      // store's readers (about 40 ms more for the incremental read, 100 ms for the full scan)
      drain(store, ScanSpec.all().withColumns(columns).atSnapshot(to));
      drain(store, ScanSpec.all().withColumns(columns).between(from, to));
      for (int round = 0; round < rounds; round++) {
        long f0 = System.nanoTime();
        fullRows = drain(store, ScanSpec.all().withColumns(columns).atSnapshot(to))[0];
        full[round] = (System.nanoTime() - f0) / 1e6;
        long i0 = System.nanoTime();
        long[] inc = drain(store, ScanSpec.all().withColumns(columns).between(from, to));
        incremental[round] = (System.nanoTime() - i0) / 1e6;
        incRows = inc[0];
        fragmentsRead = inc[1];
        Bench.log("round %d: full scan %d rows %.0f ms, incremental %d rows %.0f ms (%d base fragments read)", round,
            fullRows, full[round], incRows, incremental[round], fragmentsRead);
      }
      if (incRows != newest) {
        throw new IllegalStateException("the incremental read returned " + incRows + " rows, not " + newest);
      }
      Arrays.sort(full);
      Arrays.sort(incremental);
      double ratio = incremental[rounds / 2] / full[rounds / 2];
      Bench.log("RESULT incremental ratio_vs_full_scan=%.4f rows=%d", ratio, incRows);
    } finally {
      ContextStore.closeAllResident();
      Bench.delete(dir);
    }
  }

  /** Rows read and base fragments read. */
  private static long[] drain(ContextStore store, ScanSpec scan) {
    long n = 0;
    try (StoreReader r = store.scan(scan)) {
      while (r.next()) {
        n += r.batch().getRowCount();
      }
      return new long[] {n, r.baseFragmentsRead()};
    }
  }

  private static List<Map<String, Object>> batch(Random random, String prefix, int start, int n, int version) {
    List<Map<String, Object>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(row(random, prefix + (start + i), version));
    }
    return out;
  }

  private static Map<String, Object> row(Random random, String id, int version) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", id);
    r.put("token_count", version);
    r.put("text_payload", Bench.text(random, 100));
    return r;
  }
}
