package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code INSERT INTO} a lancecontext table: upserts by key, an upsert changelog with deletes, clear refusals. */
class FlinkWriteTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(2);

  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static TableEnvironment env(boolean batch) {
    return TableEnvironment.create(batch ? EnvironmentSettings.inBatchMode() : EnvironmentSettings.inStreamingMode());
  }

  @Test
  void insertWritesRowsThatEveryReaderSees() throws Exception {
    String path = dir.resolve("insert").toString();
    TableEnvironment env = env(true);
    env.executeSql("CREATE TABLE r (id STRING, rollout_id STRING, reward DOUBLE, embedding ARRAY<FLOAT NOT NULL>,"
        + " created_at TIMESTAMP_LTZ(3), PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'lancecontext', 'path' = '"
        + path + "', 'schema' = 'rollout', 'schema.embedding-dim' = '2')");
    env.executeSql("INSERT INTO r SELECT CONCAT('k', CAST(n AS STRING)), 'r1', CAST(n * 0.5 AS DOUBLE),"
        + " ARRAY[CAST(n AS FLOAT), CAST(1.0 AS FLOAT)],"
        + " TO_TIMESTAMP_LTZ(1700000000000 + n, 3) FROM (VALUES (1), (2), (3), (4)) AS v(n)").await();
    env.executeSql("INSERT INTO r VALUES ('k2', 'r2', 9.0, ARRAY[CAST(2.0 AS FLOAT), CAST(2.0 AS FLOAT)],"
        + " TO_TIMESTAMP_LTZ(0, 3))").await();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(4, store.count());
      Map<String, Object> k2 = store.get("k2").orElseThrow();
      assertEquals(9.0, k2.get("reward"));
      assertEquals("r2", k2.get("rollout_id"));
      assertEquals(Instant.EPOCH, k2.get("created_at"));
      assertEquals(Instant.ofEpochMilli(1700000000003L), store.get("k3").orElseThrow().get("created_at"));
    }
  }

  @Test
  void anUpsertChangelogWithDeletesLeavesTheFinalView() throws Exception {
    String path = dir.resolve("changelog").toString();
    TableEnvironment env = env(false);
    env.getConfig().set("execution.checkpointing.interval", "200ms");
    env.executeSql("CREATE TABLE c (id STRING, token_count INT, PRIMARY KEY (id) NOT ENFORCED) WITH ("
        + "'connector' = 'lancecontext', 'path' = '" + path + "', 'schema' = 'context', 'schema.embedding-dim' = '2')");
    // 'a' appears twice: its count-1 row is inserted, then retracted (-U, no +U: the filter drops count 2)
    String insert = "INSERT INTO c SELECT id, CAST(COUNT(*) AS INT) FROM (VALUES ('a'), ('b'), ('a'), ('c'), ('c'), ('c'))"
        + " AS v(id) GROUP BY id HAVING COUNT(*) <> 2";
    env.executeSql(insert).await();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(Optional.empty(), store.get("a"), "deleted by the changelog");
      assertEquals(1, store.get("b").orElseThrow().get("token_count"));
      assertEquals(3, store.get("c").orElseThrow().get("token_count"), "the last upsert wins");
      assertEquals(2, store.count());
    }
  }

  @Test
  void exactlyOnceWithImmediateCommitsIsRefusedNamingBoth() {
    TableEnvironment env = env(true);
    env.executeSql("CREATE TABLE e (id STRING) WITH ('connector' = 'lancecontext', 'path' = '"
        + dir.resolve("e") + "', 'schema' = 'rollout', 'write.commit' = 'immediate')");
    ValidationException e = assertThrows(ValidationException.class, () -> env.executeSql("INSERT INTO e VALUES ('x')"));
    assertTrue(FlinkTestCluster.messages(e).contains("'write.commit' = 'immediate' contradicts "
        + "'sink.delivery-guarantee' = 'exactly-once'"), FlinkTestCluster.messages(e));
  }

  @Test
  void atLeastOnceWithAtomicCommitsIsRefusedNamingBoth() {
    TableEnvironment env = env(true);
    env.executeSql("CREATE TABLE a (id STRING) WITH ('connector' = 'lancecontext', 'path' = '"
        + dir.resolve("a") + "', 'schema' = 'rollout', 'write.commit' = 'atomic', "
        + "'sink.delivery-guarantee' = 'at-least-once')");
    ValidationException e = assertThrows(ValidationException.class, () -> env.executeSql("INSERT INTO a VALUES ('x')"));
    assertTrue(FlinkTestCluster.messages(e).contains("'write.commit' = 'atomic' contradicts "
        + "'sink.delivery-guarantee' = 'at-least-once'"), FlinkTestCluster.messages(e));
  }

  @Test
  void bothGuaranteesWriteTheSameRows() throws Exception {
    for (String guarantee : new String[] {"exactly-once", "at-least-once", "none"}) {
      String path = dir.resolve("g-" + guarantee).toString();
      TableEnvironment env = env(true);
      env.executeSql("CREATE TABLE g (id STRING, reward DOUBLE, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
          + "'lancecontext', 'path' = '" + path + "', 'schema' = 'rollout', 'schema.embedding-dim' = '2', "
          + "'sink.delivery-guarantee' = '" + guarantee + "')");
      env.executeSql("INSERT INTO g VALUES ('a', 1.0), ('b', 2.0), ('a', 3.0)").await();
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        assertEquals(2, store.count(), guarantee);
        assertEquals(3.0, store.get("a").orElseThrow().get("reward"), guarantee);
      }
    }
  }

  @Test
  void aPrimaryKeyOtherThanTheStoreKeyIsRefused() {
    TableEnvironment env = env(true);
    env.executeSql("CREATE TABLE p (id STRING, rollout_id STRING NOT NULL, PRIMARY KEY (rollout_id) NOT ENFORCED) WITH "
        + "('connector' = 'lancecontext', 'path' = '" + dir.resolve("p") + "', 'schema' = 'rollout')");
    ValidationException e = assertThrows(ValidationException.class,
        () -> env.executeSql("INSERT INTO p VALUES ('x', 'y')"));
    assertTrue(FlinkTestCluster.messages(e).contains("primary key must be the store's key column ('id')"), FlinkTestCluster.messages(e));
  }

}
