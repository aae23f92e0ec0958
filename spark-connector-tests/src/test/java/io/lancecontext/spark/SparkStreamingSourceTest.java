package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ScanSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.junit.jupiter.api.Test;

/**
 * The Structured Streaming source ({@code spark.readStream.format("lancecontext")}): offsets are snapshot tokens,
 * each micro-batch what changed between two of them. Across restarts from the checkpoint, merges, compaction and
 * garbage collection, the batches replayed onto an empty map give the store's view, and no version of a key is
 * delivered twice.
 */
class SparkStreamingSourceTest extends SparkTest {
  /** Rows of each batch, by query and batch id: a batch replayed must deliver the same rows. */
  private static final Map<String, Map<Long, List<Row>>> DELIVERED = new ConcurrentHashMap<>();

  private static StreamingQuery start(String name, String path, String checkpoint, String since) throws Exception {
    return start(name, path, checkpoint, since, Map.of());
  }

  private static StreamingQuery start(String name, String path, String checkpoint, String since,
      Map<String, String> options) throws Exception {
    var reader = spark.readStream().format("lancecontext").options(options);
    if (since != null) {
      reader = reader.option("since", since);
    }
    Map<Long, List<Row>> batches = DELIVERED.computeIfAbsent(name, n -> new ConcurrentHashMap<>());
    return reader.load(path).select("id", "token_count", ScanSpec.DELETED).writeStream()
        .option("checkpointLocation", checkpoint)
        .foreachBatch((VoidFunction2<Dataset<Row>, Long>) (df, id) -> {
          List<Row> rows = df.collectAsList();
          List<Row> before = batches.putIfAbsent(id, rows);
          if (before != null && !new HashSet<>(before).equals(new HashSet<>(rows))) {
            throw new IllegalStateException("batch " + id + " replayed with other rows: " + before + " / " + rows);
          }
        }).start();
  }

  /** The batches of {@code name} applied in order onto an empty map; fails if a version comes twice. */
  private static Map<String, Object> replay(String name) {
    Map<String, Object> view = new TreeMap<>();
    Set<String> versions = new HashSet<>();
    new TreeMap<>(DELIVERED.get(name)).forEach((id, rows) -> {
      for (Row r : rows) {
        if (r.getBoolean(2)) {
          view.remove(r.getString(0));
        } else {
          assertTrue(versions.add(r.getString(0) + "=" + r.getInt(1)), "delivered twice: " + r + " in batch " + id);
          view.put(r.getString(0), r.getInt(1));
        }
      }
    });
    return view;
  }

  private static Map<String, Object> view(ContextStore store) {
    Map<String, Object> m = new TreeMap<>();
    store.scanRecords(ScanSpec.all().withColumns(List.of("id", "token_count")))
        .forEach(r -> m.put((String) r.get("id"), r.get("token_count")));
    return m;
  }

  private int value;

  private void write(ContextStore store, int round) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      rows.add(Map.of("id", "k" + ((round * 7 + i * 3) % 40), "token_count", ++value));
    }
    store.add(rows.stream().collect(java.util.stream.Collectors.toMap(r -> (String) r.get("id"), r -> r, (a, b) -> b))
        .values().stream().toList());
    store.delete(List.of("k" + (round * 5 % 40), "k" + (round * 11 % 40)));
  }

  @Test
  void everyVersionIsDeliveredOnceAcrossRestartsMergesCompactionAndGc() throws Exception {
    String path = dir.resolve("stream-src").toString();
    String checkpoint = dir.resolve("stream-src-checkpoint").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "context", "schema.embedding-dim", "4",
        "shards", "2", "gc.grace", "1s", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      write(store, 0);
      int round = 1;
      for (int run = 0; run < 3; run++) {  // the query is stopped and restarted from its checkpoint twice
        StreamingQuery q = start("main", path, checkpoint, null);
        try {
          q.processAllAvailable();
          for (int i = 0; i < 3; i++, round++) {
            write(store, round);
            q.processAllAvailable();
            switch (round % 3) {
              case 0 -> {
                store.seal();
                store.merge();
              }
              case 1 -> {
                store.flush();
                store.compact();
                Thread.sleep(1_100);
                store.gc();
              }
              default -> { }
            }
          }
          assertEquals(view(store), replay("main"), "run " + run + ": " + new TreeMap<>(DELIVERED.get("main")));
        } finally {
          q.stop();
        }
        // written while the query is down: delivered after the restart
        write(store, round++);
        store.seal();
        store.merge();
      }
      StreamingQuery q = start("main", path, checkpoint, null);
      try {
        q.processAllAvailable();
      } finally {
        q.stop();
      }
      assertEquals(view(store), replay("main"));
      assertTrue(DELIVERED.get("main").size() > 10, "batches: " + DELIVERED.get("main").size());

      // a query starting after a snapshot delivers only what changed since
      String since = store.snapshot().token();
      write(store, round);
      Map<String, Object> before = new TreeMap<>(view(store));
      StreamingQuery late = start("late", path, dir.resolve("stream-src-late").toString(), since);
      try {
        late.processAllAvailable();
      } finally {
        late.stop();
      }
      Map<String, Object> changed = replay("late");
      assertTrue(!changed.isEmpty() && changed.size() <= 12, "only the last write's keys: " + changed);
      changed.forEach((k, v) -> assertEquals(before.get(k), v, k));
    }
  }

  private static long streamTags(ContextStore store) {
    return store.tags().stream().filter(t -> t.tag().startsWith("stream-")).count();
  }

  /**
   * A query stopped for longer than {@code snapshot.retention} (a night, in production) resumes: its offsets are
   * tagged until a later one is committed, and only the query's newest offsets stay tagged.
   */
  @Test
  void aQueryStoppedLongerThanSnapshotRetentionResumesFromItsTaggedOffsets() throws Exception {
    String path = dir.resolve("stream-night").toString();
    String checkpoint = dir.resolve("stream-night-checkpoint").toString();
    Map<String, String> retention = Map.of("snapshot.retention", "2s");
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "context", "schema.embedding-dim", "4",
        "shards", "2", "gc.grace", "1s", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      write(store, 0);
      StreamingQuery q = start("night", path, checkpoint, null, retention);
      try {
        for (int round = 1; round <= 4; round++) {
          q.processAllAvailable();
          write(store, round);
        }
        q.processAllAvailable();
      } finally {
        q.stop();
      }
      long tags = streamTags(store);
      assertTrue(tags >= 1 && tags <= 2, "the query's newest offsets only: " + store.tags());
      write(store, 5);  // while the query is down, past every untagged snapshot's retention and gc.grace
      store.flush();
      store.compact();
      Thread.sleep(3_000);
      store.gc();
      StreamingQuery resumed = start("night", path, checkpoint, null, retention);
      try {
        resumed.processAllAvailable();
      } finally {
        resumed.stop();
      }
      assertTrue(resumed.exception().isEmpty(), () -> String.valueOf(resumed.exception()));
      assertEquals(view(store), replay("night"));
      assertTrue(streamTags(store) <= 2, "the older offsets' tags are dropped: " + store.tags());
    }
  }

  /** A writer upserts, deletes and runs maintenance the whole time; the query is stopped mid-stream twice. */
  @Test
  void aQueryStoppedWhileAWriterRunsResumesWithoutLossOrDuplicates() throws Exception {
    String path = dir.resolve("stream-live").toString();
    String checkpoint = dir.resolve("stream-live-checkpoint").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "context", "schema.embedding-dim", "4",
        "shards", "2", "gc.grace", "1s", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      write(store, 0);
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
      Thread writer = new Thread(() -> {
        try {
          for (int round = 1; !stop.get(); round++) {
            write(store, round);
            if (round % 4 == 0) {
              store.seal();
              store.merge();
            }
            if (round % 15 == 0) {
              store.compact();
              store.gc();
            }
            Thread.sleep(100);  // merges about every half second; faster only takes CPU from the query on 2 cores
          }
        } catch (Throwable t) {
          failed.set(t);
        }
      });
      writer.start();
      try {
        for (int run = 0; run < 3; run++) {
          int before = DELIVERED.getOrDefault("live", Map.of()).size();
          StreamingQuery q = start("live", path, checkpoint, null);
          try {
            Thread.sleep(2_500);
            // on a loaded machine a run's first batch may take longer: each run delivers one before it is stopped
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            while (DELIVERED.getOrDefault("live", Map.of()).size() <= before && System.nanoTime() < deadline) {
              Thread.sleep(50);
            }
          } finally {
            q.stop();  // mid-stream: a batch may be running
          }
          assertTrue(q.exception().isEmpty(), () -> String.valueOf(q.exception()));
        }
      } finally {
        stop.set(true);
        writer.join();
      }
      assertEquals(null, failed.get());
      StreamingQuery q = start("live", path, checkpoint, null);
      try {
        q.processAllAvailable();
      } finally {
        q.stop();
      }
      assertEquals(view(store), replay("live"));
      assertTrue(DELIVERED.get("live").size() > 3, "batches: " + DELIVERED.get("live").size());
    }
  }
}
