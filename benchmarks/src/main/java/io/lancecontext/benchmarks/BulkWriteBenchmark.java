package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.schema.SchemaPresets;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.FragmentOperation;
import org.lance.WriteParams;

/**
 * Bulk writes, issue 9 "Measure it": {@code rows} (default 1,000,000; {@code -Drows=} runs fewer) {@code rollout}
 * rows (64-dim vectors, 300-character text) written by 2 threads in 8192-row batches into an empty store, in
 * atomic mode (two handles of one transaction, one publish) and in immediate mode (each full buffer takes the
 * bulk path), against the fragment-append baseline (each thread writes Lance fragments with
 * {@code Fragment.create}, then one append commit: lance-spark's approach). Then {@code rows/5} upserts of
 * existing keys plus {@code rows/5} new keys into the atomic store (one transaction), against the baseline
 * appending as many rows (it cannot upsert). Each writer thread generates a pool of 4 batches of records once
 * and writes them over and over with new keys (so record generation is not timed; encoding into Arrow is, in
 * every mode: the baseline encodes with {@link ArrowBatches} and writes with lance-core directly, as a lance-core
 * user would). Peak RSS is the process's high-water mark.
 *
 * <p>Final line: {@code RESULT bulk atomic_vs_fragments=<x> immediate_vs_fragments=<y>
 * upsert_vs_fragments=<z> peak_rss_mb=<m>}.
 */
public final class BulkWriteBenchmark {
  private BulkWriteBenchmark() {}

  static final int DIM = 64;
  static final int BATCH = 8192;
  static final int THREADS = 2;

  public static void main(String[] args) throws Exception {
    int rows = Integer.getInteger("rows", 1_000_000);
    Path root = Bench.scratch("bulk");
    try {
      warmPools();
      Bench.log("load average at start: %s", loadAverage());
      double[] cpu = new double[5];
      long c = cpuNanos();
      double fragments = fragments(root.resolve("fragments"), 0, rows, rows);
      cpu[0] = (cpuNanos() - c) / 1e9;
      c = cpuNanos();
      double atomic = store(root.resolve("atomic"), "atomic", "t1", 0, rows);
      cpu[1] = (cpuNanos() - c) / 1e9;
      ContextStore.closeAllResident();
      c = cpuNanos();
      double immediate = store(root.resolve("immediate"), "immediate", null, 0, rows);
      cpu[2] = (cpuNanos() - c) / 1e9;
      ContextStore.closeAllResident();
      int upserts = rows / 5;
      // upserts: keys rows-upserts .. rows+upserts-1 (half exist, half new), into the atomic store
      c = cpuNanos();
      double upsert = store(root.resolve("atomic"), "atomic", "t2", rows - upserts, 2 * upserts);
      cpu[3] = (cpuNanos() - c) / 1e9;
      c = cpuNanos();
      double append = fragments(root.resolve("fragments"), rows, 2 * upserts, 0);
      cpu[4] = (cpuNanos() - c) / 1e9;
      double fr = rows / fragments;
      // process CPU seconds over each timed phase (background merges running then included): on a shared,
      // loaded machine wall time varies with the neighbours, CPU time much less
      Bench.log("| mode | rows | s | rows/s | vs fragments | process CPU s |");
      Bench.log("| fragment append (baseline) | %,d | %.2f | %,.0f | 1.00 | %.1f |", rows, fragments, fr, cpu[0]);
      Bench.log("| atomic (2 handles, 1 publish) | %,d | %.2f | %,.0f | %.2f | %.1f |", rows, atomic, rows / atomic,
          fragments / atomic, cpu[1]);
      Bench.log("| immediate (bulk path) | %,d | %.2f | %,.0f | %.2f | %.1f |", rows, immediate, rows / immediate,
          fragments / immediate, cpu[2]);
      Bench.log("| upsert, atomic (%,d updates + %,d new) | %,d | %.2f | %,.0f | %.2f | %.1f |", upserts, upserts,
          2 * upserts, upsert, 2 * upserts / upsert, append / upsert, cpu[3]);
      Bench.log("| append, baseline | %,d | %.2f | %,.0f | 1.00 | %.1f |", 2 * upserts, append, 2 * upserts / append,
          cpu[4]);
      Bench.log("load average at end: %s", loadAverage());
      Bench.log("RESULT bulk atomic_vs_fragments=%.2f immediate_vs_fragments=%.2f upsert_vs_fragments=%.2f "
          + "peak_rss_mb=%.0f%s", fragments / atomic, fragments / immediate, append / upsert,
          MergeScalingBenchmark.peakRssKb() / 1024.0, rows == 1_000_000 ? "" : " rows=" + rows);
    } finally {
      ContextStore.closeAllResident();
      Bench.delete(root);
    }
  }

  /** CPU time of this process (every thread, lance-core's native ones included). */
  static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** The 1, 5 and 15 minute load averages of the machine. */
  static String loadAverage() {
    try {
      String[] f = java.nio.file.Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (java.io.IOException e) {
      return "unknown";
    }
  }

  private static final int POOL = 4;
  private static final ThreadLocal<List<List<Map<String, Object>>>> POOLS = ThreadLocal.withInitial(() -> {
    Random random = new Random(Thread.currentThread().getId());
    List<List<Map<String, Object>>> pool = new ArrayList<>();
    for (int b = 0; b < POOL; b++) {
      List<Map<String, Object>> batch = new ArrayList<>(BATCH);
      for (int i = 0; i < BATCH; i++) {
        batch.add(MergeScalingBenchmark.row(random, "pool", i));
      }
      pool.add(batch);
    }
    return pool;
  });

  /** Rows {@code from .. from+count-1} of the data set, as records (this thread's pooled records, re-keyed). */
  static List<Map<String, Object>> batch(Random random, int from, int count) {
    List<Map<String, Object>> pooled = POOLS.get().get(random.nextInt(POOL));
    List<Map<String, Object>> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      Map<String, Object> r = pooled.get(i);
      r.put("id", "row-" + (from + i));
      out.add(r);
    }
    return out;
  }

  /** Fills every writer thread's pool before anything is timed. */
  static void warmPools() throws Exception {
    java.util.concurrent.CountDownLatch both = new java.util.concurrent.CountDownLatch(THREADS);
    run(THREADS, (start, n, thread) -> {
      POOLS.get();
      both.countDown();
      both.await();  // so that each pool thread fills its own
    });
  }

  /** Seconds for THREADS threads to write {@code count} rows from {@code from} through the store. */
  static double store(Path path, String mode, String txid, int from, int count) throws Exception {
    Map<String, String> options = Map.of("path", path.toString(), "schema", "rollout", "schema.embedding-dim",
        Integer.toString(DIM), "shards", "4", "write.batch-rows", Integer.toString(BATCH));
    try (ContextStore store = ContextStore.open(options)) {
      long t = System.nanoTime();
      List<WriteSummary> summaries = Collections.synchronizedList(new ArrayList<>());
      run(count, (start, n, thread) -> {
        WriterOptions w = txid == null ? WriterOptions.defaults()
            : WriterOptions.builder().transaction(txid, Integer.toString(thread)).build();
        Random random = new Random(start);
        try (StoreWriter writer = store.newWriter(w)) {
          for (int b = 0; b < n; b += BATCH) {
            writer.write(batch(random, from + start + b, Math.min(BATCH, n - b)));
          }
          summaries.add(writer.commit());
        }
      });
      if (txid != null) {
        store.publish(txid, summaries);
      }
      double s = (System.nanoTime() - t) / 1e9;
      Bench.log("%s %s: %,d rows in %.2f s (%,.0f rows/s); %s", mode, txid == null ? "" : txid, count, s, count / s,
          store.stats().summary());
      return s;
    }
  }

  /** Seconds for THREADS threads to write Lance fragments of {@code count} rows and commit one append. */
  static double fragments(Path path, int from, int count, int create) throws Exception {
    SchemaSpec spec = SchemaPresets.rollout(DIM);
    Schema schema = spec.toArrowSchema();
    try (BufferAllocator allocator = new RootAllocator()) {
      String uri = path.toString();
      if (create > 0) {
        Dataset.create(allocator, uri, schema, new WriteParams.Builder().build()).close();
      }
      long t = System.nanoTime();
      List<FragmentMetadata> all = Collections.synchronizedList(new ArrayList<>());
      run(count, (start, n, thread) -> {
        Random random = new Random(start);
        for (int b = 0; b < n; b += BATCH) {
          try (VectorSchemaRoot root = ArrowBatches.encode(schema, batch(random, from + start + b, Math.min(BATCH, n - b)),
              allocator)) {
            all.addAll(Fragment.create(uri, allocator, root, new WriteParams.Builder().build()));
          }
        }
      });
      long version;
      try (Dataset ds = Dataset.open(uri, allocator)) {
        version = ds.version();
      }
      new FragmentOperation.Append(all).commit(allocator, uri, Optional.of(version), Map.of()).close();
      double s = (System.nanoTime() - t) / 1e9;
      Bench.log("fragments: %,d rows in %d fragments, %.2f s (%,.0f rows/s)", count, all.size(), s, count / s);
      return s;
    }
  }

  interface Part {
    void write(int start, int count, int thread) throws Exception;
  }

  /** Splits {@code count} rows between THREADS threads and waits for them. */
  private static final ExecutorService WRITERS = Executors.newFixedThreadPool(THREADS, r -> {
    Thread t = new Thread(r, "bulk-writer");
    t.setDaemon(true);
    return t;
  });

  static void run(int count, Part part) throws Exception {
    ExecutorService pool = WRITERS;
    try {
      List<Future<Object>> futures = new ArrayList<>();
      int per = (count + THREADS - 1) / THREADS;
      for (int t = 0; t < THREADS; t++) {
        int start = t * per;
        int n = Math.max(0, Math.min(per, count - start));
        int thread = t;
        Callable<Object> c = () -> {
          part.write(start, n, thread);
          return null;
        };
        futures.add(pool.submit(c));
      }
      for (Future<Object> f : futures) {
        f.get();
      }
    } finally {
      // the pool (and each thread's record pool) is reused by every phase
    }
  }
}
