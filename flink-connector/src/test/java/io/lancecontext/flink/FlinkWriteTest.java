package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.SchemaException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import io.lancecontext.flink.sink.LanceContextSink;
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

  /**
   * Strings are copied from where they lie in the rows that reach the writer (no copy of their own): keys and
   * values of one to four bytes per character, of several lengths, come back exactly.
   */
  @Test
  void nonAsciiKeysAndStringsRoundTripExactly() throws Exception {
    String path = dir.resolve("utf8").toString();
    TableEnvironment env = env(true);
    env.executeSql("CREATE TABLE u (id STRING, rollout_id STRING, reward DOUBLE, PRIMARY KEY (id) NOT ENFORCED) WITH ("
        + "'connector' = 'lancecontext', 'path' = '" + path + "', 'schema' = 'rollout', 'schema.embedding-dim' = '2')");
    env.executeSql("INSERT INTO u SELECT CONCAT('ключ-', CAST(n AS STRING), REPEAT('é', n), '-🙂'),"
        + " CONCAT(REPEAT('日本語', n), CAST(n AS STRING)), CAST(n AS DOUBLE)"
        + " FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7)) AS v(n)").await();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(8, store.count());
      for (int n = 0; n < 8; n++) {
        Map<String, Object> row = store.get("ключ-" + n + "é".repeat(n) + "-🙂").orElseThrow(AssertionError::new);
        assertEquals("日本語".repeat(n) + n, row.get("rollout_id"));
      }
    }
  }

  @Test
  void anUpsertChangelogWithDeletesLeavesTheFinalView() throws Exception {
    String path = dir.resolve("changelog").toString();
    TableEnvironment env = env(false);
    env.getConfig().set("execution.checkpointing.interval", "200ms");
    env.executeSql("CREATE TABLE c (id STRING, token_count INT, PRIMARY KEY (id) NOT ENFORCED) WITH ("
        + "'connector' = 'lancecontext', 'path' = '" + path + "', 'schema' = 'context', 'schema.embedding-dim' = '2')");
    // 'a' appears twice: its count-1 row is inserted, then retracted: Flink 2.3 sends a lone -U (no +U, the
    // filter drops count 2) although the sink's changelog mode excludes -U; the key has left the result
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

  private static final RowType COUNTS = RowType.of(new LogicalType[] {new VarCharType(false, VarCharType.MAX_LENGTH),
      new IntType()}, new String[] {"id", "token_count"});

  private static RowData row(RowKind kind, String id, int count) {
    return GenericRowData.ofKind(kind, StringData.fromString(id), count);
  }

  /** Writes {@code rows} in this order (parallelism 1) through a RowData sink; no restarts. */
  private static void writeChangelog(Map<String, String> options, RowType type, DeliveryGuarantee guarantee,
      List<RowData> rows) throws Exception {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    env.fromData(rows, InternalTypeInfo.of(type))
        .sinkTo(LanceContextSink.builder().options(options).rowType(type).deliveryGuarantee(guarantee).build());
    env.execute();
  }

  /**
   * -U is not written: a -U followed by the +U of its key ends with the +U row (also when other keys come between
   * them), and on a store without tombstones a lone -U changes nothing. On a store with tombstones a lone -U (what
   * Flink sends when a filter drops an updated row, see the SQL test above) deletes its key at the next put.
   */
  @Test
  void updateBeforeIsReplacedByItsUpdateAfterAndALoneOneDeletesOnlyWithTombstones() throws Exception {
    for (DeliveryGuarantee guarantee : new DeliveryGuarantee[] {DeliveryGuarantee.EXACTLY_ONCE,
        DeliveryGuarantee.AT_LEAST_ONCE}) {
      String path = dir.resolve("ub-context-" + guarantee).toString();
      Map<String, String> options = Map.of("path", path, "schema", "context", "schema.embedding-dim", "2");
      try (ContextStore store = ContextStore.open(options)) {
        store.add(List.of(Map.of("id", "a", "token_count", 1), Map.of("id", "b", "token_count", 1),
            Map.of("id", "c", "token_count", 1), Map.of("id", "e", "token_count", 1)));
      }
      writeChangelog(options, COUNTS, guarantee, List.of(
          row(RowKind.UPDATE_BEFORE, "a", 1), row(RowKind.INSERT, "d", 4), row(RowKind.UPDATE_AFTER, "a", 5),
          row(RowKind.UPDATE_BEFORE, "b", 1),
          row(RowKind.DELETE, "c", 1),
          row(RowKind.UPDATE_BEFORE, "e", 1), row(RowKind.UPDATE_AFTER, "e", 6), row(RowKind.UPDATE_BEFORE, "e", 6)));
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        assertEquals(5, store.get("a").orElseThrow().get("token_count"), guarantee + ": -U then +U: the +U row");
        assertEquals(Optional.empty(), store.get("b"), guarantee + ": a lone -U deletes with tombstones");
        assertEquals(Optional.empty(), store.get("c"), guarantee + ": -D deletes");
        assertEquals(4, store.get("d").orElseThrow().get("token_count"), guarantee.toString());
        assertEquals(Optional.empty(), store.get("e"), guarantee + ": the last -U of a key was lone");
        assertEquals(2, store.count(), guarantee.toString());
      }
    }
    String path = dir.resolve("ub-rollout").toString();
    Map<String, String> options = Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "2");
    try (ContextStore store = ContextStore.open(options)) {
      store.add(List.of(Map.of("id", "a", "reward", 1.0), Map.of("id", "b", "reward", 2.0)));
    }
    RowType rewards = RowType.of(new LogicalType[] {new VarCharType(false, VarCharType.MAX_LENGTH), new DoubleType()},
        new String[] {"id", "reward"});
    writeChangelog(options, rewards, DeliveryGuarantee.EXACTLY_ONCE, List.of(
        GenericRowData.ofKind(RowKind.UPDATE_BEFORE, StringData.fromString("a"), 1.0),
        GenericRowData.ofKind(RowKind.UPDATE_AFTER, StringData.fromString("a"), 7.0),
        GenericRowData.ofKind(RowKind.UPDATE_BEFORE, StringData.fromString("b"), 2.0)));
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(7.0, store.get("a").orElseThrow().get("reward"), "-U then +U: the +U row");
      assertEquals(2.0, store.get("b").orElseThrow().get("reward"), "a lone -U without tombstones changes nothing");
      assertEquals(2, store.count());
    }
  }

  /**
   * A -D on a store whose spec lacks {@code tombstones} fails the job with core's {@link SchemaException} (the error
   * core's write handle raises for such a delete) naming the key, the store and the capability; nothing is written.
   */
  @Test
  void aDeleteOnAStoreWithoutTombstonesFailsNamingTheCapabilityAndChangesNothing() throws Exception {
    for (DeliveryGuarantee guarantee : new DeliveryGuarantee[] {DeliveryGuarantee.EXACTLY_ONCE,
        DeliveryGuarantee.AT_LEAST_ONCE}) {
      String path = dir.resolve("no-tombstones-" + guarantee).toString();
      Map<String, String> options = Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "2");
      try (ContextStore store = ContextStore.open(options)) {
        store.add(List.of(Map.of("id", "x", "reward", 1.0)));
      }
      RowType rewards = RowType.of(new LogicalType[] {new VarCharType(false, VarCharType.MAX_LENGTH),
          new DoubleType()}, new String[] {"id", "reward"});
      Exception e = assertThrows(Exception.class, () -> writeChangelog(options, rewards, guarantee, List.of(
          GenericRowData.ofKind(RowKind.INSERT, StringData.fromString("y"), 2.0),
          GenericRowData.ofKind(RowKind.UPDATE_AFTER, StringData.fromString("x"), 3.0),
          GenericRowData.ofKind(RowKind.DELETE, StringData.fromString("x"), 3.0))));
      String messages = FlinkTestCluster.messages(e);
      SchemaException cause = FlinkTestCluster.cause(e, SchemaException.class)
          .orElseThrow(() -> new AssertionError("no SchemaException among the causes: " + messages, e));
      assertTrue(cause.getMessage().contains("a delete (-D) of key 'x' reached the store at ")
          && cause.getMessage().contains(path) && cause.getMessage().contains("whose spec has no 'tombstones' capability"),
          cause.getMessage());
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        assertEquals(Map.of("x", 1.0), Map.of("x", store.get("x").orElseThrow().get("reward")), guarantee.toString());
        assertEquals(Optional.empty(), store.get("y"), guarantee + ": the rows before the -D were not put");
        assertEquals(1, store.count(), guarantee.toString());
      }
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
  void insertOverwriteReplacesTheContentsOfAStoreWithoutTombstones() throws Exception {
    String path = dir.resolve("overwrite").toString();
    TableEnvironment env = env(true);
    env.executeSql("CREATE TABLE o (id STRING, reward DOUBLE) WITH ('connector' = 'lancecontext', 'path' = '" + path
        + "', 'schema' = 'rollout', 'schema.embedding-dim' = '2')");
    env.executeSql("INSERT INTO o VALUES ('a', 1.0), ('b', 2.0), ('c', 3.0)").await();
    env.executeSql("INSERT OVERWRITE o VALUES ('b', 5.0), ('d', 4.0)").await();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(2, store.count());
      assertEquals(5.0, store.get("b").orElseThrow().get("reward"));
      assertTrue(store.get("a").isEmpty() && store.get("c").isEmpty(), "the keys the overwrite did not write are gone");
    }
    env.executeSql("INSERT OVERWRITE o SELECT id, reward FROM (VALUES ('x', 1.0)) AS t (id, reward) WHERE reward > 2")
        .await();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(0, store.count(), "an overwrite with no rows empties the store");
    }
  }

  @Test
  void flinksStandardParallelismOptionsAreTakenAndSetTheOperatorsParallelism() throws Exception {
    String path = dir.resolve("parallelism").toString();
    TableEnvironment env = env(true);
    env.executeSql("CREATE TABLE p (id STRING, reward DOUBLE) WITH ('connector' = 'lancecontext', 'path' = '" + path
        + "', 'schema' = 'rollout', 'sink.parallelism' = '3', 'scan.parallelism' = '2')");
    String plan = env.explainSql("INSERT INTO p VALUES ('a', 1.0), ('b', 2.0)",
        org.apache.flink.table.api.ExplainDetail.JSON_EXECUTION_PLAN);
    assertTrue(plan.contains("\"parallelism\" : 3"), plan);
    env.executeSql("INSERT INTO p VALUES ('a', 1.0), ('b', 2.0)").await();
    String scan = env.explainSql("SELECT id FROM p", org.apache.flink.table.api.ExplainDetail.JSON_EXECUTION_PLAN);
    assertTrue(scan.contains("\"parallelism\" : 2"), scan);
    List<String> ids = new java.util.ArrayList<>();
    try (var rows = env.executeSql("SELECT id FROM p").collect()) {
      rows.forEachRemaining(r -> ids.add((String) r.getField(0)));
    }
    java.util.Collections.sort(ids);
    assertEquals(List.of("a", "b"), ids);
  }

  @Test
  void insertOverwriteAtLeastOnceIsRefusedNamingTheGuarantee() {
    TableEnvironment env = env(true);
    env.executeSql("CREATE TABLE ol (id STRING) WITH ('connector' = 'lancecontext', 'path' = '"
        + dir.resolve("ol") + "', 'schema' = 'rollout', 'sink.delivery-guarantee' = 'at-least-once')");
    Exception e = assertThrows(Exception.class, () -> env.executeSql("INSERT OVERWRITE ol VALUES ('x')"));
    assertTrue(FlinkTestCluster.messages(e).contains("sink.delivery-guarantee")
        && FlinkTestCluster.messages(e).contains("overwrite"), FlinkTestCluster.messages(e));
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
        assertEquals(2, store.count(), guarantee.toString());
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
