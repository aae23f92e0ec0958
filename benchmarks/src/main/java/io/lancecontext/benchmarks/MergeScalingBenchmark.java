package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.schema.SchemaPresets;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.index.Index;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.BTreeIndexParams;

/**
 * Merge cost against base size: 50,000 fresh rows (half updates of existing keys spread over the whole base,
 * half new keys) merged into bases of 100,000, 1,000,000 and 3,000,000 {@code rollout} rows (64-dim vectors,
 * ~300-character text). Bases are written with lance-core directly (one append per base, then the key index
 * rebuilt over it: the store's BTREE index on {@code id}, pages of 16,384 keys as option {@code index.key} says),
 * not through adds. {@code -Dsizes=100000,1000000} (or that list as the first argument) runs other sizes; the ratio is between the largest and the
 * smallest size run. Peak RSS is the process's high-water mark during the merge (reset before it through
 * {@code /proc/self/clear_refs}).
 *
 * <p>Final line: {@code RESULT merge_scaling ratio_3m_vs_100k=<x> rows_per_s_3m=<y> peak_rss_mb=<m>}.
 */
public final class MergeScalingBenchmark {
  static final int DIM = 64;
  static final int FRESH = Integer.getInteger("fresh", 50_000);
  static final int BATCH = 10_000;

  public static void main(String[] args) throws Exception {
    // each merge's phase timings (look-up, write, delete, commits, key index) go to the console: the level of
    // their logger in log4j2.properties, read when logging starts (after this line)
    System.setProperty("bench.merge-phases.level", System.getProperty("bench.merge-phases.level", "debug"));
    String sizesText = args.length > 0 ? args[0] : System.getProperty("sizes", "100000,1000000,3000000");
    List<Integer> sizes = new ArrayList<>();
    for (String s : sizesText.split(",")) {
      sizes.add(Integer.parseInt(s.trim()));
    }
    Bench.log("MergeScalingBenchmark: %d fresh rows (half updates, half new keys) into bases of %s rollout rows (dim %d), "
        + "%d cores", FRESH, sizes, DIM, Runtime.getRuntime().availableProcessors());
    Map<Integer, double[]> results = new LinkedHashMap<>();
    for (int size : sizes) {
      results.put(size, run(size));
    }
    Bench.log("");
    Bench.log("| base rows | merge s | merged rows/s | peak RSS during merge (MiB) | base write s |");
    Bench.log("|---|---|---|---|---|");
    for (var e : results.entrySet()) {
      double[] r = e.getValue();
      Bench.log("| %,d | %.2f | %.0f | %.0f | %.1f |", e.getKey(), r[0], FRESH / r[0], r[1], r[2]);
    }
    double[] small = results.get(sizes.get(0));
    double[] large = results.get(sizes.get(sizes.size() - 1));
    double peak = results.values().stream().mapToDouble(r -> r[1]).max().orElse(-1);
    Bench.log("RESULT merge_scaling ratio_3m_vs_100k=%.2f rows_per_s_3m=%.0f peak_rss_mb=%.0f%s", large[0] / small[0],
        FRESH / large[0], peak, sizes.size() == 3 && sizes.get(0) == 100_000 && sizes.get(2) == 3_000_000 ? ""
            : " (sizes " + sizesText + ": the ratio is largest vs smallest)");
  }

  /** @return merge seconds, peak RSS MiB during the merge, base write seconds */
  static double[] run(int baseRows) throws Exception {
    Path dir = Bench.scratch("merge-" + baseRows);
    // merge.max-bytes as before issue 9's bound (1 GiB): the 50,000 rows (about 30 MB of files) are one merge
    Map<String, String> options = Map.of("path", dir.toString(), "schema", "rollout", "schema.embedding-dim",
        Integer.toString(DIM), "shards", "4", "merge.trigger.generations", "1000", "merge.trigger.interval", "1h",
        "merge.max-bytes", "1GiB");
    try {
      SchemaSpec spec = SchemaPresets.rollout(DIM);
      try (ContextStore created = ContextStore.open(options)) {
        Bench.log("store created at %s", created.uri());
      }
      ContextStore.closeAllResident();
      long t0 = System.nanoTime();
      writeBaseInChild(dir.toString(), baseRows);
      double writeSeconds = (System.nanoTime() - t0) / 1e9;
      Bench.log("base of %,d rows written in %.1f s (%.0f MiB on disk)", baseRows, writeSeconds, mib(dir));
      try (ContextStore store = ContextStore.open(options)) {
        Random random = new Random(7);
        int stride = Math.max(1, baseRows / (FRESH / 2));
        for (int start = 0; start < FRESH; start += 1_000) {
          List<Map<String, Object>> rows = new ArrayList<>();
          for (int i = start; i < Math.min(FRESH, start + 1_000); i++) {
            String key = i % 2 == 0 ? "base-" + ((long) (i / 2) * stride % baseRows) : "new-" + i;
            rows.add(row(random, key, i));
          }
          store.add(rows);
        }
        store.seal();
        Bench.log("RSS before the merge %d MiB", Bench.rssKb() / 1024);
        resetPeakRss();
        long m0 = System.nanoTime();
        MergeResult r = store.merge();
        double mergeSeconds = (System.nanoTime() - m0) / 1e9;
        double peakMib = peakRssKb() / 1024.0;
        if (!r.merged() || r.rows() != FRESH) {
          throw new IllegalStateException("the merge did not merge " + FRESH + " rows: " + r);
        }
        long expected = baseRows + FRESH / 2;
        if (store.count() != expected) {
          throw new IllegalStateException("expected " + expected + " rows after the merge, found " + store.count());
        }
        Bench.log("base %,d: merged %,d rows (%d generations) in %.2f s; peak RSS during the merge %.0f MiB; %s", baseRows,
            r.rows(), r.generationCount(), mergeSeconds, peakMib, store.stats().summary());
        // a second merge of 50,000 other rows (half updates of other base keys, half new keys): the first
        // merge's rows sit in fragments the key index does not cover yet, which the look-up scans
        for (int start = 0; start < FRESH; start += 1_000) {
          List<Map<String, Object>> rows = new ArrayList<>();
          for (int i = start; i < Math.min(FRESH, start + 1_000); i++) {
            String key = i % 2 == 0 ? "base-" + (((long) (i / 2) * stride + 1) % baseRows) : "again-" + i;
            rows.add(row(random, key, i));
          }
          store.add(rows);
        }
        store.seal();
        long s0 = System.nanoTime();
        MergeResult second = store.merge();
        double secondSeconds = (System.nanoTime() - s0) / 1e9;
        Bench.log("base %,d: second merge of %,d rows in %.2f s (not in the RESULT line)", baseRows, second.rows(),
            secondSeconds);
        return new double[] {mergeSeconds, peakMib, writeSeconds};
      }
    } finally {
      ContextStore.closeAllResident();
      Bench.delete(dir);
    }
  }

  static Map<String, Object> row(Random random, String key, int n) {
    Map<String, Object> r = Bench.rolloutAdd(random, "m", n, 1, DIM).get(0);
    r.put("id", key);
    r.put("text_payload", Bench.text(random, 300));
    return r;
  }

  /** Writes the base in a child JVM, so that the merge's peak RSS is not the base writer's. */
  static void writeBaseInChild(String uri, int rows) throws Exception {
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-Xmx3g", "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"), "-cp", System.getProperty("java.class.path"),
        BaseWriter.class.getName(), uri, Integer.toString(rows)).inheritIO().start();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("the base writer failed (exit " + p.exitValue() + ")");
    }
  }

  /** Child JVM main: {@code <uri> <rows>}. */
  public static final class BaseWriter {
    public static void main(String[] args) throws Exception {
      writeBase(args[0], SchemaPresets.rollout(DIM), Integer.parseInt(args[1]));
      System.exit(0);
    }
  }

  /**
   * Appends {@code rows} rows (keys base-0 ...) to the store's base table with lance-core, then rebuilds the key
   * index the store created (the one BTREE index of the new store) so that it covers them.
   */
  static void writeBase(String uri, SchemaSpec spec, int rows) throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      Schema schema;
      try (Dataset ds = Dataset.open(uri, allocator)) {
        schema = ds.getSchema();
      }
      try (ArrowReader reader = generatedBase(allocator, schema, rows)) {
        Dataset.write().uri(uri).allocator(allocator).reader(reader).mode(WriteParams.WriteMode.APPEND).execute().close();
      }
      try (Dataset ds = Dataset.open(uri, allocator)) {
        String name = ds.getIndexes().stream().filter(i -> i.indexType() == IndexType.BTREE).map(Index::name)
            .findFirst().orElseThrow(() -> new IllegalStateException("the store at " + uri + " has no key index"));
        ds.createIndex(List.of(spec.key()), IndexType.BTREE, Optional.of(name), IndexParams.builder()
            .setScalarIndexParams(new BTreeIndexParams.Builder().zoneSize(16_384).build()).build(), true);
      }
    }
  }

  /** Base rows generated batch by batch, in the dataset schema, with write sequence 1. */
  private static ArrowReader generatedBase(BufferAllocator allocator, Schema schema, int rows) {
    Random random = new Random(1);
    int[] written = {0};
    return ArrowBatches.reader(schema, () -> {
      if (written[0] >= rows) {
        return null;
      }
      List<Map<String, Object>> records = new ArrayList<>();
      for (int i = written[0]; i < Math.min(rows, written[0] + BATCH); i++) {
        Map<String, Object> r = row(random, "base-" + i, i);
        r.put(SystemColumns.SEQUENCE, 1L);
        records.add(r);
      }
      written[0] += records.size();
      return ArrowBatches.encode(schema, records, allocator);
    }, true, allocator);
  }

  static double mib(Path dir) throws IOException {
    try (var s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum() / 1048576.0;
    }
  }

  static void resetPeakRss() {
    try {
      Files.writeString(Paths.get("/proc/self/clear_refs"), "5");
    } catch (IOException e) {
      Bench.log("could not reset the peak RSS (%s): the peak is the process's", e.getMessage());
    }
  }

  static long peakRssKb() throws IOException {
    for (String l : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (l.startsWith("VmHWM:")) {
        return Long.parseLong(l.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }
}
