package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ScanSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;
import org.junit.jupiter.api.Test;

/**
 * The Structured Streaming source under SIGKILL: a driver JVM streaming from a store while another process
 * upserts, deletes, merges, compacts and collects garbage is killed at random moments (mid-batch, between a batch's
 * offset and its commit, while idle) and restarted from its checkpoint. The batches it delivered, replayed in
 * order, give the store's view, no version of a key comes twice, and a batch Spark re-runs after a kill
 * delivers the same rows.
 */
class SparkStreamingKillTest extends SparkTest {
  private static final int KILLS = 2;

  @Test
  void aDriverKilledAtRandomMomentsResumesFromItsCheckpointWithoutLossOrDuplicates() throws Exception {
    String path = dir.resolve("kill-src").toString();
    Path checkpoint = dir.resolve("kill-checkpoint");
    Path out = Files.createDirectories(dir.resolve("kill-batches"));
    Random random = new Random(11);
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "context", "schema.embedding-dim", "4",
        "shards", "2", "gc.grace", "1s", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      Writes writes = new Writes(store);
      writes.round(0);
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> failed = new AtomicReference<>();
      Thread writer = new Thread(() -> {
        try {
          for (int round = 1; !stop.get(); round++) {
            writes.round(round);
            if (round % 4 == 0) {
              store.seal();
              store.merge();
            }
            if (round % 15 == 0) {
              store.compact();
              store.gc();
            }
            // a round every ~150 ms (a merge about every 0.6 s) is change enough for 100 ms triggers; a faster
            // writer only took CPU from the drivers' start on 2 cores
            Thread.sleep(150);
          }
        } catch (Throwable t) {
          failed.set(t);
        }
      }, "writer");
      writer.start();
      try {
        for (int kill = 0; kill < KILLS; kill++) {
          try (Driver driver = Driver.start(path, checkpoint, out, dir.resolve("kill-driver-" + kill + ".log"))) {
            driver.awaitBatches(2 + random.nextInt(3));
            Thread.sleep(random.nextInt(400));  // somewhere in a batch, or between two
            driver.kill();
          }
        }
      } finally {
        stop.set(true);
        writer.join();
      }
      assertEquals(null, failed.get());
      try (Driver last = Driver.start(path, checkpoint, out, dir.resolve("kill-driver-last.log"))) {
        last.finish();
      }
      List<Path> mismatched;
      try (Stream<Path> files = Files.list(out)) {
        mismatched = files.filter(p -> p.getFileName().toString().startsWith("mismatch-")).toList();
      }
      assertEquals(List.of(), mismatched, "a batch re-run after a kill delivered other rows");
      Map<Long, List<String>> batches = batches(out);
      // at least: two batches from the first driver, one new batch from each later killed driver (its first may
      // re-run the batch its predecessor was killed in), and one from the last, which reads what the writer added
      // while no driver ran
      assertTrue(batches.size() >= KILLS + 2, "batches: " + batches.keySet());
      assertEquals(view(store), replay(batches));
    }
  }

  /** The batches the drivers wrote ({@code batch-<id>}: one {@code id,token_count,deleted} line per row), by id. */
  private static Map<Long, List<String>> batches(Path out) throws IOException {
    Map<Long, List<String>> batches = new TreeMap<>();
    try (Stream<Path> files = Files.list(out)) {
      for (Path f : files.filter(p -> p.getFileName().toString().startsWith("batch-")).toList()) {
        batches.put(Long.parseLong(f.getFileName().toString().substring(6)), Files.readAllLines(f));
      }
    }
    return batches;
  }

  /** The batches applied in order onto an empty map; fails if a version of a key is delivered twice. */
  private static Map<String, Integer> replay(Map<Long, List<String>> batches) {
    Map<String, Integer> view = new TreeMap<>();
    Set<String> versions = new HashSet<>();
    batches.forEach((id, rows) -> {
      for (String row : rows) {
        String[] f = row.split(",");
        if (Boolean.parseBoolean(f[2])) {
          view.remove(f[0]);
        } else {
          assertTrue(versions.add(f[0] + "=" + f[1]), "delivered twice: " + row + " in batch " + id);
          view.put(f[0], Integer.parseInt(f[1]));
        }
      }
    });
    return view;
  }

  private static Map<String, Integer> view(ContextStore store) {
    Map<String, Integer> m = new TreeMap<>();
    store.scanRecords(ScanSpec.all().withColumns(List.of("id", "token_count")))
        .forEach(r -> m.put((String) r.get("id"), (Integer) r.get("token_count")));
    return m;
  }

  /** Upserts of 12 of 40 keys with ever-growing values, then two deletions, per round. */
  private static final class Writes {
    private final ContextStore store;
    private int value;

    Writes(ContextStore store) {
      this.store = store;
    }

    void round(int round) {
      Map<String, Map<String, Object>> rows = new LinkedHashMap<>();
      for (int i = 0; i < 12; i++) {
        String key = "k" + ((round * 7 + i * 3) % 40);
        rows.put(key, Map.of("id", key, "token_count", ++value));
      }
      store.add(new ArrayList<>(rows.values()));
      store.delete(List.of("k" + (round * 5 % 40), "k" + (round * 11 % 40)));
    }
  }

  /** The streaming driver in its own JVM, and this test's end of it. */
  static final class Driver implements AutoCloseable {
    private final Process process;
    private final BufferedReader stdout;
    private final Path log;

    private Driver(Process process, Path log) {
      this.process = process;
      this.log = log;
      this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    static Driver start(String path, Path checkpoint, Path out, Path log) throws IOException {
      ProcessBuilder pb = ChildLogs.driver(log, Main.class, path, checkpoint.toString(), out.toString());
      return new Driver(pb.start(), log);
    }

    /** Waits until the driver has delivered {@code n} more batches. */
    void awaitBatches(int n) throws IOException {
      for (int seen = 0; seen < n; ) {
        String line = stdout.readLine();
        assertTrue(line != null, () -> "the driver ended: " + ChildLogs.tail(log, 40));
        if (line.startsWith("batch ")) {
          seen++;
        }
      }
    }

    void kill() throws InterruptedException {
      process.destroyForcibly();  // SIGKILL: no stop, no commit, no cleanup
      assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the driver died");
      assertEquals(137, process.exitValue(), "killed by SIGKILL");
    }

    /** Tells the driver to process everything available and stop, and waits for it to exit. */
    void finish() throws Exception {
      try (Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8)) {
        in.write("finish\n");
      }
      String line;
      while ((line = stdout.readLine()) != null && !line.equals("done")) {
        // batches delivered on the way
      }
      assertEquals("done", line, () -> ChildLogs.tail(log, 40));
      assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the driver exited");
      assertEquals(0, process.exitValue(), () -> ChildLogs.tail(log, 40));
    }

    @Override
    public void close() throws InterruptedException {
      if (process.isAlive()) {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * The driver: streams {@code args[0]} with checkpoint {@code args[1]}, writing each batch to
   * {@code args[2]/batch-<id>} (a re-run batch is compared with what its first run wrote: a difference is written
   * to {@code mismatch-<id>}) and printing {@code batch <id>}; on "finish" from stdin it processes what is available,
   * stops and prints {@code done}.
   */
  public static final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
      SparkSession s = SparkSession.builder().master("local[2]").appName("stream-killed")
          .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
          .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1").getOrCreate();
      Path out = Path.of(args[2]);
      StreamingQuery q = s.readStream().format("lancecontext").load(args[0])
          .select("id", "token_count", ScanSpec.DELETED).writeStream()
          .option("checkpointLocation", args[1]).trigger(Trigger.ProcessingTime(100))
          .foreachBatch((VoidFunction2<Dataset<Row>, Long>) (df, id) -> deliver(out, id, df.collectAsList()))
          .start();
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String command = stdin.readLine();  // blocks until "finish" (or until the test kills this JVM)
      if ("finish".equals(command)) {
        q.processAllAvailable();
        q.stop();
        System.out.println("done");
      }
      s.stop();
    }

    private static void deliver(Path out, long id, List<Row> rows) throws IOException {
      List<String> lines = rows.stream().map(r -> r.getString(0) + "," + r.get(1) + "," + r.getBoolean(2)).sorted()
          .toList();
      Path batch = out.resolve("batch-" + id);
      if (Files.exists(batch)) {
        if (!new HashSet<>(Files.readAllLines(batch)).equals(new HashSet<>(lines))) {
          Files.write(out.resolve("mismatch-" + id), lines);
        }
      } else {
        Path tmp = out.resolve(".tmp-" + id);
        Files.write(tmp, lines);
        Files.move(tmp, batch, StandardCopyOption.ATOMIC_MOVE);
      }
      System.out.println("batch " + id);
      System.out.flush();
    }
  }
}
