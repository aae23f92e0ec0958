package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.VectorMetric;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code CREATE TABLE} on a path with no store creates the store, with the spec its columns declare, when
 * the table is first used; a preset keeps the DDL to its columns; bad DDL is refused naming what is wrong,
 * and nothing is created.
 */
class FlinkDdlStoreTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = new MiniClusterExtension(
      new MiniClusterResourceConfiguration.Builder().setNumberTaskManagers(1).setNumberSlotsPerTaskManager(2).build());

  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static final String COLUMNS = "id STRING, n INT NOT NULL, score DOUBLE, label STRING, flag BOOLEAN,"
      + " small TINYINT, mid SMALLINT, big BIGINT, ratio FLOAT, born DATE, seen_at TIMESTAMP_LTZ(3), local_at TIMESTAMP(6),"
      + " bin BYTES, image BYTES, emb ARRAY<FLOAT>, floats ARRAY<FLOAT>, tags ARRAY<STRING>,"
      + " meta ROW<step INT, note STRING>, links ARRAY<ROW<kind STRING, target STRING>>, PRIMARY KEY (id) NOT ENFORCED";

  private static String ddl(String table, String path, String columns, String options) {
    return "CREATE TABLE " + table + " (" + columns + ") WITH ('connector' = 'lancecontext', 'path' = '" + path + "'"
        + (options.isEmpty() ? "" : ", " + options) + ")";
  }

  @Test
  void theDdlAloneCreatesTheStoreOnFirstWrite() throws Exception {
    Path path = dir.resolve("derived");
    String options = "'vector.emb.dim' = '3', 'vector.emb.metric' = 'l2', 'blob.image' = 'true', 'shards' = '2'";
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.executeSql(ddl("t", path.toString(), COLUMNS, options));
    assertFalse(Files.exists(path), "CREATE TABLE alone touches nothing");
    env.executeSql("INSERT INTO t VALUES ('k1', 7, 0.5, 'a', TRUE, CAST(1 AS TINYINT), CAST(2 AS SMALLINT),"
        + " CAST(3 AS BIGINT), CAST(0.25 AS FLOAT), DATE '2026-01-02', TO_TIMESTAMP_LTZ(1700000000000, 3),"
        + " TIMESTAMP '2026-01-02 03:04:05', X'0102', X'FF', ARRAY[CAST(1 AS FLOAT), CAST(2 AS FLOAT), CAST(3 AS FLOAT)],"
        + " ARRAY[CAST(9 AS FLOAT)], ARRAY['x', 'y'], ROW(4, 'four'), ARRAY[ROW('parent', 'k0')])").await();
    env.executeSql("INSERT INTO t (id, n) VALUES ('k2', 8)").await();

    try (ContextStore store = ContextStore.open(Map.of("path", path.toString()))) {
      SchemaSpec spec = store.spec();
      assertEquals("id", spec.key());
      assertEquals(List.of("id", "n", "score", "label", "flag", "small", "mid", "big", "ratio", "born", "seen_at", "local_at",
          "bin", "image", "emb", "floats", "tags", "meta", "links"), spec.columnNames());
      assertEquals(2, store.shards());
      assertFalse(spec.column("id").nullable());
      assertFalse(spec.column("n").nullable());
      assertEquals(ColumnType.INT32, spec.column("n").type());
      assertEquals(ColumnType.INT8, spec.column("small").type());
      assertEquals(ColumnType.INT16, spec.column("mid").type());
      assertEquals(ColumnType.INT64, spec.column("big").type());
      assertEquals(ColumnType.FLOAT32, spec.column("ratio").type());
      assertEquals(ColumnType.FLOAT64, spec.column("score").type());
      assertEquals(ColumnType.BOOL, spec.column("flag").type());
      assertEquals(ColumnType.DATE, spec.column("born").type());
      assertEquals(ColumnType.TIMESTAMP, spec.column("seen_at").type());
      assertEquals(ColumnType.TIMESTAMP, spec.column("local_at").type());
      assertEquals(ColumnType.BINARY, spec.column("bin").type());
      assertFalse(spec.column("bin").blob());
      assertEquals(ColumnType.LARGE_BINARY, spec.column("image").type());
      assertTrue(spec.column("image").blob());
      ColumnSpec emb = spec.column("emb");
      assertEquals(ColumnType.VECTOR, emb.type());
      assertEquals(3, emb.dim());
      assertEquals(VectorMetric.L2, emb.metric());
      assertEquals(ColumnType.LIST, spec.column("floats").type(), "ARRAY<FLOAT> without a dim is a list");
      assertEquals(ColumnType.FLOAT32, spec.column("floats").item().type());
      assertEquals(ColumnType.STRING, spec.column("tags").item().type());
      assertEquals(ColumnType.STRUCT, spec.column("meta").type());
      assertEquals(ColumnType.INT32, spec.column("meta").field("step").type());
      assertEquals(ColumnType.STRUCT, spec.column("links").item().type());
      assertTrue(spec.capabilities().isEmpty());

      assertEquals(2, store.count());
      Map<String, Object> k1 = store.get("k1").orElseThrow();
      assertEquals(7, k1.get("n"));
      assertEquals(Instant.ofEpochMilli(1700000000000L), k1.get("seen_at"));
      assertEquals(Instant.parse("2026-01-02T03:04:05Z"), k1.get("local_at"));
      assertEquals(List.of("x", "y"), k1.get("tags"));
      assertEquals(4, ((Map<?, ?>) k1.get("meta")).get("step"));
      assertEquals(8, store.get("k2").orElseThrow().get("n"));
    }

    TableEnvironment again = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    again.executeSql(ddl("t", path.toString(), COLUMNS, options));
    assertEquals(List.of("k1"), ids(again, "SELECT id FROM t WHERE n = 7"), "the same DDL reads the store it created");
  }

  @Test
  void firstUseByAQueryCreatesAnEmptyStore() throws Exception {
    Path path = dir.resolve("queried");
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.executeSql(ddl("q", path.toString(), "id STRING, kind STRING, PRIMARY KEY (id) NOT ENFORCED", ""));
    assertEquals(List.of(), ids(env, "SELECT id FROM q"));
    try (ContextStore store = ContextStore.open(Map.of("path", path.toString()))) {
      assertEquals(List.of("id", "kind"), store.spec().columnNames());
      assertEquals(0, store.count());
    }
  }

  @Test
  void aPresetKeepsTheDdlToItsColumns() throws Exception {
    Path path = dir.resolve("preset");
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.executeSql(ddl("c", path.toString(), "id STRING, text_payload STRING, token_count INT, PRIMARY KEY (id) NOT ENFORCED",
        "'schema' = 'context', 'schema.embedding-dim' = '4'"));
    env.executeSql("INSERT INTO c VALUES ('c1', 'hello', 3)").await();
    try (ContextStore store = ContextStore.open(Map.of("path", path.toString()))) {
      assertEquals(26, store.spec().columns().size(), "the preset's columns, not the DDL's");
      assertEquals(4, store.spec().column("embedding").dim());
      assertEquals(3, store.get("c1").orElseThrow().get("token_count"));
    }
    env.executeSql(ddl("c2", path.toString(), "id STRING, text_payload STRING, mood STRING, PRIMARY KEY (id) NOT ENFORCED",
        "'schema' = 'context', 'schema.embedding-dim' = '4'"));
    assertRefused(env, "INSERT INTO c2 VALUES ('c2', 'x', 'happy')", "column 'mood' is not a column of the store");
    env.executeSql(ddl("c3", path.toString(), "id STRING, embedding ARRAY<FLOAT>, PRIMARY KEY (id) NOT ENFORCED",
        "'schema' = 'context', 'schema.embedding-dim' = '4', 'vector.embedding.dim' = '8'"));
    assertRefused(env, "SELECT id FROM c3", "'vector.embedding.dim'", "has dim 4");
  }

  @Test
  void anExistingStoreMustAgreeWithTheDdlsColumnOptions() throws Exception {
    Path path = dir.resolve("agree");
    String columns = "id STRING, emb ARRAY<FLOAT>, PRIMARY KEY (id) NOT ENFORCED";
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.executeSql(ddl("a1", path.toString(), columns, "'vector.emb.dim' = '2'"));
    env.executeSql("INSERT INTO a1 VALUES ('v1', ARRAY[CAST(1 AS FLOAT), CAST(0 AS FLOAT)])").await();
    env.executeSql(ddl("a2", path.toString(), columns, "'vector.emb.dim' = '3'"));
    assertRefused(env, "SELECT id FROM a2", "'vector.emb.dim'", "has dim 2");
    env.executeSql(ddl("a3", path.toString(), columns, "'vector.emb.dim' = '2', 'vector.emb.metric' = 'dot'"));
    assertRefused(env, "SELECT id FROM a3", "'vector.emb.metric'", "has metric cosine");
  }

  @Test
  void badDdlIsRefusedNamingWhatIsWrongAndCreatesNothing() {
    refusedAndNothingCreated("nokey", "id STRING, kind STRING", "", "PRIMARY KEY (id) NOT ENFORCED");
    refusedAndNothingCreated("intkey", "id INT, kind STRING, PRIMARY KEY (id) NOT ENFORCED", "",
        "column 'id': the key column must be a STRING, not INT NOT NULL");
    refusedAndNothingCreated("otherkey", "id STRING, name STRING, PRIMARY KEY (name) NOT ENFORCED", "",
        "column 'name': the primary key of a store created from a DDL must be the single STRING column 'id'");
    refusedAndNothingCreated("unknown", "id STRING, PRIMARY KEY (id) NOT ENFORCED", "'shard' = '2'", "shard");
    refusedAndNothingCreated("nodim", "id STRING, emb ARRAY<FLOAT>, PRIMARY KEY (id) NOT ENFORCED",
        "'vector.emb.metric' = 'l2'", "'vector.emb.metric'", "set 'vector.emb.dim' too");
    refusedAndNothingCreated("zerodim", "id STRING, emb ARRAY<FLOAT>, PRIMARY KEY (id) NOT ENFORCED",
        "'vector.emb.dim' = '0'", "'vector.emb.dim'", "positive integer");
    refusedAndNothingCreated("textdim", "id STRING, emb ARRAY<FLOAT>, PRIMARY KEY (id) NOT ENFORCED",
        "'vector.emb.dim' = 'wide'", "'vector.emb.dim'", "positive integer");
    refusedAndNothingCreated("notfloats", "id STRING, emb ARRAY<DOUBLE>, PRIMARY KEY (id) NOT ENFORCED",
        "'vector.emb.dim' = '2'", "'vector.emb.dim'", "only ARRAY<FLOAT> columns can be vectors");
    refusedAndNothingCreated("nocolumn", "id STRING, PRIMARY KEY (id) NOT ENFORCED", "'vector.emb.dim' = '2'",
        "'vector.emb.dim'", "names column 'emb', which the table does not declare");
    refusedAndNothingCreated("badmetric", "id STRING, emb ARRAY<FLOAT>, PRIMARY KEY (id) NOT ENFORCED",
        "'vector.emb.dim' = '2', 'vector.emb.metric' = 'manhattan'", "'vector.emb.metric'", "unknown metric 'manhattan'");
    refusedAndNothingCreated("badvectoroption", "id STRING, emb ARRAY<FLOAT>, PRIMARY KEY (id) NOT ENFORCED",
        "'vector.emb.size' = '2'", "'vector.emb.size'", "unknown option");
    refusedAndNothingCreated("blobtext", "id STRING, body STRING, PRIMARY KEY (id) NOT ENFORCED",
        "'blob.body' = 'true'", "'blob.body'", "only BYTES columns can be blobs");
    refusedAndNothingCreated("reserved", "id STRING, _lc_seq BIGINT, PRIMARY KEY (id) NOT ENFORCED", "",
        "column '_lc_seq'", "reserved");
    refusedAndNothingCreated("decimal", "id STRING, price DECIMAL(10, 2), PRIMARY KEY (id) NOT ENFORCED", "",
        "column 'price'", "DECIMAL(10, 2) has no store type");
    refusedAndNothingCreated("nested", "id STRING, meta ROW<clock TIME>, PRIMARY KEY (id) NOT ENFORCED", "",
        "column 'meta.clock'", "has no store type");
    refusedAndNothingCreated("char", "id STRING, code CHAR(3), PRIMARY KEY (id) NOT ENFORCED", "",
        "column 'code'", "declare it STRING");
    refusedAndNothingCreated("notinpreset", "id STRING, mood STRING", "'schema' = 'context'",
        "column 'mood' is not a column of the store");
    refusedAndNothingCreated("presetkey", "id STRING, tenant STRING, PRIMARY KEY (tenant) NOT ENFORCED",
        "'schema' = 'context'", "the primary key must be the store's key column ('id')");
  }

  private static void refusedAndNothingCreated(String name, String columns, String options, String... expected) {
    Path path = dir.resolve("bad-" + name);
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    String table = "t_" + name;
    env.executeSql(ddl(table, path.toString(), columns, options));
    java.util.regex.Matcher pk = java.util.regex.Pattern.compile("PRIMARY KEY \\((\\w+)\\)").matcher(columns);
    String insertColumn = pk.find() ? pk.group(1) : "id";
    assertRefused(env, "INSERT INTO " + table + " (" + insertColumn + ") VALUES ('x')", expected);
    assertRefused(env, "SELECT * FROM " + table, expected);
    assertTrue(!Files.exists(path) || isEmpty(path), name + ": nothing is written at " + path);
  }

  private static boolean isEmpty(Path p) {
    try (var s = Files.list(p)) {
      return s.findAny().isEmpty();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void assertRefused(TableEnvironment env, String statement, String... expected) {
    ValidationException e = assertThrows(ValidationException.class, () -> {
      try (CloseableIterator<Row> rows = env.executeSql(statement).collect()) {
        rows.forEachRemaining(r -> { });
      }
    }, statement);
    String messages = messages(e);
    for (String s : expected) {
      assertTrue(messages.contains(s), "expected '" + s + "' in: " + messages);
    }
  }

  private static List<String> ids(TableEnvironment env, String query) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<Row> rows = env.executeSql(query).collect()) {
      rows.forEachRemaining(r -> out.add((String) r.getField(0)));
    }
    return out;
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append(" | ");
    }
    return sb.toString();
  }
}
