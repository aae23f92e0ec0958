package io.lancecontext.examples;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.StoreStats;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The quickstart: an RL rollout log in a local {@code rollout} store. Writes rollouts the way workers
 * log them (small durable adds), reads them back (lookups, filters, counts), upserts, merges the
 * fresh tier into the base table and prints what it did. Usage: {@code QuickstartDemo [store-dir]}.
 */
public final class QuickstartDemo {
  private QuickstartDemo() {}

  public static void main(String[] args) {
    Path dir = Paths.get(args.length > 0 ? args[0] : "demo-store").toAbsolutePath();
    int rollouts = 100;
    int steps = 30;
    long started = System.nanoTime();
    System.out.println("lancecontext quickstart: rollout store at " + dir);

    Map<String, String> options = Map.of(
        "path", dir.toString(),
        "schema", "rollout",            // a built-in schema: 36 columns, key 'id'
        "schema.embedding-dim", "32");  // small vectors for the demo (default 1536)
    try (ContextStore store = ContextStore.open(options)) {
      long before = store.count();
      System.out.printf("opened: %d shards, %d columns, key '%s', %d records already there%n", store.shards(),
          store.spec().columns().size(), store.spec().key(), before);

      // 1. workers log rollouts: one add per rollout, durable and visible to every process on return
      Random random = new Random(7);
      String run = "run-" + Instant.now().getEpochSecond();
      long t = System.nanoTime();
      for (int r = 0; r < rollouts; r++) {
        store.add(rollout(random, run, r, steps));
      }
      double seconds = (System.nanoTime() - t) / 1e9;
      System.out.printf("1. wrote %d rollouts x %d steps = %d records in %d adds (%.2f s, %.0f records/s)%n", rollouts,
          steps, rollouts * steps, rollouts, seconds, rollouts * steps / seconds);

      // 2. read them back
      String someId = run + "-r42-s7";
      Map<String, Object> one = store.get(someId).orElseThrow();
      System.out.printf("2. get(%s): rollout %s, step %s, reward %.3f, %d completion tokens%n", someId,
          one.get("rollout_id"), one.get("sequence_order"), (Double) one.get("reward"),
          ((List<?>) one.get("completion_tokens")).size());
      Predicate finalSteps = Predicate.and(Predicate.eq("done", true), Predicate.startsWith("id", run));
      List<Map<String, Object>> finished = store.scanRecords(ScanSpec.all()
          .withColumns(List.of("rollout_id", "reward")).withFilter(finalSteps));
      double mean = finished.stream().mapToDouble(m -> (Double) m.get("reward")).average().orElse(0);
      System.out.printf("   final steps of this run: %d rollouts, mean final reward %.3f%n", finished.size(), mean);
      long highReward = store.count(Predicate.and(Predicate.startsWith("id", run),
          Predicate.compare("reward", Predicate.Op.GT, 1.0)));
      System.out.printf("   records with reward > 1.0: %d%n", highReward);

      // 3. upserts: re-scoring a rollout rewrites its records by key; readers see only the newest version
      List<Map<String, Object>> rescored = new ArrayList<>();
      for (int s = 0; s < steps; s++) {
        Map<String, Object> m = new HashMap<>();
        m.put("id", run + "-r42-s" + s);
        m.put("rollout_id", run + "-r42");
        m.put("sequence_order", s);
        m.put("reward", 10.0);
        m.put("done", s == steps - 1);
        rescored.add(m);
      }
      store.add(rescored);
      System.out.printf("3. re-scored rollout 42: get(%s).reward = %.1f; records of the run: %d (no duplicates)%n",
          someId, (Double) store.get(someId).orElseThrow().get("reward"),
          store.count(Predicate.startsWith("id", run)));

      // 4. maintenance: seal the fresh tier and merge it into the base table
      StoreStats fresh = store.stats();
      store.seal();
      MergeResult merged = store.merge();
      StoreStats after = store.stats();
      System.out.printf("4. merged %d generations (%d rows) into base version %d: fresh keys %d -> %d, base rows %d%n",
          merged.generationCount(), merged.rows(), after.baseVersion(), fresh.freshRows(), after.freshRows(),
          after.baseRows());
      System.out.printf("   after the merge get(%s).reward = %.1f; total records %d (were %d before this run)%n", someId,
          (Double) store.get(someId).orElseThrow().get("reward"), store.count(), before);
      System.out.println("   " + after.summary());
    }
    ContextStore.closeAllResident();
    System.out.printf("done in %.1f s; the store stays in %s (delete it to start over)%n",
        (System.nanoTime() - started) / 1e9, dir);
  }

  private static List<Map<String, Object>> rollout(Random random, String run, int r, int steps) {
    List<Map<String, Object>> out = new ArrayList<>();
    double value = 0;
    for (int s = 0; s < steps; s++) {
      Map<String, Object> m = new HashMap<>();
      m.put("id", run + "-r" + r + "-s" + s);
      m.put("rollout_id", run + "-r" + r);
      m.put("sequence_order", s);
      m.put("group_id", run + "-g" + (r % 10));
      m.put("prompt_id", "p" + (r % 25));
      m.put("environment", "math-v1");
      m.put("policy_version", 3L);
      m.put("model_name", "policy-7b");
      m.put("worker_id", "worker-" + (r % 4));
      m.put("actor", s % 2 == 0 ? "policy" : "environment");
      m.put("text_payload", "step " + s + " of rollout " + r);
      m.put("completion_tokens", List.of(random.nextInt(32_000), random.nextInt(32_000), random.nextInt(32_000)));
      m.put("logprobs", List.of((float) -random.nextDouble(), (float) -random.nextDouble(), (float) -random.nextDouble()));
      double reward = random.nextGaussian();
      value = 0.9 * value + reward;
      m.put("reward", reward);
      m.put("value", value);
      m.put("done", s == steps - 1);
      m.put("created_at", Instant.now());
      float[] e = new float[32];
      for (int d = 0; d < e.length; d++) {
        e[d] = random.nextFloat();
      }
      m.put("embedding", e);
      m.put("split", "train");
      out.add(m);
    }
    return out;
  }
}
