package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.spark.catalog.LanceContextCatalog;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The catalog (named {@code lct}: Spark keeps a catalog per name for the session, and the docs example uses
 * {@code lc}): namespaces, tables as stores, writes clustered by bucket, procedures, the bucket function. */
class SparkCatalogTest extends SparkTest {

  @BeforeAll
  static void catalog() {
    spark.conf().set("spark.sql.catalog.lct", LanceContextCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.lct.warehouse", dir.toString());
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lct.db");
  }

  @Test
  void createInsertReadAndDropATable() {
    spark.sql("CREATE TABLE lct.db.rollouts (id STRING, rollout_id STRING, reward DOUBLE) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'rollout', 'shards' = '3')");
    List<Row> tables = spark.sql("SHOW TABLES IN lct.db").collectAsList();
    assertTrue(tables.stream().anyMatch(r -> r.getString(1).equals("rollouts")), tables.toString());
    String insert = "INSERT INTO lct.db.rollouts (id, rollout_id, reward) SELECT format_string('k%04d', id), "
        + "'r1', id * 1.0 FROM range(0, 600)";
    String plan = spark.sql("EXPLAIN " + insert).collectAsList().get(0).getString(0);
    assertTrue(plan.contains("hashpartitioning(invoke(lancecontext.bucket_task.invoke(3, 3, id") && plan.contains("), 3)"),
        "rows are clustered by the key's bucket into 3 tasks: " + plan);
    spark.sql(insert);
    spark.sql("INSERT INTO lct.db.rollouts (id, rollout_id, reward) VALUES ('k0001', 'r2', 99.0)");
    assertEquals(600, spark.table("lct.db.rollouts").count());
    assertEquals(99.0, spark.sql("SELECT reward FROM lct.db.rollouts WHERE id = 'k0001'").first().getDouble(0));
    spark.sql("DROP TABLE lct.db.rollouts");
    assertFalse(Files.exists(dir.resolve("db").resolve("rollouts")));
  }

  @Test
  void dropTablePurgeDeletesTheStoreAsDropDoes() {
    spark.sql("CREATE TABLE lct.db.purged (id STRING, reward DOUBLE) USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    spark.sql("INSERT INTO lct.db.purged (id, reward) VALUES ('a', 1.0)");
    spark.sql("DROP TABLE lct.db.purged PURGE");
    assertFalse(Files.exists(dir.resolve("db").resolve("purged")));
    assertFalse(spark.catalog().tableExists("lct.db.purged"));
    spark.sql("DROP TABLE IF EXISTS lct.db.purged PURGE");
    spark.sql("CREATE TABLE lct.db.purged (id STRING, reward DOUBLE) USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    assertEquals(0, spark.table("lct.db.purged").count(), "a table of the same name starts empty");
    spark.sql("DROP TABLE lct.db.purged PURGE");
  }

  @Test
  void aTableWithoutASchemaGetsOneFromItsColumns() {
    spark.sql("CREATE TABLE lct.db.derived (id STRING NOT NULL, emb ARRAY<FLOAT>, tags ARRAY<STRING>, score DOUBLE) "
        + "USING lancecontext TBLPROPERTIES ('vector.emb.dim' = '4', 'vector.emb.metric' = 'Dot')");
    try (ContextStore store = ContextStore.open(Map.of("path", dir.resolve("db/derived").toString()))) {
      assertEquals(ColumnType.VECTOR, store.spec().column("emb").type());
      assertEquals(4, store.spec().column("emb").dim());
      assertEquals(io.lancecontext.core.schema.VectorMetric.DOT, store.spec().column("emb").metric(), "any case");
      assertEquals(ColumnType.LIST, store.spec().column("tags").type());
      assertEquals(ColumnType.FLOAT64, store.spec().column("score").type());
    }
    spark.sql("INSERT INTO lct.db.derived VALUES ('a', array(1.0f, 2.0f, 3.0f, 4.0f), array('x'), 0.5)");
    Row r = spark.sql("SELECT emb, tags FROM lct.db.derived").first();
    assertEquals(4, r.getList(0).size());
    assertEquals(List.of("x"), r.getList(1));
  }

  @Test
  void aTableWithoutAnIdColumnIsRefusedNamingIt() {
    Exception e = assertThrows(Exception.class,
        () -> spark.sql("CREATE TABLE lct.db.nokey (name STRING) USING lancecontext"));
    assertTrue(String.valueOf(e.getMessage()).contains("'id'"), e.toString());
    assertFalse(Files.exists(dir.resolve("db").resolve("nokey").resolve("_versions")));
  }

  @Test
  void proceduresMergeAndFlushTheTable() {
    spark.sql("CREATE TABLE lct.db.maint (id STRING, reward DOUBLE) USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    spark.sql("INSERT INTO lct.db.maint (id, reward) VALUES ('a', 1.0), ('b', 2.0)");
    Row merged = spark.sql("CALL lct.system.merge(table => 'db.maint')").first();
    assertTrue(merged.getBoolean(merged.fieldIndex("merged")), merged.toString());
    spark.sql("INSERT INTO lct.db.maint (id, reward) VALUES ('c', 3.0)");
    Row flushed = spark.sql("CALL lct.system.flush(table => 'db.maint')").first();
    assertTrue(flushed.getBoolean(flushed.fieldIndex("complete")), flushed.toString());
    try (ContextStore store = ContextStore.open(Map.of("path", dir.resolve("db/maint").toString()))) {
      assertEquals(0, store.stats().freshRows(), "every row is in the base table");
      assertEquals(3, store.count());
    }
  }

  @Test
  void theBucketFunctionIsCoresBucket() {
    int bucket = spark.sql("SELECT lct.system.bucket(4, 'some-key')").first().getInt(0);
    assertEquals(ContextStore.bucketOf("some-key", 4), bucket);
  }

  @Test
  void deleteWritesTombstonesForTheMatchingKeysInOneTransaction() {
    spark.sql("CREATE TABLE lct.db.ctx (id STRING, role STRING, token_count INT) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '4')");
    spark.sql("INSERT INTO lct.db.ctx (id, role, token_count) SELECT format_string('k%03d', id), "
        + "IF(id % 3 = 0, 'tool', 'user'), cast(id AS int) FROM range(0, 90)");
    spark.sql("INSERT INTO lct.db.ctx (id, role, token_count) VALUES ('k001', 'tool', 1)");  // an update: now matches
    spark.sql("DELETE FROM lct.db.ctx WHERE role = 'tool' AND token_count < 60");
    assertEquals(90 - 21, spark.table("lct.db.ctx").count());
    assertEquals(0, spark.sql("SELECT * FROM lct.db.ctx WHERE id IN ('k000', 'k001', 'k057')").count());
    assertEquals(10, spark.sql("SELECT * FROM lct.db.ctx WHERE role = 'tool'").count(), "k060..k087 stay");
    try (ContextStore store = ContextStore.open(Map.of("path", dir.resolve("db/ctx").toString()))) {
      assertEquals(69, store.count(), "core sees the same deletes");
    }
  }

  @Test
  void insertOverwriteOfATableWithoutTombstonesReplacesItsRows() {
    spark.sql("CREATE TABLE lct.db.replace (id STRING, reward DOUBLE) USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    spark.sql("INSERT OVERWRITE lct.db.replace (id, reward) VALUES ('a', 1.0), ('b', 2.0)");
    spark.sql("INSERT OVERWRITE lct.db.replace (id, reward) VALUES ('b', 5.0), ('c', 3.0)");
    assertEquals(List.of("b:5.0", "c:3.0"), spark.sql("SELECT concat(id, ':', reward) FROM lct.db.replace ORDER BY id")
        .as(org.apache.spark.sql.Encoders.STRING()).collectAsList());
  }

  /**
   * Conditions core cannot evaluate (a function, a UDF, a cast, mixed with ones it can): Spark evaluates them on
   * the rows read, and exactly the matching keys are deleted, in one transaction, also after an update that
   * makes a row stop matching.
   */
  @Test
  void deleteWithAConditionCoreCannotEvaluateDeletesExactlyTheMatchingKeys() {
    spark.udf().register("isLongText", (org.apache.spark.sql.api.java.UDF1<String, Boolean>) t -> t != null
        && t.length() > 8, org.apache.spark.sql.types.DataTypes.BooleanType);
    spark.sql("CREATE TABLE lct.db.fdel (id STRING, text_payload STRING, role STRING, token_count INT) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '4', 'shards' = '2')");
    spark.sql("INSERT INTO lct.db.fdel (id, text_payload, role, token_count) SELECT format_string('k%03d', id), "
        + "repeat('x', cast(id % 12 AS int)), IF(id % 2 = 0, 'tool', 'user'), cast(id AS int) FROM range(0, 120)");
    spark.sql("INSERT INTO lct.db.fdel (id, text_payload, role, token_count) VALUES ('k011', 'short', 'user', 11)");
    java.util.function.Function<String, List<String>> ids = where -> spark.sql("SELECT id FROM lct.db.fdel WHERE " + where
        + " ORDER BY id").as(org.apache.spark.sql.Encoders.STRING()).collectAsList();
    for (String condition : List.of("length(text_payload) > 9", "isLongText(text_payload) AND role = 'user'",
        "upper(role) = 'TOOL' AND token_count < 30", "cast(token_count AS string) LIKE '%7'")) {
      List<String> matching = ids.apply(condition);
      List<String> rest = ids.apply("NOT (" + condition + ") OR (" + condition + ") IS NULL");
      assertFalse(matching.isEmpty(), condition);
      spark.sql("DELETE FROM lct.db.fdel WHERE " + condition);
      assertEquals(List.of(), ids.apply(condition), "no row matches " + condition + " any more");
      assertEquals(rest, ids.apply("true"), "exactly the matching keys were deleted by " + condition);
    }
    assertTrue(ids.apply("id = 'k011'").size() == 1, "k011 was updated to a short text before the first delete");
    try (ContextStore store = ContextStore.open(Map.of("path", dir.resolve("db/fdel").toString()))) {
      assertEquals(spark.table("lct.db.fdel").count(), store.count(), "core sees the same deletes");
    }
  }

  @Test
  void aDeleteWhoseConditionFailsOnSomeRowChangesNothing() {
    spark.udf().register("failsOnK050", (org.apache.spark.sql.api.java.UDF1<String, Boolean>) id -> {
      if (id.equals("k050")) {
        throw new IllegalStateException("injected failure while evaluating the DELETE condition");
      }
      return true;
    }, org.apache.spark.sql.types.DataTypes.BooleanType);
    spark.sql("CREATE TABLE lct.db.faildel (id STRING, role STRING) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '4', 'shards' = '1')");
    spark.sql("INSERT INTO lct.db.faildel (id, role) SELECT format_string('k%03d', id), 'user' FROM range(0, 100)");
    Exception e = assertThrows(Exception.class, () -> spark.sql("DELETE FROM lct.db.faildel WHERE failsOnK050(id)"));
    assertTrue(SparkWriteTest.messages(e).contains("injected failure"), SparkWriteTest.messages(e));
    assertEquals(100, spark.table("lct.db.faildel").count(), "the failed delete published nothing");
  }

  /** Set by the test below: the store the DELETE's condition upserts into once (local mode: tasks run here). */
  static volatile String upsertDuringDelete;

  /**
   * A DELETE whose condition Spark evaluates (a UDF) reads the rows first and publishes later: a key another
   * writer upserts in between, to a value the condition no longer matches, must not be deleted. The delete fails
   * with core's retryable conflict and changes nothing; run again, it deletes the rest.
   */
  @Test
  void aDeleteSparkEvaluatesConflictsWithAnUpsertBetweenItsReadAndItsCommitAndDeletesNothing() {
    String path = dir.resolve("db/racedel").toString();
    spark.sql("CREATE TABLE lct.db.racedel (id STRING, token_count INT) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '4', 'shards' = '2')");
    spark.sql("INSERT INTO lct.db.racedel (id, token_count) SELECT format_string('k%03d', id), cast(id AS int) "
        + "FROM range(0, 20)");
    upsertDuringDelete = path;
    spark.udf().register("smallAndRaced", (org.apache.spark.sql.api.java.UDF1<Integer, Boolean>) n -> {
      String p = upsertDuringDelete;
      if (p != null) {
        upsertDuringDelete = null;
        try (ContextStore s = ContextStore.open(Map.of("path", p))) {
          s.add(List.of(Map.of("id", "k003", "token_count", 99)));  // after the delete's read, before its commit
        }
      }
      return n != null && n < 10;
    }, org.apache.spark.sql.types.DataTypes.BooleanType);
    Exception e = assertThrows(Exception.class, () -> spark.sql("DELETE FROM lct.db.racedel WHERE smallAndRaced(token_count)"));
    assertTrue(SparkSaveModeTest.causes(e, io.lancecontext.core.error.CommitConflictException.class)
        && SparkWriteTest.messages(e).contains("'k003'"), SparkWriteTest.messages(e));
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(20, store.count(), "nothing was deleted");
      assertEquals(99, store.get("k003").orElseThrow().get("token_count"), "the concurrent upsert stands");
    }
    spark.sql("DELETE FROM lct.db.racedel WHERE smallAndRaced(token_count)");
    assertEquals(11, spark.table("lct.db.racedel").count(), "run again: k000..k009 but k003 deleted");
  }

  @Test
  void updateAndMergeAreRefusedAndChangeNothing() {
    spark.sql("CREATE TABLE lct.db.noupdate (id STRING, role STRING) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '4')");
    spark.sql("INSERT INTO lct.db.noupdate (id, role) VALUES ('a', 'user')");
    Exception e = assertThrows(Exception.class, () -> spark.sql("UPDATE lct.db.noupdate SET role = 'tool' WHERE id = 'a'"));
    assertTrue(SparkWriteTest.messages(e).contains("UPDATE is not supported"), SparkWriteTest.messages(e));
    assertEquals("user", spark.sql("SELECT role FROM lct.db.noupdate").first().getString(0));
  }

  @Test
  void deleteOnAStoreWithoutTombstonesFailsNamingTheCapabilityAndChangesNothing() {
    spark.sql("CREATE TABLE lct.db.nodelete (id STRING, reward DOUBLE) USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    spark.sql("INSERT INTO lct.db.nodelete (id, reward) VALUES ('a', 1.0), ('b', 2.0)");
    for (String condition : List.of("reward > 1.5", "abs(reward) > 1.5")) {  // core's filter path, and Spark's
      Exception e = assertThrows(Exception.class, () -> spark.sql("DELETE FROM lct.db.nodelete WHERE " + condition));
      assertTrue(SparkWriteTest.messages(e).contains("'tombstones' capability"), SparkWriteTest.messages(e));
      assertTrue(SparkSaveModeTest.causes(e, io.lancecontext.core.error.SchemaException.class), SparkWriteTest.messages(e));
    }
    assertEquals(2, spark.table("lct.db.nodelete").count());
  }

  @Test
  void createTableInANamespaceThatDoesNotExistCreatesTheNamespace() {
    assertFalse(spark.sql("SHOW NAMESPACES IN lct").collectAsList().stream().anyMatch(r -> r.getString(0).equals("fresh")));
    spark.sql("CREATE TABLE lct.fresh.t (id STRING, n INT) USING lancecontext");
    assertTrue(spark.sql("SHOW NAMESPACES IN lct").collectAsList().stream().anyMatch(r -> r.getString(0).equals("fresh")));
    spark.sql("INSERT INTO lct.fresh.t VALUES ('a', 1)");
    assertEquals(1, spark.sql("SELECT n FROM lct.fresh.t WHERE id = 'a'").first().getInt(0));
    spark.sql("CREATE TABLE lct.outer.inner.t USING lancecontext AS SELECT 'b' AS id, 2 AS n");
    assertEquals(List.of("t"), spark.sql("SHOW TABLES IN lct.outer.inner").collectAsList().stream()
        .map(r -> r.getString(1)).toList(), "nested namespaces are created too");
    Exception inStore = assertThrows(Exception.class,
        () -> spark.sql("CREATE TABLE lct.fresh.t.u (id STRING) USING lancecontext"));
    assertTrue(SparkWriteTest.messages(inStore).contains("is a store, not a namespace"), SparkWriteTest.messages(inStore));
    assertFalse(Files.exists(dir.resolve("fresh/t/u")), "no store is created inside a store");
  }

  @Test
  void insertWithAColumnListAndCtasOfFewerColumnsFillTheOmittedNullableColumnsWithNull() {
    spark.sql("CREATE TABLE lct.db.partial USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    spark.sql("INSERT INTO lct.db.partial (id, reward) SELECT 'a', 1.5");
    spark.sql("INSERT INTO lct.db.partial (reward, id) VALUES (2.5, 'b')");
    Row a = spark.sql("SELECT reward, rollout_id, num_tokens FROM lct.db.partial WHERE id = 'a'").first();
    assertEquals(1.5, a.getDouble(0));
    assertTrue(a.isNullAt(1) && a.isNullAt(2), a.toString());
    assertEquals(2.5, spark.sql("SELECT reward FROM lct.db.partial WHERE id = 'b'").first().getDouble(0), "by name");

    spark.sql("CREATE TABLE lct.db.ctaspartial USING lancecontext TBLPROPERTIES ('schema' = 'rollout') AS "
        + "SELECT format_string('k%02d', id) AS id, id * 0.5 AS reward FROM range(0, 4)");
    Row k = spark.sql("SELECT reward, rollout_id FROM lct.db.ctaspartial WHERE id = 'k03'").first();
    assertEquals(1.5, k.getDouble(0));
    assertTrue(k.isNullAt(1), k.toString());
    assertEquals(4, spark.table("lct.db.ctaspartial").count());
  }

  @Test
  void ctasCreatesATableFromAQuery() {
    spark.sql("CREATE TABLE lct.db.ctas USING lancecontext TBLPROPERTIES ('vector.emb.dim' = '2') AS "
        + "SELECT format_string('k%02d', id) AS id, array(cast(id AS float), 1.0f) AS emb, id * 2 AS n FROM range(0, 20)");
    assertEquals(20, spark.table("lct.db.ctas").count());
    assertEquals(14L, spark.sql("SELECT n FROM lct.db.ctas WHERE id = 'k07'").first().getLong(0));
    try (ContextStore store = ContextStore.open(Map.of("path", dir.resolve("db/ctas").toString()))) {
      assertEquals(ColumnType.VECTOR, store.spec().column("emb").type());
    }
    Exception again = assertThrows(Exception.class,
        () -> spark.sql("CREATE TABLE lct.db.ctas USING lancecontext AS SELECT 'x' AS id"));
    assertTrue(again.getMessage().contains("already exists"), again.getMessage());
  }

  @Test
  void describeTableExtendedShowsTheSpecShardsAndCapabilities() {
    spark.sql("CREATE TABLE lct.db.described USING lancecontext TBLPROPERTIES ('schema' = 'context', "
        + "'schema.embedding-dim' = '4', 'shards' = '2')");
    String props = tableProperties("lct.db.described");
    assertTrue(props.contains("shards=2") && props.contains("capabilities=lifecycle,supersession,tombstones")
        && props.contains("schema=context") && props.contains("spec="), props);
    // Spark redacts a property whose value matches spark.redaction.regex (the context spec names token_count)
    spark.sql("CREATE TABLE lct.db.described2 (id STRING NOT NULL, emb ARRAY<FLOAT>) USING lancecontext "
        + "TBLPROPERTIES ('vector.emb.dim' = '3')");
    String derived = tableProperties("lct.db.described2");
    assertTrue(derived.contains("spec={") && derived.contains("\"dim\":3") && derived.contains("shards=4"), derived);
    List<Row> tables = spark.sql("SHOW TABLES IN lct.db").collectAsList();
    assertTrue(tables.stream().anyMatch(r -> r.getString(1).equals("described")), tables.toString());
  }

  @Test
  void tablePropertiesAStoreDoesNotKeepAreRefusedNamingThemAndCreateNothing() {
    for (String property : List.of("gc.grace", "foo", "write.tasks", "storage.region")) {
      Exception e = assertThrows(Exception.class, () -> spark.sql("CREATE TABLE lct.db.props (id STRING, reward DOUBLE) "
          + "USING lancecontext TBLPROPERTIES ('schema' = 'rollout', '" + property + "' = '1h')"));
      String messages = SparkWriteTest.messages(e);
      assertTrue(messages.contains("option '" + property + "'") && messages.contains("schema, schema.embedding-dim, shards"),
          messages);
      assertFalse(Files.exists(dir.resolve("db").resolve("props")), property);
    }
  }

  private static String tableProperties(String table) {
    for (Row r : spark.sql("DESCRIBE TABLE EXTENDED " + table).collectAsList()) {
      if ("Table Properties".equals(r.getString(0))) {
        return r.getString(1);
      }
    }
    throw new AssertionError("no Table Properties in DESCRIBE TABLE EXTENDED " + table);
  }

  @Test
  void namesThatWouldEscapeTheWarehouseAreRefused() {
    for (String name : List.of("`..`", "`a/b`", "`.`", "`t#x`", "`t?x`", "`t%41`", "`t x`")) {
      Exception e = assertThrows(Exception.class,
          () -> spark.sql("CREATE TABLE lct.db." + name + " (id STRING) USING lancecontext"));
      assertTrue(SparkWriteTest.messages(e).contains("is not allowed"), SparkWriteTest.messages(e));
    }
    Exception ns = assertThrows(Exception.class, () -> spark.sql("CREATE NAMESPACE lct.`..`"));
    assertTrue(SparkWriteTest.messages(ns).contains("is not allowed"), SparkWriteTest.messages(ns));
    assertFalse(Files.exists(dir.getParent().resolve("a")));
  }

  @Test
  void theStatsProcedureReportsTheStore() {
    spark.sql("CREATE TABLE lct.db.st (id STRING, reward DOUBLE) USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    spark.sql("INSERT INTO lct.db.st (id, reward) VALUES ('a', 1.0), ('b', 2.0), ('c', 3.0)");
    Row stats = spark.sql("CALL lct.system.stats(table => 'db.st')").first();
    assertEquals(3L, stats.getLong(stats.fieldIndex("fresh_rows")) + stats.getLong(stats.fieldIndex("base_rows")),
        stats.toString());
  }

  @Test
  void compactMergesTheBaseFragmentsAndGcDeletesWhatNoSnapshotNeedsLeavingTheDataAsItWas() throws Exception {
    // gc.grace is no table property (a table keeps only its schema and shards): a catalog option sets it
    spark.conf().set("spark.sql.catalog.lctgc", LanceContextCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.lctgc.warehouse", dir.toString());
    spark.conf().set("spark.sql.catalog.lctgc.gc.grace", "0s");
    spark.sql("CREATE TABLE lctgc.db.compacted (id STRING, reward DOUBLE) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'rollout', 'shards' = '2')");
    for (int i = 0; i < 3; i++) {  // each merge appends fragments to the base table
      spark.sql("INSERT INTO lctgc.db.compacted (id, reward) SELECT format_string('k%03d', id), id + " + i
          + " FROM range(" + (i * 20) + ", " + (i * 20 + 40) + ")");
      spark.sql("CALL lctgc.system.merge(table => 'db.compacted')");
    }
    List<Row> before = spark.sql("SELECT id, reward FROM lctgc.db.compacted ORDER BY id").collectAsList();
    assertEquals(80, before.size());
    assertEquals(1.0 + 20, before.get(20).getDouble(1), "k020 written twice, the second value kept");
    long fragments = stat("lctgc", "db.compacted", "fragments");
    assertTrue(fragments >= 3, "three merges, three fragments at least: " + fragments);

    Row compacted = spark.sql("CALL lctgc.system.compact(table => 'db.compacted')").first();
    assertTrue(compacted.getBoolean(compacted.fieldIndex("ran")), compacted.toString());
    assertEquals(fragments, compacted.getInt(compacted.fieldIndex("fragments_before")), compacted.toString());
    int after = compacted.getInt(compacted.fieldIndex("fragments_after"));
    assertTrue(after < fragments, "fewer fragments: " + compacted);
    assertEquals(after, stat("lctgc", "db.compacted", "fragments"), "stats agree with what compact said");
    assertEquals(before, spark.sql("SELECT id, reward FROM lctgc.db.compacted ORDER BY id").collectAsList(), "same data");

    releaseFinishedScans(dir.resolve("db"));  // the queries above are done: nothing keeps their snapshots
    Row gc = spark.sql("CALL lctgc.system.gc(table => 'db.compacted')").first();
    assertTrue(gc.getBoolean(gc.fieldIndex("ran")), gc.toString());
    assertTrue(gc.getLong(gc.fieldIndex("base_versions_removed")) > 0, "the versions before the compaction: " + gc);
    assertTrue(gc.getInt(gc.fieldIndex("generation_dirs")) > 0, "the three merged generations: " + gc);
    assertTrue(gc.getLong(gc.fieldIndex("bytes_removed")) > 0, gc.toString());
    assertEquals(before, spark.sql("SELECT id, reward FROM lctgc.db.compacted ORDER BY id").collectAsList(), "same data");
    Row again = spark.sql("CALL lctgc.system.gc(table => 'db.compacted')").first();
    assertEquals(0L, again.getLong(again.fieldIndex("base_versions_removed")), "nothing left to remove: " + again);
    assertEquals(0, again.getInt(again.fieldIndex("generation_dirs")), again.toString());
  }

  private static long stat(String catalog, String table, String field) {
    Row stats = spark.sql("CALL " + catalog + ".system.stats(table => '" + table + "')").first();
    return ((Number) stats.get(stats.fieldIndex(field))).longValue();
  }

  @Test
  void writeToAppendUpsertsIntoACatalogTable() {
    spark.sql("CREATE TABLE lct.db.written (id STRING, rollout_id STRING, reward DOUBLE) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'rollout', 'shards' = '2')");
    org.apache.spark.sql.Dataset<Row> first = spark.range(0, 50).selectExpr("format_string('w%02d', id) AS id",
        "'r1' AS rollout_id", "cast(id AS double) AS reward");
    String plan = SparkPlans.text(SparkPlans.during(spark, () -> {
      try {
        first.writeTo("lct.db.written").append();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }));
    assertTrue(plan.contains("lancecontext.bucket") && plan.contains("), 2)"), "clustered by bucket: " + plan);
    try {
      spark.range(40, 60).selectExpr("format_string('w%02d', id) AS id", "'r2' AS rollout_id", "-1.0 AS reward")
          .writeTo("lct.db.written").append();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    List<Row> rows = spark.sql("SELECT id, rollout_id, reward FROM lct.db.written ORDER BY id").collectAsList();
    assertEquals(60, rows.size());
    assertEquals("[w39,r1,39.0]", rows.get(39).toString());
    assertEquals("[w40,r2,-1.0]", rows.get(40).toString(), "the second append replaced w40..w49");
    assertEquals("[w59,r2,-1.0]", rows.get(59).toString());
  }

  @Test
  void insertOverwriteReplacesTheContents() {
    spark.sql("CREATE TABLE lct.db.over (id STRING, role STRING) USING lancecontext "
        + "TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '4')");
    spark.sql("INSERT INTO lct.db.over (id, role) VALUES ('a', 'user'), ('b', 'user'), ('c', 'user')");
    spark.sql("INSERT OVERWRITE lct.db.over (id, role) VALUES ('c', 'tool'), ('d', 'tool')");
    List<Row> rows = spark.sql("SELECT id, role FROM lct.db.over ORDER BY id").collectAsList();
    assertEquals("[[c,tool], [d,tool]]", rows.toString());
  }
}
