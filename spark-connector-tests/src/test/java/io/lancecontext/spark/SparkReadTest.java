package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

  /**
   * {@code COUNT(*)} of a store whose rows no lifecycle rule or supersession hides is pushed down whole: one task
   * counts the view, no shuffle after it. With a filter, Spark counts what the scan returns.
   */
  @Test
  void countStarIsPushedDownWholeAndCountsTheView() {
    Dataset<Row> all = read().groupBy().count();
    String plan = all.queryExecution().executedPlan().toString();
    assertTrue(plan.contains("count(*) pushed") && !plan.contains("Exchange"), plan);
    assertEquals(expected.size(), all.collectAsList().get(0).getLong(0));
    assertEquals(1L, all.queryExecution().optimizedPlan().collectLeaves().head().stats().rowCount().get().longValue(),
        "the scan reports one row, the count");
    read().createOrReplaceTempView("counted");
    Dataset<Row> sql = spark.sql("SELECT count(*) AS n FROM counted");
    assertTrue(sql.queryExecution().executedPlan().toString().contains("count(*) pushed"));
    assertEquals(expected.size(), sql.collectAsList().get(0).getLong(0));

    Dataset<Row> some = read().where("reward > 1.5").groupBy().count();
    assertFalse(some.queryExecution().executedPlan().toString().contains("count(*) pushed"));
    assertEquals(expected.values().stream().filter(r -> r > 1.5).count(), some.collectAsList().get(0).getLong(0));
  }

  /** A count once the executor holds the base's key hashes (a lookup asks for them) counts the same rows. */
  @Test
  void countIsTheSameOnceTheExecutorHoldsTheBaseKeyHashes() throws Exception {
    assertEquals(1, read().where(org.apache.spark.sql.functions.col("id").equalTo(key(5))).collectAsList().size());
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (store.stats().keyHashes().fragments() < store.stats().fragments() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertEquals(store.stats().fragments(), store.stats().keyHashes().fragments(), store.stats().summary());
    }
    assertEquals(expected.size(), read().count());
    assertEquals(expected.size(), read().select("id").distinct().count(), "the same as a read of the keys");
  }

  /**
   * {@code read.splits} bounds the input partitions (each tier holding rows gets one at least, unless the bound is
   * one); by default three per core, here one base fragment and two buckets of fresh rows.
   */
  @Test
  void readSplitsBoundsTheInputPartitions() {
    assertEquals(3, read().rdd().getNumPartitions(), "default: the fragment and each bucket");
    Dataset<Row> one = spark.read().format("lancecontext").option("read.splits", "1").load(path);
    assertEquals(1, one.rdd().getNumPartitions(), "the whole view in one");
    assertEquals(expected.size(), one.collectAsList().size());
    Exception e = assertThrows(Exception.class,
        () -> spark.read().format("lancecontext").option("read.splits", "0").load(path).count());
    Throwable cause = rootCause(e);
    assertTrue(cause instanceof BadOptionException && cause.getMessage().contains("read.splits"), cause.toString());
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
  void limitReturnsThatManyRowsAndEachSplitOfTheSourceReturnsAtMostThatMany() throws Exception {
    assertEquals(7, read().limit(7).collectAsList().size());
    // the source itself, without Spark's global limit above it: a scan with limit 7 pushed, read split by split
    var table = (org.apache.spark.sql.connector.catalog.SupportsRead) new LanceContextDataSource().getTable(null,
        new org.apache.spark.sql.connector.expressions.Transform[0], Map.of("path", path));
    var builder = table.newScanBuilder(new org.apache.spark.sql.util.CaseInsensitiveStringMap(Map.of()));
    ((org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns) builder)
        .pruneColumns(new org.apache.spark.sql.types.StructType().add("id", "string"));
    assertTrue(((org.apache.spark.sql.connector.read.SupportsPushDownLimit) builder).pushLimit(7));
    var batch = builder.build().toBatch();
    var readers = batch.createReaderFactory();
    List<Integer> perSplit = new ArrayList<>();
    Set<String> keys = new TreeSet<>();
    for (var split : batch.planInputPartitions()) {
      int n = 0;
      try (var reader = readers.createColumnarReader(split)) {
        while (reader.next()) {
          var b = reader.get();
          for (int r = 0; r < b.numRows(); r++) {
            keys.add(b.column(0).getUTF8String(r).toString());
          }
          n += b.numRows();
        }
      }
      perSplit.add(n);
    }
    assertTrue(perSplit.stream().allMatch(n -> n <= 7), "each split returned at most the limit: " + perSplit);
    assertTrue(perSplit.stream().mapToInt(Integer::intValue).sum() >= 7, "enough rows for the limit: " + perSplit);
    assertTrue(expected.keySet().containsAll(keys), "rows of the view: " + keys);
  }

  @Test
  void theLimitAndThePrunedColumnsArePushedIntoTheScan() {
    Dataset<Row> limited = read().select("id", "reward").limit(7);
    String plan = limited.queryExecution().executedPlan().toString();
    assertTrue(plan.contains("columns=[id, reward]"), "only the selected columns are read: " + plan);
    assertTrue(plan.contains("limit=7"), "the limit is pushed: " + plan);
    Map<String, Long> m = SparkPlans.metrics(SparkPlans.during(spark, limited::collectAsList));
    // the fresh tier holds 130 keys; with the limit each split returns at most 7 rows (at most 2 splits here)
    assertTrue(m.get(SparkMetrics.FRESH_ROWS_READ) <= 14, "the splits applied the limit: " + m);
    String all = read().select("embedding").queryExecution().executedPlan().toString();
    assertTrue(all.contains("columns=[embedding]") && !all.contains("limit="), all);
  }

  @Test
  void statisticsReportTheRowsAndBytesOfTheStore() {
    org.apache.spark.sql.catalyst.plans.logical.Statistics stats = read().queryExecution().optimizedPlan().stats();
    assertTrue(stats.rowCount().isDefined(), "the scan reports a row count: " + stats);
    long rows = stats.rowCount().get().longValue();
    // an upper bound before the LSM resolution: 300 base rows plus 130 fresh keys; at least the 310 visible rows
    assertTrue(rows >= expected.size() && rows <= ROWS + ROWS / 3 + 30, "rows: " + stats);
    long bytes = stats.sizeInBytes().longValue();
    // 300 base rows of a 64-float vector alone take 77 kB; nothing near Spark's default (Long.MAX_VALUE)
    assertTrue(bytes > 64 * 4 * ROWS && bytes < 100L << 20, "bytes: " + stats);
  }

  @Test
  void keyLookupsReadByKeyFromTheBaseAndTheFreshTier() {
    Dataset<Row> one = read().where("id = 'k00120'").select("id", "reward");
    String plan = one.queryExecution().executedPlan().toString();
    assertTrue(plan.contains("keys=1") && !plan.contains("Filter "), "id = .. is read by key in core: " + plan);
    assertEquals(List.of("k00120=0.12"), one.collectAsList().stream().map(SparkReadTest::pair).toList());

    // k00120 is only in the base table, k00050 replaced in a flushed generation, k00155 in the WAL tail,
    // k00305 new in the WAL tail, k99999 nowhere
    Dataset<Row> some = read().where("id IN ('k00120', 'k00050', 'k00155', 'k00305', 'k99999')").select("id", "reward");
    String inPlan = some.queryExecution().executedPlan().toString();
    assertTrue(inPlan.contains("keys=5") && !inPlan.contains("Filter "), "id IN (..) is read by key in core: " + inPlan);
    List<Row> rows = new ArrayList<>();
    Map<String, Long> m = SparkPlans.metrics(SparkPlans.during(spark, () -> rows.addAll(some.collectAsList())));
    Map<String, Double> got = new HashMap<>();
    rows.forEach(r -> assertEquals(null, got.put(r.getString(0), r.getDouble(1)), "a key appears once: " + r));
    assertEquals(Map.of("k00050", 1.05, "k00155", 2.155, "k00305", 3.305, "k00120", 0.12), got, "the newest version of each");
    assertEquals(3L, m.get(SparkMetrics.FRESH_ROWS_READ), "three of them from the fresh tier: " + m);

    // a filter that may match any key is scanned
    String scan = read().where("id = 'k00120' OR reward > 3.0").queryExecution().executedPlan().toString();
    assertTrue(!scan.contains("keys="), scan);
  }

  private static String pair(Row r) {
    return r.getString(0) + "=" + r.getDouble(1);
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
