package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Streaming insert-only queries into a table with a {@code PRIMARY KEY} (docs/flink.md, "Primary keys in streaming
 * jobs"): Flink 2.3 asks for {@code ON CONFLICT}; {@code ON CONFLICT DO DEDUPLICATE} upserts without a materializer,
 * and {@code table.exec.sink.require-on-conflict = false} lifts the requirement.
 */
class FlinkOnConflictTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(2);

  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static final String ROWS = " VALUES ('a', 'run-1', 1.0), ('b', 'run-1', 2.0), ('a', 'run-2', 3.0)";

  private static TableEnvironment keyedTable(String path) {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.executeSql("CREATE TABLE rewards (id STRING, rollout_id STRING, reward DOUBLE, PRIMARY KEY (id) NOT ENFORCED)"
        + " WITH ('connector' = 'lancecontext', 'path' = '" + path + "', 'schema' = 'rollout')");
    return env;
  }

  private static void assertLastRowOfEachKey(String path) {
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      Map<String, Object> a = store.get("a").orElseThrow();
      assertEquals(3.0, a.get("reward"), "the last row of 'a' wins");
      assertEquals("run-2", a.get("rollout_id"));
      assertEquals(2.0, store.get("b").orElseThrow().get("reward"));
      assertEquals(2, store.count());
    }
  }

  @Test
  void onConflictDoDeduplicateWritesAnInsertOnlyQueryIntoAKeyedTableWithoutAMaterializer() throws Exception {
    String path = dir.resolve("dedup").toString();
    TableEnvironment env = keyedTable(path);
    ValidationException refused = assertThrows(ValidationException.class,
        () -> env.executeSql("INSERT INTO rewards" + ROWS));
    assertTrue(refused.getMessage().contains("ON CONFLICT"), refused.getMessage());

    String insert = "INSERT INTO rewards" + ROWS + " ON CONFLICT DO DEDUPLICATE";
    String plan = env.explainSql(insert);
    assertTrue(plan.contains("conflictStrategy=[DEDUPLICATE]"), plan);
    assertFalse(plan.contains("upsertMaterialize=[true]"), "no state-keeping materializer: " + plan);
    env.executeSql(insert).await();
    assertLastRowOfEachKey(path);
  }

  @Test
  void requireOnConflictFalseAcceptsTheQueryWithoutTheClause() throws Exception {
    String path = dir.resolve("config").toString();
    TableEnvironment env = keyedTable(path);
    env.getConfig().set("table.exec.sink.require-on-conflict", "false");
    env.executeSql("INSERT INTO rewards" + ROWS).await();
    assertLastRowOfEachKey(path);
  }
}
