package io.lancecontext.benchmarks.spark;

import io.lancecontext.core.ContextStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;

/**
 * The write half of {@link SparkWriteReadBenchmark} alone, in rounds: each round writes the same persisted rollout
 * rows as Parquet, as fragment-append and as a {@code lancecontext} atomic write, one after the other, so that a
 * slow minute of the machine hits all three; the best time of each over the rounds counts. Stores are closed and
 * locations cleared outside the timed part. For comparing two builds' write paths quickly.
 * Usage: {@code WriteRatio [rows] [rounds] [dataDir]} ({@code -Dspark.bench.options=key=value,...}: more options for
 * the {@code lancecontext} write, as in {@link SparkWriteReadBenchmark}). Last line:
 * {@code RESULT spark_write write_vs_parquet=…
 * write_vs_fragment_append=…}.
 */
public final class WriteRatio {
  private WriteRatio() {}

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 4;
    Path data = Paths.get(args.length > 2 ? args[2] : "benchmarks/spark/target/write-ratio").toAbsolutePath();
    SparkWriteReadBenchmark.deleteTree(data);
    Files.createDirectories(data);
    SparkSession spark = SparkWriteReadBenchmark.session("WriteRatio");
    if (!SparkWriteReadBenchmark.EXTRA_OPTIONS.isEmpty()) {
      System.out.println("lancecontext write options: " + SparkWriteReadBenchmark.EXTRA_OPTIONS);
    }
    double parquet = Double.MAX_VALUE;
    double fragments = Double.MAX_VALUE;
    double store = Double.MAX_VALUE;
    try {
      Dataset<Row> gen = SparkWriteReadBenchmark.rollouts(spark, n, 0, 1, 0.0);
      gen.persist(StorageLevel.MEMORY_ONLY());
      gen.count();
      for (int r = 1; r <= rounds; r++) {
        Path pq = data.resolve("parquet");
        Path frag = data.resolve("fragments");
        Path lc = data.resolve("lancecontext");
        for (Path p : new Path[] {pq, frag, lc}) {
          SparkWriteReadBenchmark.deleteTree(p);
        }
        long t = System.nanoTime();
        gen.write().parquet(pq.toString());
        double tp = (System.nanoTime() - t) / 1e9;
        t = System.nanoTime();
        SparkWriteReadBenchmark.toFragments(gen).save(frag.toString());
        double tf = (System.nanoTime() - t) / 1e9;
        t = System.nanoTime();
        SparkWriteReadBenchmark.toStore(gen).save(lc.toString());
        double tl = (System.nanoTime() - t) / 1e9;
        ContextStore.closeAllResident();
        System.out.printf(Locale.ROOT, "round %d: parquet %.3f s, fragment-append %.3f s, lancecontext %.3f s%n", r, tp, tf,
            tl);
        parquet = Math.min(parquet, tp);
        fragments = Math.min(fragments, tf);
        store = Math.min(store, tl);
      }
    } finally {
      ContextStore.closeAllResident();
      spark.stop();
    }
    System.out.printf(Locale.ROOT, "RESULT spark_write write_vs_parquet=%.2f write_vs_fragment_append=%.2f%n",
        parquet / store, fragments / store);
  }
}
