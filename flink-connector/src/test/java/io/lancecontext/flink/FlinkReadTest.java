package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.StoreClosedException;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.flink.source.LanceContextSplit;
import io.lancecontext.flink.source.LanceContextSplitSerializer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.util.Collector;
import org.apache.flink.api.common.JobID;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.table.api.TableResult;
import java.util.function.BiPredicate;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink SQL over a store ({@code 'connector' = 'lancecontext'}) returns exactly its LSM view, with rows in
 * every tier, pushes filters into core, and joins on the key through lookups.
 */
class FlinkReadTest {
  private static final int ROWS = 200;

  /** For the rows a scan's source operator emitted (limit pushdown). */
  static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.withReporter(2, REPORTER);

  @TempDir
  static Path dir;
  static String path;
  static final Map<String, Double> expected = new TreeMap<>();

  @BeforeAll
  static void fillEveryTier() {
    path = dir.resolve("rollouts").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "8",
        "shards", "2", "storage.aws_secret_access_key", "s3cr3t-value"))) {
      add(store, 0, ROWS, 0.0);
      store.merge();
      add(store, 0, ROWS / 4, 1.0);
      store.seal();
      add(store, ROWS / 2, ROWS / 2 + 10, 2.0);
      add(store, ROWS, ROWS + 5, 3.0);
    }
  }

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static void add(ContextStore store, int from, int to, double base) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      double reward = base + i / 1000.0;
      rows.add(Map.of("id", key(i), "rollout_id", "r" + (i % 3), "reward", reward, "embedding", vector(i)));
      expected.put(key(i), reward);
    }
    store.add(rows);
  }

  static String key(int i) {
    return String.format("k%04d", i);
  }

  static float[] vector(int i) {
    float[] v = new float[8];
    v[0] = i;
    v[7] = -i;
    return v;
  }

  private static TableEnvironment tables(boolean batch) {
    TableEnvironment env = TableEnvironment.create(
        batch ? EnvironmentSettings.inBatchMode() : EnvironmentSettings.inStreamingMode());
    env.executeSql("CREATE TABLE rollouts (id STRING, rollout_id STRING, reward DOUBLE, embedding ARRAY<FLOAT NOT NULL>,"
        + " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'lancecontext', 'path' = '" + path + "')");
    return env;
  }

  private static List<Row> collect(TableEnvironment env, String sql) throws Exception {
    List<Row> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
      it.forEachRemaining(rows::add);
    }
    return rows;
  }

  @Test
  void scanReturnsExactlyTheLsmViewOfEveryTier() throws Exception {
    Map<String, Double> seen = new HashMap<>();
    for (Row r : collect(tables(true), "SELECT id, reward FROM rollouts")) {
      assertEquals(null, seen.put((String) r.getField(0), (Double) r.getField(1)), "a key appears once");
    }
    assertEquals(expected, new TreeMap<>(seen));
  }

  @Test
  void countStarCountsVisibleRows() throws Exception {
    assertEquals((long) expected.size(), collect(tables(true), "SELECT COUNT(*) FROM rollouts").get(0).getField(0));
  }

  /** The rows of the model (key to reward) whose key index and reward pass {@code test}. */
  private static Map<String, Double> model(BiPredicate<Integer, Double> test) {
    Map<String, Double> out = new TreeMap<>();
    expected.forEach((k, v) -> {
      if (test.test(Integer.parseInt(k.substring(1)), v)) {
        out.put(k, v);
      }
    });
    return out;
  }

  /** Key to reward of a query's {@code id, reward} rows; a key twice fails. */
  private static Map<String, Double> byKey(List<Row> rows) {
    Map<String, Double> out = new TreeMap<>();
    for (Row r : rows) {
      assertEquals(null, out.put((String) r.getField(0), (Double) r.getField(1)), "a key appears once: " + rows);
    }
    return out;
  }

  /**
   * Pushed filters return exactly the model's rows: never a replaced version of a key (keys 0..49 were rewritten
   * with reward 1.x after the merge, so their base rows of reward 0.x match {@code reward < 1.0} but must not
   * appear), across the base, sealed and fresh tiers.
   */
  @Test
  void filtersArePushedIntoTheStoreAndNeverReturnReplacedRows() throws Exception {
    TableEnvironment env = tables(true);
    String query = "SELECT id, reward FROM rollouts WHERE reward < 1.0 AND rollout_id LIKE 'r1%'";
    String plan = env.explainSql(query);
    assertTrue(plan.contains("filter=[and(<(reward, 1.0"), plan);
    Map<String, Double> want = model((i, v) -> v < 1.0 && i % 3 == 1);
    assertEquals(46, want.size(), "keys 50..199 with rollout r1, but 100..109 (reward 2.x)");
    assertEquals(want, byKey(collect(env, query)));
    assertEquals(model((i, v) -> (v >= 2.0 || i == 3) && i % 3 != 0),
        byKey(collect(env, "SELECT id, reward FROM rollouts WHERE (reward >= 2.0 OR id = 'k0003') AND rollout_id <> 'r0'")));
    assertEquals(model((i, v) -> v >= 1.0 && v < 2.0 && i >= 10 && i < 20),
        byKey(collect(env, "SELECT id, reward FROM rollouts WHERE reward BETWEEN 1.0 AND 1.999 AND id >= 'k0010' "
            + "AND id < 'k0020'")));
  }

  /** The rows the job's scan source operators emitted (their {@code numRecordsOut}). */
  private static long sourceRecordsOut(JobID job) {
    long n = 0;
    List<String> operators = new ArrayList<>();
    for (var group : REPORTER.getMetricsByGroup().entrySet()) {
      Map<String, String> vars = group.getKey().getAllVariables();
      if (!job.toString().equals(vars.get("<job_id>")) || vars.get("<operator_name>") == null) {
        continue;
      }
      operators.add(vars.get("<operator_name>"));
      if (vars.get("<operator_name>").startsWith("Source: rollouts")
          && group.getValue().get("numRecordsOut") instanceof Counter c) {
        n += c.getCount();
      }
    }
    assertTrue(operators.stream().anyMatch(o -> o.startsWith("Source: rollouts")), "operators: " + operators);
    return n;
  }

  /**
   * {@code LIMIT} is pushed into the store: the plan's scan carries {@code limit=[3]}, the scan source emits at
   * most 3 rows per split (not the store's 205), and the query returns 3 rows of the model.
   */
  @Test
  void aLimitIsPushedIntoTheStore() throws Exception {
    TableEnvironment env = tables(true);
    String query = "SELECT id, reward FROM rollouts LIMIT 3";
    String plan = env.explainSql(query);
    assertTrue(plan.contains("TableSourceScan(table=[[default_catalog, default_database, rollouts, project=[id, reward], "
        + "limit=[3]]]"), plan);
    TableResult result = env.executeSql(query);
    List<Row> rows = new ArrayList<>();
    try (CloseableIterator<Row> it = result.collect()) {
      it.forEachRemaining(rows::add);
    }
    Map<String, Double> got = byKey(rows);
    assertEquals(3, got.size(), rows.toString());
    got.forEach((k, v) -> assertEquals(expected.get(k), v, k));
    long emitted = sourceRecordsOut(result.getJobClient().orElseThrow().getJobID());
    int splits;
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      splits = store.planRead(ScanSpec.all().withLimit(3), 4).splits().size();
    }
    assertTrue(emitted >= 3 && emitted <= 3L * splits, emitted + " rows emitted by the source, " + splits + " splits");
  }

  @Test
  void vectorsReadAsFloatArrays() throws Exception {
    Row r = collect(tables(true), "SELECT embedding FROM rollouts WHERE id = 'k0042'").get(0);
    Float[] v = (Float[]) r.getField(0);
    float[] got = new float[v.length];
    for (int i = 0; i < v.length; i++) {
      got[i] = v[i];
    }
    assertArrayEquals(vector(42), got);
  }

  @Test
  void lookupJoinFindsTheNewestRowOfEachKey() throws Exception {
    TableEnvironment env = tables(false);
    List<Row> rows = collect(env, "SELECT o.k, r.reward FROM (SELECT k, PROCTIME() AS pt FROM (VALUES ('k0001'), "
        + "('k0105'), ('k0202'), ('missing')) AS v(k)) AS o JOIN rollouts FOR SYSTEM_TIME AS OF o.pt AS r ON o.k = r.id");
    Map<String, Double> got = new TreeMap<>();
    rows.forEach(r -> got.put((String) r.getField(0), (Double) r.getField(1)));
    assertEquals(Map.of("k0001", expected.get("k0001"), "k0105", expected.get("k0105"), "k0202", expected.get("k0202")),
        got);
  }

  /**
   * A filter on the looked-up table's columns applies to the join: the planner pushes it into the source,
   * whose lookups by key cannot apply it, so Flink must still evaluate it (it was lost before).
   */
  @Test
  void aLookupJoinAppliesAFilterOnTheLookedUpColumns() throws Exception {
    TableEnvironment env = tables(false);
    List<Row> rows = collect(env, "SELECT o.k, r.reward FROM (SELECT k, PROCTIME() AS pt FROM (VALUES ('k0001'), "
        + "('k0002'), ('k0105'), ('k0202')) AS v(k)) AS o JOIN rollouts FOR SYSTEM_TIME AS OF o.pt AS r ON o.k = r.id "
        + "WHERE r.reward > 1.001 AND r.rollout_id <> 'r0'");
    assertEquals(Map.of("k0002", expected.get("k0002"), "k0202", expected.get("k0202")), byKey(rows));
  }

  /** Released by the test once it has added keys: the probe stream's second round waits for it. */
  static final Semaphore NEXT_ROUND = new Semaphore(0);

  /** Passes probe keys on; at {@code "|"} waits until the test releases {@link #NEXT_ROUND}. */
  static final class Rounds implements FlatMapFunction<String, String> {
    @Override
    public void flatMap(String key, Collector<String> out) throws Exception {
      if (!key.equals("|")) {
        out.collect(key);
      } else if (!NEXT_ROUND.tryAcquire(120, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the test never released the probes' second round");
      }
    }
  }

  /**
   * A streaming {@code LEFT JOIN ... FOR SYSTEM_TIME AS OF} on a store, with table options {@code lookup}: probes
   * {@code k1, k2, late1}, then, after the test has added {@code late1} and {@code late2} and updated {@code k1}
   * through core while the job runs, {@code late1, late2, k1, k2}. Returns each probe's key and reward (null: not
   * found), in probe order.
   */
  private static List<String> lookupWhileKeysArrive(String name, String lookup) throws Exception {
    String store = dir.resolve(name).toString();
    Map<String, String> options = Map.of("path", store, "schema", "rollout", "schema.embedding-dim", "2");
    try (ContextStore s = ContextStore.open(options)) {
      s.add(List.of(Map.of("id", "k1", "reward", 1.0), Map.of("id", "k2", "reward", 2.0)));
    }
    NEXT_ROUND.drainPermits();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    StreamTableEnvironment tables = StreamTableEnvironment.create(env);
    tables.createTemporaryView("probes", tables.fromDataStream(
        env.fromData("k1", "k2", "late1", "|", "late1", "late2", "k1", "k2").flatMap(new Rounds()).returns(Types.STRING),
        Schema.newBuilder().column("f0", DataTypes.STRING()).columnByExpression("pt", "PROCTIME()").build()));
    tables.executeSql("CREATE TABLE r (id STRING, reward DOUBLE) WITH ('connector' = 'lancecontext', 'path' = '" + store
        + "'" + lookup + ")");
    List<String> got = new ArrayList<>();
    try (CloseableIterator<Row> it = tables.executeSql("SELECT p.f0, r.reward FROM probes AS p LEFT JOIN r FOR "
        + "SYSTEM_TIME AS OF p.pt AS r ON p.f0 = r.id").collect()) {
      for (int i = 0; i < 3; i++) {
        Row row = it.next();
        got.add(row.getField(0) + "=" + row.getField(1));
      }
      // the job is running, its probes waiting: add two keys and change one through core
      try (ContextStore s = ContextStore.open(Map.of("path", store))) {
        s.add(List.of(Map.of("id", "late1", "reward", 10.0), Map.of("id", "late2", "reward", 20.0),
            Map.of("id", "k1", "reward", 1.5)));
      }
      NEXT_ROUND.release();
      it.forEachRemaining(row -> got.add(row.getField(0) + "=" + row.getField(1)));
    }
    return got;
  }

  /** Without a cache every probe sees every add acknowledged before it: keys added while the job runs are found. */
  @Test
  void aLookupJoinWithoutACacheFindsKeysAddedWhileTheJobRuns() throws Exception {
    assertEquals(List.of("k1=1.0", "k2=2.0", "late1=null", "late1=10.0", "late2=20.0", "k1=1.5", "k2=2.0"),
        lookupWhileKeysArrive("lookup-none", ", 'lookup.cache' = 'NONE'"));
  }

  /**
   * What the partial cache trades away (docs/flink.md): within its expiry a cached row hides a newer one, and a
   * cached miss ({@code lookup.partial-cache.cache-missing-key}, true by default) hides a key added after it.
   */
  @Test
  void aPartialCacheServesCachedRowsAndMissesUntilTheyExpire() throws Exception {
    assertEquals(List.of("k1=1.0", "k2=2.0", "late1=null", "late1=null", "late2=20.0", "k1=1.0", "k2=2.0"),
        lookupWhileKeysArrive("lookup-partial", ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100',"
            + " 'lookup.partial-cache.expire-after-write' = '1 h'"));
  }

  /**
   * A streaming lookup join on a store with {@code 'lookup.max-retries' = retries}: probes {@code k1}, then, after
   * the test has closed the JVM's resident stores under the running join's open handle
   * ({@code ContextStore.closeAllResident()}: what JVM shutdown does; the next call through that handle fails with
   * core's retryable {@code StoreClosedException}), {@code k2, k1}. Returns each probe's key and reward and the
   * job's {@code lookupRetries}; the job, without restarts, fails if a lookup fails.
   */
  private static Map.Entry<List<String>, Long> lookupAcrossAClosedStore(String name, int retries) throws Exception {
    String store = dir.resolve(name).toString();
    try (ContextStore s = ContextStore.open(Map.of("path", store, "schema", "rollout", "schema.embedding-dim", "2"))) {
      s.add(List.of(Map.of("id", "k1", "reward", 1.0), Map.of("id", "k2", "reward", 2.0)));
    }
    NEXT_ROUND.drainPermits();
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    StreamTableEnvironment tables = StreamTableEnvironment.create(env);
    tables.createTemporaryView("probes", tables.fromDataStream(
        env.fromData("k1", "|", "k2", "k1").flatMap(new Rounds()).returns(Types.STRING),
        Schema.newBuilder().column("f0", DataTypes.STRING()).columnByExpression("pt", "PROCTIME()").build()));
    tables.executeSql("CREATE TABLE r (id STRING, reward DOUBLE) WITH ('connector' = 'lancecontext', 'path' = '" + store
        + "', 'lookup.max-retries' = '" + retries + "')");
    TableResult result = tables.executeSql("SELECT p.f0, r.reward FROM probes AS p JOIN r FOR SYSTEM_TIME AS OF p.pt "
        + "AS r ON p.f0 = r.id");
    JobID job = result.getJobClient().orElseThrow().getJobID();
    List<String> got = new ArrayList<>();
    try (CloseableIterator<Row> it = result.collect()) {
      Row first = it.next();
      got.add(first.getField(0) + "=" + first.getField(1));
      // the join has looked k1 up through its open handle and waits for the next probes
      ContextStore.closeAllResident();
      NEXT_ROUND.release();
      it.forEachRemaining(row -> got.add(row.getField(0) + "=" + row.getField(1)));
    }
    long retried = 0;
    for (var group : REPORTER.getMetricsByGroup().entrySet()) {
      if (job.toString().equals(group.getKey().getAllVariables().get("<job_id>"))
          && group.getValue().get("lookupRetries") instanceof Counter c) {
        retried += c.getCount();
      }
    }
    return Map.entry(got, retried);
  }

  /** A lookup that meets a store closed under its handle retries, opening the store again: the join goes on. */
  @Test
  void aLookupRetriesAStoreClosedUnderItWithinLookupMaxRetries() throws Exception {
    var result = lookupAcrossAClosedStore("retry-1", 1);
    assertEquals(List.of("k1=1.0", "k2=2.0", "k1=1.0"), result.getKey());
    assertEquals(1L, result.getValue(), "lookupRetries: one failed attempt, retried once");
  }

  /** With fewer retries than failures the lookup fails the job naming the key, the store and the option. */
  @Test
  void aLookupFailsNamingTheStoreWhenLookupMaxRetriesAreUsedUp() {
    String store = dir.resolve("retry-0").toString();
    Exception e = assertThrows(Exception.class, () -> lookupAcrossAClosedStore("retry-0", 0));
    String messages = FlinkTestCluster.messages(e);
    assertTrue(messages.contains("lookup of key 'k2' in the store at ") && messages.contains(store)
        && messages.contains("failed after 1 attempt(s) ('lookup.max-retries' = 0)"), messages);
    StoreClosedException cause = FlinkTestCluster.cause(e, StoreClosedException.class)
        .orElseThrow(() -> new AssertionError("no StoreClosedException among the causes: " + messages, e));
    assertTrue(cause.isRetryable(), cause.getMessage());
  }

  /**
   * {@code 'lookup.cache' = 'FULL'} is refused by any query of the table (a lookup join, and a plain scan that would
   * otherwise accept it silently), naming the option, the table's path and the supported values.
   */
  @Test
  void aFullLookupCacheIsRefusedNamingTheOptionAndTheSupportedValues() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.executeSql("CREATE TABLE full_cache (id STRING, reward DOUBLE) WITH ('connector' = 'lancecontext', 'path' = '"
        + path + "', 'lookup.cache' = 'FULL')");
    Exception e = assertThrows(Exception.class, () -> env.executeSql("SELECT o.k, r.reward FROM (SELECT k, PROCTIME() AS "
        + "pt FROM (VALUES ('k0001')) AS v(k)) AS o JOIN full_cache FOR SYSTEM_TIME AS OF o.pt AS r ON o.k = r.id"));
    String messages = FlinkTestCluster.messages(e);
    assertTrue(FlinkTestCluster.cause(e, ValidationException.class).isPresent(), messages);
    assertTrue(messages.contains("option 'lookup.cache' = 'FULL' is not supported by the lancecontext table on " + path)
        && messages.contains("supported values are 'NONE' (the default") && messages.contains("and 'PARTIAL'"), messages);
    Exception scan = assertThrows(Exception.class, () -> env.executeSql("SELECT * FROM full_cache").collect());
    assertTrue(FlinkTestCluster.messages(scan).contains("option 'lookup.cache' = 'FULL' is not supported"),
        FlinkTestCluster.messages(scan));
  }

  @Test
  void aColumnTheStoreLacksIsRejectedNamingIt() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.executeSql("CREATE TABLE bad (id STRING, rewrd DOUBLE) WITH ('connector' = 'lancecontext', 'path' = '" + path + "')");
    ValidationException e = assertThrows(ValidationException.class, () -> env.executeSql("SELECT * FROM bad").collect());
    assertTrue(FlinkTestCluster.messages(e).contains("rewrd"), FlinkTestCluster.messages(e));
  }

  @Test
  void anUnknownOptionIsRejectedNamingIt() {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.executeSql("CREATE TABLE bad2 (id STRING) WITH ('connector' = 'lancecontext', 'path' = '" + path
        + "', 'wrte.batch-rows' = '5')");
    ValidationException e = assertThrows(ValidationException.class, () -> env.executeSql("SELECT * FROM bad2").collect());
    assertTrue(FlinkTestCluster.messages(e).contains("wrte.batch-rows"), FlinkTestCluster.messages(e));
  }

  @Test
  void aSerializedSplitCarriesNoSecret() throws Exception {
    try (ContextStore store = ContextStore.open(Map.of("path", path, "storage.aws_secret_access_key", "s3cr3t-value"))) {
      for (ReadSplit s : store.planRead(ScanSpec.all(), 4).splits()) {
        byte[] bytes = LanceContextSplitSerializer.INSTANCE.serialize(new LanceContextSplit("s", s, 3));
        assertTrue(!new String(bytes, StandardCharsets.ISO_8859_1).contains("s3cr3t-value"));
        LanceContextSplit back = LanceContextSplitSerializer.INSTANCE.deserialize(LanceContextSplitSerializer.INSTANCE.getVersion(), bytes);
        assertEquals(3, back.emitted());
        assertEquals(s, back.split());
      }
    }
  }

}
