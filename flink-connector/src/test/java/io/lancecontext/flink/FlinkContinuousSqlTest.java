package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code 'scan.mode' = 'continuous'} from SQL: an upsert changelog Flink normalizes per key, so a query's result
 * follows the store (a filter too: a key whose new version no longer matches leaves the result), {@code 'scan.since'}
 * starts after a snapshot, and bad values of the scan options are refused naming the option.
 */
class FlinkContinuousSqlTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(4);

  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static String ddl(String table, String path, String extra) {
    return "CREATE TABLE " + table + " (id STRING, token_count INT, PRIMARY KEY (id) NOT ENFORCED) WITH ("
        + "'connector' = 'lancecontext', 'path' = '" + path + "', 'scan.mode' = 'continuous', "
        + "'scan.discovery-interval' = '50 ms'" + extra + ")";
  }

  /** Reads the changelog until, applied, it is {@code expected} (the test's timeout bounds the wait). */
  private static void awaitResult(CloseableIterator<Row> it, Map<String, Integer> result, Map<String, Integer> expected) {
    while (!result.equals(expected)) {
      Row r = it.next();
      String id = (String) r.getField(0);
      if (r.getKind() == RowKind.INSERT || r.getKind() == RowKind.UPDATE_AFTER) {
        result.put(id, (Integer) r.getField(1));
      } else {
        result.remove(id);
      }
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aContinuousQueryFollowsTheStoreThroughUpsertsDeletesAndItsFilter() throws Exception {
    String path = dir.resolve("turns").toString();
    String since;
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "context", "schema.embedding-dim", "2"))) {
      store.add(List.of(Map.of("id", "a", "token_count", 10), Map.of("id", "b", "token_count", 20),
          Map.of("id", "c", "token_count", 1)));
      since = store.snapshot().token();
      TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
      env.getConfig().set("parallelism.default", "1");  // two jobs at once, two slots each at most
      env.executeSql(ddl("turns", path, ""));
      TableResult all = env.executeSql("SELECT id, token_count FROM turns WHERE token_count > 5");
      TableResult after = env.executeSql("SELECT id, token_count FROM turns /*+ OPTIONS('scan.since' = '" + since
          + "') */");
      try (CloseableIterator<Row> it = all.collect(); CloseableIterator<Row> changes = after.collect()) {
        Map<String, Integer> result = new TreeMap<>();
        awaitResult(it, result, Map.of("a", 10, "b", 20));
        store.add(List.of(Map.of("id", "a", "token_count", 3), Map.of("id", "c", "token_count", 30),
            Map.of("id", "d", "token_count", 40)));
        store.delete(List.of("b"));
        store.flush();
        store.add(List.of(Map.of("id", "d", "token_count", 41)));
        awaitResult(it, result, Map.of("c", 30, "d", 41));
        Map<String, Integer> changed = new TreeMap<>();
        awaitResult(changes, changed, Map.of("a", 3, "c", 30, "d", 41));
      } finally {
        all.getJobClient().orElseThrow().cancel().get();
        after.getJobClient().orElseThrow().cancel().get();
      }
    }
  }

  @Test
  void badScanOptionsAreRefusedNamingTheOption() throws Exception {
    String path = dir.resolve("bad").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "context", "schema.embedding-dim", "2"))) {
      store.add(List.of(Map.of("id", "a", "token_count", 1)));
    }
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    Map<String, String> bad = Map.of(
        "scan.mode", ", 'scan.mode' = 'sometimes'",
        "scan.discovery-interval", ", 'scan.discovery-interval' = '0 s'",
        "scan.discovery-interval'", ", 'scan.discovery-interval' = 'often'",
        "scan.since", ", 'scan.mode' = 'batch', 'scan.since' = 'step-1'",
        "scan.snapshot", ", 'scan.mode' = 'continuous', 'scan.since' = 'step-1', 'scan.snapshot' = 'step-2'");
    int i = 0;
    for (Map.Entry<String, String> e : bad.entrySet()) {
      String table = "bad" + i++;
      env.executeSql(ddl(table, path, e.getValue()).replace("'scan.mode' = 'continuous', ", ""));
      Exception error = assertThrows(Exception.class, () -> env.executeSql("SELECT * FROM " + table).collect().close());
      String option = e.getKey().replace("'", "");
      assertTrue(FlinkTestCluster.messages(error).contains(option), option + ": " + FlinkTestCluster.messages(error));
    }
    // a query of other columns than the key still reads it (Flink normalizes the changelog on it) and filters after
    env.executeSql(ddl("projected", path, ""));
    String plan = env.explainSql("SELECT token_count FROM projected WHERE token_count > 1");
    assertTrue(plan.contains("ChangelogNormalize(key=[id], condition=") && plan.contains("filter=[]]], fields=[id, "
        + "token_count]"), "the key read, the filter evaluated by the normalization, none in the store: " + plan);
    env.executeSql("CREATE TABLE nokey (id STRING, token_count INT) WITH ('connector' = 'lancecontext', 'path' = '"
        + path + "', 'scan.mode' = 'continuous')");
    Exception noKey = assertThrows(Exception.class, () -> env.executeSql("SELECT * FROM nokey").collect().close());
    assertTrue(FlinkTestCluster.messages(noKey).contains("'scan.mode' = 'continuous'")
        && FlinkTestCluster.messages(noKey).contains("PRIMARY KEY (id)"), FlinkTestCluster.messages(noKey));
  }
}
