package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.SnapshotNotFoundException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code 'scan.snapshot'}: a Flink scan of the store as it was when a snapshot was taken (a token or a tag). */
class FlinkSnapshotTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(1);

  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static List<String> rows(TableEnvironment env, String sql) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
      it.forEachRemaining(r -> out.add(r.toString()));
    }
    out.sort(null);
    return out;
  }

  @Test
  void aScanAtATokenOrTagReturnsTheRowsOfThatMoment() throws Exception {
    String path = dir.resolve("steps").toString();
    String token;
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "rollout", "shards", "2"))) {
      store.add(List.of(Map.of("id", "a", "reward", 1.0), Map.of("id", "b", "reward", 2.0)));
      token = store.snapshot().token();
      store.tag("step-1");
      store.add(List.of(Map.of("id", "a", "reward", 10.0), Map.of("id", "c", "reward", 3.0)));
      store.flush();
      store.compact();
    }
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.executeSql("CREATE TABLE steps (id STRING, reward DOUBLE, PRIMARY KEY (id) NOT ENFORCED) "
        + "WITH ('connector' = 'lancecontext', 'path' = '" + path + "')");
    env.executeSql("CREATE TABLE steps_at_1 (id STRING, reward DOUBLE, PRIMARY KEY (id) NOT ENFORCED) "
        + "WITH ('connector' = 'lancecontext', 'path' = '" + path + "', 'scan.snapshot' = 'step-1')");
    List<String> before = List.of("+I[a, 1.0]", "+I[b, 2.0]");
    assertEquals(List.of("+I[a, 10.0]", "+I[b, 2.0]", "+I[c, 3.0]"), rows(env, "SELECT id, reward FROM steps"));
    assertEquals(before, rows(env, "SELECT id, reward FROM steps_at_1"));
    assertEquals(before, rows(env, "SELECT id, reward FROM steps /*+ OPTIONS('scan.snapshot' = '" + token + "') */"));
    assertEquals(List.of("+I[1]"), rows(env, "SELECT COUNT(*) FROM steps_at_1 WHERE reward > 1.5"));

    Exception missing = assertThrows(Exception.class,
        () -> rows(env, "SELECT * FROM steps /*+ OPTIONS('scan.snapshot' = 'no-such-tag') */"));
    boolean typed = false;
    for (Throwable c = missing; c != null; c = c.getCause()) {
      typed |= c instanceof SnapshotNotFoundException;
    }
    assertTrue(typed, missing.toString());
  }
}
