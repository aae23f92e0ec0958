package io.lancecontext.benchmarks.spark;

import static org.apache.spark.sql.functions.col;

import io.lancecontext.core.ContextStore;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;

/**
 * Spark local[2], one run: the same rollout rows (64-dim vectors, ~300-char text; the generator shape of
 * shared/reference/engine-baselines SparkBench) written from an in-memory copy through {@code lancecontext}
 * (atomic commit, the default), Spark's Parquet and the fragment-append baseline ({@link FragmentAppendSource}),
 * each into a fresh location; then full scan, {@code count()} and 10 key lookups on Parquet and lancecontext;
 * then an upsert of {@code upserts} existing keys through lancecontext against what a Parquet user does instead
 * (rewrite the whole table with the updated rows). Each case runs {@code reps} times; the best time counts.
 * Ratios are speeds against the baseline of the same run (above 1 = lancecontext faster).
 *
 * <p>Usage: {@code SparkWriteReadBenchmark [rows] [upserts] [reps] [dataDir]} ({@code -Dspark.bench.options=k=v,...}:
 * more options for every {@code lancecontext} write, e.g. {@code write.distribution=none}). Last line:
 * {@code RESULT spark write_vs_parquet=.. write_vs_fragment_append=.. scan_vs_parquet=.. lookup_speedup_vs_parquet=..
 * upsert_vs_parquet_rewrite=..}, where {@code scan_vs_parquet} is the lower of the full-scan and count ratios.
 */
public final class SparkWriteReadBenchmark {
  private SparkWriteReadBenchmark() {}

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
    long upserts = args.length > 1 ? Long.parseLong(args[1]) : 100_000L;
    int reps = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    Path data = Paths.get(args.length > 3 ? args[3] : "benchmarks/spark/target/data").toAbsolutePath();
    deleteTree(data);
    Files.createDirectories(data);
    String pq = data.resolve("rollouts.parquet").toString();
    String pqRewrite = data.resolve("rollouts-rewritten.parquet").toString();
    String frag = data.resolve("rollouts-fragments.lance").toString();
    String lc = data.resolve("rollouts-lancecontext").toString();
    System.out.printf(Locale.ROOT, "SparkWriteReadBenchmark rows=%d upserts=%d reps=%d cores=%d load=%s%s%n", n,
        upserts, reps, Runtime.getRuntime().availableProcessors(), load(),
        EXTRA_OPTIONS.isEmpty() ? "" : " options=" + EXTRA_OPTIONS);

    SparkSession spark = session("SparkWriteReadBenchmark");
    try {
      Dataset<Row> gen = rollouts(spark, n, 0, 1, 0.0);
      time("materialize in-memory copy", 1, () -> {
        gen.persist(StorageLevel.MEMORY_ONLY());
        return "rows=" + gen.count() + " partitions=" + gen.rdd().getNumPartitions();
      });
      double noop = best("write noop (in-memory copy floor)", reps, () -> {
        gen.write().format("noop").mode("overwrite").save();
        return "";
      });

      double writeParquet = best("write parquet", reps, () -> {
        gen.write().mode("overwrite").parquet(pq);
        return "bytes=" + du(pq);
      });
      double writeFragments = best("write fragment-append", reps, () -> deleteTree(Paths.get(frag)), () -> {
        toFragments(gen).save(frag);
        return "bytes=" + du(frag);
      });
      // (the profiles run first: each lancecontext rep below closes the resident stores, so their background merges
      // do not compete with the reads of the store measured)
      // profile of the write: the same job with staged parts of 16x the default write.batch-rows (8192)
      String lcLarge = data.resolve("rollouts-lancecontext-large-parts").toString();
      time("write lancecontext (write.batch-rows=131072)", 1, () -> {
        deleteTree(Paths.get(lcLarge));
        toStore(gen).option("write.batch-rows", "131072").save(lcLarge);
        return "bytes=" + du(lcLarge);
      });
      // the same job without the bucket shuffle (write.distribution=none), timed as the atomic write below is: the
      // best of reps, each after the previous stores are closed (a single first rep, timed beside the merges of
      // the write before it, had made this look 0.62-0.75x Parquet where its best rep is faster than the default's)
      String lcUnclustered = data.resolve("rollouts-lancecontext-unclustered").toString();
      double writeLcUnclustered = best("write lancecontext (write.distribution=none)", reps, () -> {
        ContextStore.closeAllResident();
        deleteTree(Paths.get(lcUnclustered));
      }, () -> {
        toStore(gen).option("write.distribution", "none").save(lcUnclustered);
        return "bytes=" + du(lcUnclustered);
      });
      // untimed before each rep: close the resident stores (the previous writes' background merges end first) and
      // clear the location, so the time is the job's alone
      double writeLc = best("write lancecontext (atomic)", reps, () -> {
        ContextStore.closeAllResident();
        deleteTree(Paths.get(lc));
      }, () -> {
        toStore(gen).save(lc);
        return "bytes=" + du(lc);
      });

      stats("after the write (as the scans below find it)", lc);

      List<String> keys = new ArrayList<>();
      for (int k = 0; k < 10; k++) {
        keys.add(md5(Long.toString((k * 99_991L + 12_345L) % n)));
      }
      Dataset<Row> p = spark.read().parquet(pq);
      Dataset<Row> l = spark.read().format("lancecontext").load(lc);
      double scanParquet = best("full scan parquet (noop sink)", reps, () -> scan(p));
      double scanLc = best("full scan lancecontext (noop sink)", reps, () -> scan(l));
      double countParquet = best("count parquet", reps, () -> count(p, n));
      double countLc = best("count lancecontext", reps, () -> count(l, n));
      double lookupParquet = best("10 key lookups parquet", reps, () -> lookups(p, keys));
      double lookupLc = best("10 key lookups lancecontext", reps, () -> lookups(l, keys));
      stats("after the reads", lc);
      // profile of the scan: the same scan once everything is merged into the base table
      time("flush lancecontext (fresh tier into the base)", 1, () -> {
        try (ContextStore store = ContextStore.open(java.util.Map.of("path", lc))) {
          return store.flush().toString();
        }
      });
      stats("after flush", lc);
      double scanLcFlushed = best("full scan lancecontext after flush", reps, () -> scan(l));

      // upserts: every (n / upserts)-th existing key gets a new reward
      long step = Math.max(1, n / upserts);
      Dataset<Row> updates = rollouts(spark, upserts, 0, step, 10.0);
      time("materialize upserts", 1, () -> {
        updates.persist(StorageLevel.MEMORY_ONLY());
        return "rows=" + updates.count();
      });
      double upsertLc = time("upsert lancecontext (atomic append)", 1, () -> {
        updates.write().format("lancecontext").mode("append").save(lc);
        return "";
      });
      check("lancecontext after upsert", spark.read().format("lancecontext").load(lc), n, upserts);
      double rewriteParquet = time("rewrite parquet with the upserts", 1, () -> {
        Dataset<Row> old = spark.read().parquet(pq);
        old.join(updates.select("id"), old.col("id").equalTo(updates.col("id")), "left_anti").unionByName(updates)
            .write().mode("overwrite").parquet(pqRewrite);
        return "bytes=" + du(pqRewrite);
      });
      check("parquet after rewrite", spark.read().parquet(pqRewrite), n, upserts);

      System.out.printf(Locale.ROOT, "write rows/s: parquet %.0f, fragment-append %.0f, lancecontext %.0f (noop floor %.0f)%n",
          n / writeParquet, n / writeFragments, n / writeLc, n / noop);
      System.out.printf(Locale.ROOT, "write without the bucket shuffle: %.0f rows/s, %.2fx parquet, %.2fx fragment-append%n",
          n / writeLcUnclustered, writeParquet / writeLcUnclustered, writeFragments / writeLcUnclustered);
      System.out.printf(Locale.ROOT, "scan ratio %.2f, count ratio %.2f, scan ratio after flush %.2f%n", scanParquet / scanLc,
          countParquet / countLc, scanParquet / scanLcFlushed);
      System.out.printf(Locale.ROOT, "load at end: %s%n", load());
      System.out.printf(Locale.ROOT,
          "RESULT spark write_vs_parquet=%.2f write_vs_fragment_append=%.2f scan_vs_parquet=%.2f lookup_speedup_vs_parquet=%.2f"
              + " upsert_vs_parquet_rewrite=%.2f%n",
          writeParquet / writeLc, writeFragments / writeLc, Math.min(scanParquet / scanLc, countParquet / countLc),
          lookupParquet / lookupLc, rewriteParquet / upsertLc);
    } finally {
      ContextStore.closeAllResident();
      spark.stop();
    }
  }

  /** The local[2] session of the Spark benchmarks (no UI, loopback only, two shuffle partitions). */
  static SparkSession session(String app) {
    return SparkSession.builder()
        .master("local[2]")
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.debug.maxToStringFields", "1000")
        .getOrCreate();
  }

  /** The measured write: an append of rollout rows into a {@code lancecontext} store (atomic, 4 shards, defaults). */
  static DataFrameWriter<Row> toStore(Dataset<Row> rows) {
    return rows.write().format("lancecontext").option("schema", "rollout").option("schema.embedding-dim", "64")
        .options(EXTRA_OPTIONS).mode("append");
  }

  /**
   * More options for every {@code lancecontext} write of this benchmark and of {@link WriteRatio}, from system
   * property {@code spark.bench.options} ({@code key=value,key=value}), to try settings against the same baselines;
   * none by default.
   */
  static final Map<String, String> EXTRA_OPTIONS = parseOptions(System.getProperty("spark.bench.options", ""));

  private static Map<String, String> parseOptions(String text) {
    Map<String, String> out = new java.util.LinkedHashMap<>();
    for (String pair : text.split(",")) {
      if (!pair.isBlank()) {
        int eq = pair.indexOf('=');
        out.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
      }
    }
    return out;
  }

  /** The baseline write: tasks write Lance fragments, the driver commits once ({@link FragmentAppendSource}). */
  static DataFrameWriter<Row> toFragments(Dataset<Row> rows) {
    return rows.write().format(FragmentAppendSource.class.getName()).option("vector.dim", "64").mode("append");
  }

  /**
   * Rows {@code first, first + step, ...} ({@code count} of them) of the rollout-shaped generator: md5 keys, 300
   * characters of text, a 64-dim float vector; {@code rewardOffset} is added to the reward.
   */
  static Dataset<Row> rollouts(SparkSession spark, long count, long first, long step, double rewardOffset) {
    List<String> exprs = new ArrayList<>(List.of(
        "md5(cast(n as string)) AS id",
        "concat('rollout-', cast(n div 32 as string)) AS rollout_id",
        "cast(n % 32 as int) AS sequence_order",
        "concat('group-', cast(n div 256 as string)) AS group_id",
        "n div 100000 AS policy_version",
        "element_at(array('qwen2.5-7b-instruct', 'llama-3.1-8b-instruct', 'mistral-7b-v0.3'), cast(n % 3 as int) + 1) AS model_name",
        "substr(concat(sha2(cast(n as string), 512), ' ', sha2(cast(n + 1000000007 as string), 512), ' ',"
            + " sha2(cast(n + 2000000011 as string), 256)), 1, 300) AS text_payload",
        "cast(pmod(hash(n, 7), 10000) / 10000.0 + " + rewardOffset + " as double) AS reward",
        "(n % 32 = 31) AS done"));
    StringBuilder emb = new StringBuilder("array(");
    for (int k = 0; k < 64; k++) {
      emb.append(k > 0 ? ", " : "").append("cast(sin(n * 0.001 + ").append(k).append(") as float)");
    }
    exprs.add(emb.append(") AS embedding").toString());
    return spark.range(0, count).selectExpr("id * " + step + " + " + first + " AS n").selectExpr(exprs.toArray(new String[0]));
  }

  private static void stats(String when, String path) {
    try (ContextStore store = ContextStore.open(java.util.Map.of("path", path))) {
      io.lancecontext.core.result.StoreStats st = store.stats();
      System.out.printf(Locale.ROOT, "  store %s: base rows %d in %d fragments, fresh rows %d, unmerged generations/parts %d,"
          + " merges %d%n", when, st.baseRows(), st.fragments(), st.freshRows(), st.unmergedGenerations(),
          st.maintenance().merges());
    }
  }

  private static String scan(Dataset<Row> df) {
    df.write().format("noop").mode("overwrite").save();
    return "";
  }

  private static String count(Dataset<Row> df, long n) {
    long c = df.count();
    if (c != n) {
      throw new IllegalStateException("count " + c + ", expected " + n);
    }
    return "count=" + c;
  }

  private static String lookups(Dataset<Row> df, List<String> keys) {
    for (String k : keys) {
      List<Row> rows = df.where(col("id").equalTo(k)).collectAsList();
      if (rows.size() != 1) {
        throw new IllegalStateException("lookup " + k + " -> " + rows.size() + " rows");
      }
    }
    return "found=" + keys.size();
  }

  private static void check(String what, Dataset<Row> df, long n, long upserts) {
    long rows = df.count();
    long updated = df.where("reward >= 10.0").count();
    System.out.printf(Locale.ROOT, "  check %s: rows=%d updated=%d%n", what, rows, updated);
    if (rows != n || updated != upserts) {
      throw new IllegalStateException(what + ": " + rows + " rows, " + updated + " updated; expected " + n + ", " + upserts);
    }
  }

  private static double best(String name, int reps, Callable<String> body) throws Exception {
    return best(name, reps, () -> { }, body);
  }

  /** The best time of {@code reps} runs of {@code body}, each after an untimed {@code before}. */
  private static double best(String name, int reps, Untimed before, Callable<String> body) throws Exception {
    double best = Double.MAX_VALUE;
    for (int r = 1; r <= reps; r++) {
      before.run();
      best = Math.min(best, time(name, r, body));
    }
    return best;
  }

  @FunctionalInterface
  private interface Untimed {
    void run() throws Exception;
  }

  private static double time(String name, int rep, Callable<String> body) throws Exception {
    long t = System.nanoTime();
    String info = body.call();
    double s = (System.nanoTime() - t) / 1e9;
    System.out.printf(Locale.ROOT, "  %-40s rep %d  %8.3f s  %s%n", name, rep, s, info);
    return s;
  }

  private static String load() {
    try {
      return Files.readString(Paths.get("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "n/a";
    }
  }

  static String md5(String s) throws Exception {
    byte[] d = MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
    StringBuilder sb = new StringBuilder();
    for (byte b : d) {
      sb.append(String.format("%02x", b));
    }
    return sb.toString();
  }

  private static long du(String p) throws IOException {
    try (Stream<Path> s = Files.walk(Paths.get(p))) {
      return s.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
    }
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    }
  }
}
