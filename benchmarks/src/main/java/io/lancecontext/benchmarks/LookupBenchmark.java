package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.result.StoreStats;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.memwal.ExecutionPlan;
import org.lance.memwal.LsmPointLookupPlanner;
import org.lance.memwal.ShardSnapshot;

/**
 * Point lookups on a store holding 1,000,000 merged rows plus 20 unmerged generations (each 25 updates
 * of base rows and 25 new rows): the store's {@code get} against lance-core's {@code LsmPointLookupPlanner}
 * on the same data, every answer checked against a model of the newest version of each key. The planner gets
 * the base table and, for each shard ({@code stats().shards()}: its id and merged watermark), the generations
 * above the watermark: the directories lance-core 7.0.0 writes for them, {@code _mem_wal/<shard>/<hash>_gen_<n>}.
 *
 * <p>Usage: {@code LookupBenchmark [baseRows=1000000] [generations=20] [lookups=1000]}. Last line:
 * {@code RESULT lookup p50_ms=.. speedup_vs_planner=.. wrong=..}.
 */
public final class LookupBenchmark {
  private static final String SPEC = "{\"columns\":["
      + "{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"name\",\"type\":\"string\"},"
      + "{\"name\":\"category\",\"type\":\"string\"},{\"name\":\"source\",\"type\":\"string\"},"
      + "{\"name\":\"body\",\"type\":\"string\"},{\"name\":\"seq\",\"type\":\"int64\"},"
      + "{\"name\":\"version\",\"type\":\"int64\"},{\"name\":\"score\",\"type\":\"float64\"},"
      + "{\"name\":\"ts\",\"type\":\"timestamp\"},{\"name\":\"vec\",\"type\":\"vector\",\"dim\":64,\"metric\":\"l2\"}]}";

  private LookupBenchmark() {}

  public static void main(String[] args) throws Exception {
    int baseRows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int generations = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    int lookups = args.length > 2 ? Integer.parseInt(args[2]) : 1_000;
    Path dir = Bench.scratch("lookup");
    Random random = new Random(42);
    Map<String, Long> model = new HashMap<>();
    Map<String, String> options = Map.of("path", dir.toString(), "schema", SPEC, "shards", "1",
        "merge.trigger.generations", "100000", "merge.trigger.interval", "24h");
    Bench.log("LookupBenchmark: %d base rows, %d unmerged generations, %d lookups (1 shard)", baseRows, generations, lookups);
    try (ContextStore store = ContextStore.open(options)) {
      long t = System.nanoTime();
      int batch = 10_000;
      for (int start = 0; start < baseRows; start += batch) {
        List<Map<String, Object>> rows = new ArrayList<>(batch);
        for (int i = start; i < Math.min(baseRows, start + batch); i++) {
          rows.add(row(random, "base-" + i, i, 0));
          model.put("base-" + i, 0L);
        }
        store.add(rows);
        if ((start / batch) % 20 == 19) {
          store.seal();
          store.merge();
        }
      }
      // everything into the base: one merge is bounded (merge.max-bytes), flush merges until nothing is left
      if (!store.flush().complete()) {
        throw new AssertionError("the base rows did not reach the base table within merge.flush-timeout");
      }
      store.compact();  // one indexed base table
      Bench.log("loaded and merged %d rows in %.1f s", baseRows, (System.nanoTime() - t) / 1e9);
      for (int g = 0; g < generations; g++) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
          String key = "base-" + random.nextInt(baseRows);
          long version = model.get(key) + 1;
          rows.add(row(random, key, -1, version));
          model.put(key, version);
        }
        for (int i = 0; i < 25; i++) {
          String key = "new-" + g + "-" + i;
          rows.add(row(random, key, -1, 100));
          model.put(key, 100L);
        }
        store.add(rows);
        store.seal();
      }
      StoreStats stats = store.stats();
      Bench.log("store: %s", stats.summary());
      if (stats.unmergedGenerations() != generations) {
        throw new AssertionError("expected " + generations + " unmerged generations, found " + stats.unmergedGenerations());
      }

      List<String> fresh = new ArrayList<>();
      model.forEach((k, v) -> {
        if (v > 0) {
          fresh.add(k);
        }
      });
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < lookups; i++) {
        keys.add(i % 4 == 0 ? fresh.get(random.nextInt(fresh.size())) : "base-" + random.nextInt(baseRows));
      }
      for (int i = 0; i < 50; i++) {
        store.get(keys.get(i));  // warm-up
      }
      Bench.Latencies ours = new Bench.Latencies();
      int wrong = 0;
      for (String key : keys) {
        long t0 = System.nanoTime();
        Map<String, Object> r = store.get(key).orElse(null);
        ours.add(System.nanoTime() - t0);
        if (r == null || !model.get(key).equals(r.get("version"))) {
          wrong++;
        }
      }
      Bench.log("store get: %s; wrong answers %d of %d", ours.summary(), wrong, lookups);

      Bench.Latencies planner = new Bench.Latencies();
      int plannerWrong = 0;
      try (BufferAllocator allocator = new RootAllocator();
          Dataset base = Dataset.open().allocator(allocator).uri(store.uri()).build()) {
        List<ShardSnapshot> snapshots = new ArrayList<>();
        for (StoreStats.Shard shard : stats.shards()) {
          TreeMap<Long, String> sealed = generations(dir, shard.shardId());
          ShardSnapshot snapshot = new ShardSnapshot(shard.shardId())
              .withCurrentGeneration(sealed.isEmpty() ? 0 : sealed.lastKey() + 1);
          int unmerged = 0;
          for (var g : sealed.tailMap(shard.mergedWatermark(), false).entrySet()) {
            snapshot = snapshot.withFlushedGeneration(g.getKey(), g.getValue());
            unmerged++;
          }
          if (unmerged != shard.unmergedGenerations()) {
            throw new AssertionError("shard " + shard.shardId() + ": " + unmerged + " generation directories above "
                + "the merged watermark " + shard.mergedWatermark() + ", the store counts " + shard.unmergedGenerations());
          }
          snapshots.add(snapshot);
        }
        try (LsmPointLookupPlanner p = new LsmPointLookupPlanner(base, snapshots)) {
          for (int i = 0; i < 50; i++) {
            lookup(p, allocator, keys.get(i));
          }
          for (String key : keys) {
            long t0 = System.nanoTime();
            Long version = lookup(p, allocator, key);
            planner.add(System.nanoTime() - t0);
            if (!model.get(key).equals(version)) {
              plannerWrong++;
            }
          }
        }
      }
      Bench.log("LsmPointLookupPlanner (reused): %s; wrong answers %d of %d", planner.summary(), plannerWrong, lookups);
      double speedup = planner.percentileMs(50) / ours.percentileMs(50);
      Bench.log("RESULT lookup p50_ms=%.2f speedup_vs_planner=%.1f wrong=%d", ours.percentileMs(50), speedup, wrong);
    }
    ContextStore.closeAllResident();
    if (!Boolean.getBoolean("bench.keep")) {
      Bench.delete(dir);
    }
  }

  /** The shard's sealed generations on disk: number → directory name ({@code <hash>_gen_<n>}). */
  private static TreeMap<Long, String> generations(Path store, String shardId) throws IOException {
    TreeMap<Long, String> out = new TreeMap<>();
    Path shard = store.resolve("_mem_wal").resolve(shardId);
    if (Files.isDirectory(shard)) {
      try (Stream<Path> dirs = Files.list(shard)) {
        dirs.map(p -> p.getFileName().toString()).filter(n -> n.matches("[0-9a-f]+_gen_[0-9]+"))
            .forEach(n -> out.put(Long.parseLong(n.substring(n.indexOf("_gen_") + 5)), n));
      }
    }
    return out;
  }

  private static Long lookup(LsmPointLookupPlanner planner, BufferAllocator allocator, String key) throws Exception {
    try (VarCharVector k = new VarCharVector("id", allocator)) {
      k.allocateNew();
      k.setSafe(0, key.getBytes(StandardCharsets.UTF_8));
      k.setValueCount(1);
      try (ExecutionPlan plan = planner.planLookup(k); ArrowReader reader = plan.toReader()) {
        while (reader.loadNextBatch()) {
          VectorSchemaRoot root = reader.getVectorSchemaRoot();
          if (root.getRowCount() > 0) {
            return ((BigIntVector) root.getVector("version")).get(0);
          }
        }
        return null;
      }
    }
  }

  private static Map<String, Object> row(Random random, String id, long seq, long version) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", id);
    r.put("name", "name-" + random.nextInt(1000));
    r.put("category", "c" + random.nextInt(20));
    r.put("source", "s" + random.nextInt(5));
    r.put("body", Bench.text(random, 100));
    r.put("seq", seq);
    r.put("version", version);
    r.put("score", random.nextDouble());
    r.put("ts", Instant.ofEpochSecond(1_700_000_000L + random.nextInt(10_000_000)));
    float[] v = new float[64];
    for (int d = 0; d < 64; d++) {
      v[d] = random.nextFloat();
    }
    r.put("vec", v);
    return r;
  }
}
