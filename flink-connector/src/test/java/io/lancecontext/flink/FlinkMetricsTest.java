package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.flink.sink.LanceContextSink;
import io.lancecontext.flink.sink.RecordConverter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink's and the lookup's metrics, read through a metric reporter of the MiniCluster: the standard
 * {@code numRecordsSend}/{@code numBytesSend} of the writers, put and flush latency, transactions staged and
 * published, and lookup latency and the lookup cache's hits and misses.
 */
class FlinkMetricsTest {
  static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.withReporter(2, REPORTER);

  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  /** The sum of the counters, or the count of the histograms, named {@code name} in the job's metric groups. */
  static long total(JobID job, String name) {
    long n = 0;
    boolean found = false;
    for (var group : REPORTER.getMetricsByGroup().entrySet()) {
      if (!job.toString().equals(group.getKey().getAllVariables().get("<job_id>"))) {
        continue;
      }
      Metric m = group.getValue().get(name);
      if (m != null) {
        found = true;
        if (m instanceof Counter c) {
          n += c.getCount();
        } else if (m instanceof Histogram h) {
          n += h.getCount();
        }
      }
    }
    assertTrue(found, "metric " + name + " of job " + job);
    return n;
  }

  /** The value of the job's one gauge named {@code name}. */
  static double gauge(JobID job, String name) {
    for (var group : REPORTER.getMetricsByGroup().entrySet()) {
      if (job.toString().equals(group.getKey().getAllVariables().get("<job_id>"))
          && group.getValue().get(name) instanceof org.apache.flink.metrics.Gauge<?> g) {
        return ((Number) g.getValue()).doubleValue();
      }
    }
    throw new AssertionError("no gauge " + name + " in job " + job);
  }

  private static List<Map<String, Object>> records(int n) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(Map.of("id", "k" + i, "reward", (double) i));
    }
    return out;
  }

  private static JobID runSink(String path, DeliveryGuarantee guarantee, int rows) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(100);
    LanceContextSink<Map<String, Object>> sink = LanceContextSink.builder()
        .options(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "2", "write.batch-rows", "100"))
        .deliveryGuarantee(guarantee).flushInterval(Duration.ofMillis(50)).build(RecordConverter.maps());
    env.fromData(records(rows), Types.MAP(Types.STRING, Types.GENERIC(Object.class))).sinkTo(sink);
    JobClient job = env.executeAsync("metrics-" + guarantee);
    job.getJobExecutionResult().get();
    return job.getJobID();
  }

  @Test
  void exactlyOnceSinkReportsRecordsBytesLatenciesAndTransactions() throws Exception {
    String path = dir.resolve("eo").toString();
    JobID job = runSink(path, DeliveryGuarantee.EXACTLY_ONCE, 1_000);
    assertEquals(1_000, total(job, "numRecordsSend"));
    assertTrue(total(job, "numBytesSend") >= 1_000 * 10, "bytes: " + total(job, "numBytesSend"));
    assertTrue(total(job, "putLatencyMs") >= 5, "full buffers of 100 rows staged: " + total(job, "putLatencyMs"));
    assertTrue(total(job, "flushLatencyMs") >= 1);
    long staged = total(job, "transactionsStaged");
    long published = total(job, "transactionsPublished");
    assertTrue(staged >= 1 && published >= 1 && published <= staged, staged + " staged, " + published + " published");
    assertEquals(1_000, total(job, "rowsPublished"));
    assertTrue(total(job, "publishLatencyMs") >= published);
    assertEquals(0, total(job, "fencedPuts"));
    assertEquals(0, total(job, "failedPuts"));
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(1_000, store.count());
    }
  }

  @Test
  void atLeastOnceSinkReportsRecordsAndPutLatency() throws Exception {
    String path = dir.resolve("alo").toString();
    JobID job = runSink(path, DeliveryGuarantee.AT_LEAST_ONCE, 1_000);
    assertEquals(1_000, total(job, "numRecordsSend"));
    assertTrue(total(job, "numBytesSend") >= 1_000 * 10);
    assertTrue(total(job, "putLatencyMs") >= 5, "full buffers of 100 rows put: " + total(job, "putLatencyMs"));
    assertTrue(total(job, "flushLatencyMs") >= 1, "checkpoints and the end of input wait for durability");
    assertEquals(0, total(job, "transactionsStaged"));
    assertEquals(0, total(job, "transactionsPublished"));
  }

  @Test
  void lookupsReportLatencyAndTheCacheHitRate() throws Exception {
    String path = dir.resolve("lookup").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "2"))) {
      store.add(List.of(Map.of("id", "a", "reward", 1.0), Map.of("id", "b", "reward", 2.0)));
    }
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.getConfig().set("parallelism.default", "1");
    env.executeSql("CREATE TABLE r (id STRING, reward DOUBLE, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
        + "'lancecontext', 'path' = '" + path + "', 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100')");
    // 10 probes of 3 keys (one missing): 3 misses load the cache, 7 probes hit it
    TableResult result = env.executeSql("SELECT o.k, r.reward FROM (SELECT k, PROCTIME() AS pt FROM (VALUES ('a'), ('b'), "
        + "('x'), ('a'), ('b'), ('a'), ('b'), ('a'), ('b'), ('a')) AS v(k)) AS o JOIN r FOR SYSTEM_TIME AS OF o.pt "
        + "ON o.k = r.id");
    int rows = 0;
    try (CloseableIterator<Row> it = result.collect()) {
      while (it.hasNext()) {
        it.next();
        rows++;
      }
    }
    assertEquals(9, rows);
    JobID job = result.getJobClient().orElseThrow().getJobID();
    long hits = total(job, "hitCount");
    long misses = total(job, "missCount");
    assertEquals(3, total(job, "lookups"), "the store is asked on cache misses only");
    assertEquals(3, misses);
    assertEquals(7, hits);
    assertEquals(0.7, hits / (double) (hits + misses), 1e-9, "cache hit rate");
    assertEquals(0.7, gauge(job, "hitRate"), 1e-9, "the cache's hitRate gauge");
    assertEquals(2, total(job, "lookupKeysFound"));
    assertEquals(3, total(job, "lookupLatencyMs"));
    assertEquals(0, total(job, "lookupRetries"));
  }
}
