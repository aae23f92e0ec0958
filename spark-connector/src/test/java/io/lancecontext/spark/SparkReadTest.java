package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.StoreNotFoundException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code spark.read.format("lancecontext")} returns exactly the store's LSM view, with rows in every tier
 * (base table, flushed generations, WAL tail), and pushes down what core evaluates exactly.
 */
class SparkReadTest extends SparkTest {
  private static final int ROWS = 300;
  static String path;
  /** The expected view: key -> reward (after replacements and deletions). */
  static final Map<String, Double> expected = new HashMap<>();

  @BeforeAll
  static void fillEveryTier() {
    path = dir.resolve("rollouts").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "64", "shards", "2"))) {
      add(store, 0, ROWS, 0.0);          // -> base
      store.merge();
      add(store, 0, ROWS / 3, 1.0);      // replacements -> a flushed generation
      store.seal();
      add(store, ROWS / 2, ROWS / 2 + 20, 2.0);  // replacements in the WAL tail
      add(store, ROWS, ROWS + 10, 3.0);  // new keys in the WAL tail
    }
  }

  private static void add(ContextStore store, int from, int to, double rewardBase) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      double reward = rewardBase + i / 1000.0;
      rows.add(Map.of("id", key(i), "rollout_id", "r" + (i % 7), "sequence_order", i, "reward", reward,
          "embedding", vector(i)));
      expected.put(key(i), reward);
    }
    store.add(rows);
  }

  static String key(int i) {
    return String.format("k%05d", i);
  }

  static float[] vector(int i) {
    float[] v = new float[64];
    v[0] = i;
    v[63] = -i;
    return v;
  }

  private Dataset<Row> read() {
    return spark.read().format("lancecontext").load(path);
  }

  @Test
  void readReturnsExactlyTheLsmViewOfEveryTier() {
    List<Row> rows = read().select("id", "reward").collectAsList();
    assertEquals(expected.size(), rows.size());
    Map<String, Double> seen = new HashMap<>();
    for (Row r : rows) {
      assertEquals(null, seen.put(r.getString(0), r.getDouble(1)), "a key appears once: " + r.getString(0));
    }
    assertEquals(expected, seen);
  }

  @Test
  void countWithoutColumnsCountsVisibleRows() {
    assertEquals(expected.size(), read().count());
  }

  @Test
  void pushedFilterNeverReturnsReplacedRows() {
    // rewards below 1.0 are base rows; a third of them were replaced in a generation, others in the WAL tail
    Dataset<Row> low = read().filter("reward < 1.0").select("id");
    String plan = low.queryExecution().executedPlan().toString();
    assertTrue(plan.contains("reward < 1.0]"), "the filter is pushed: " + plan);
    assertTrue(!plan.contains("Filter "), "and Spark does not filter again: " + plan);
    Set<String> got = new TreeSet<>(low.as(org.apache.spark.sql.Encoders.STRING()).collectAsList());
    Set<String> want = new TreeSet<>();
    expected.forEach((k, v) -> {
      if (v < 1.0) {
        want.add(k);
      }
    });
    assertEquals(want, got);
  }

  @Test
  void filtersSparkKeepsStillApply() {
    Dataset<Row> even = read().filter("length(id) = 6 AND sequence_order % 2 = 0");
    assertTrue(even.queryExecution().executedPlan().toString().contains("Filter "), "Spark evaluates these");
    long n = even.count();
    long want = expected.keySet().stream().filter(k -> Integer.parseInt(k.substring(1)) % 2 == 0).count();
    assertEquals(want, n);
  }

  @Test
  void vectorColumnsReadAsFloatArrays() {
    Row r = read().filter("id = 'k00042'").select("embedding").first();
    List<Float> v = r.getList(0);
    assertEquals(64, v.size());
    float[] got = new float[64];
    for (int i = 0; i < 64; i++) {
      got[i] = v.get(i);
    }
    assertArrayEquals(vector(42), got);
  }

  @Test
  void limitReturnsThatManyRows() {
    assertEquals(7, read().limit(7).collectAsList().size());
  }

  @Test
  void aMissingStoreFailsNamingIt() {
    Exception e = assertThrows(Exception.class,
        () -> spark.read().format("lancecontext").load(dir.resolve("nothing-here").toString()).count());
    assertTrue(rootCause(e) instanceof StoreNotFoundException, e.toString());
  }

  @Test
  void anUnknownOptionFailsNamingIt() {
    Exception e = assertThrows(Exception.class,
        () -> spark.read().format("lancecontext").option("wrte.batch-rows", "5").load(path).count());
    Throwable cause = rootCause(e);
    assertTrue(cause instanceof BadOptionException && cause.getMessage().contains("wrte.batch-rows"), cause.toString());
  }

  private static Throwable rootCause(Throwable t) {
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }
}
