package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.spark.catalog.LanceContextCatalog;
import java.util.List;
import java.util.Map;
import io.lancecontext.spark.search.SparkSearch;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Search from Spark SQL: the {@code vector_search} and {@code text_search} procedures and table functions return the
 * best rows of the LSM view (rows added a moment ago included, deleted and replaced ones never), best first.
 */
class SparkSearchTest extends SparkTest {

  @BeforeAll
  static void catalog() {
    spark.conf().set("spark.sql.catalog.lcv", LanceContextCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.lcv.warehouse", dir.toString());
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lcv.db");
  }

  private static List<String> ids(String sql) {
    return spark.sql(sql).collectAsList().stream().map(r -> r.getString(r.fieldIndex("id"))).toList();
  }

  @Test
  void theProcedureAndTheTableFunctionSeeRowsAddedAMomentAgo() {
    spark.sql("CREATE TABLE lcv.db.ctx USING lancecontext TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '3')");
    spark.sql("INSERT INTO lcv.db.ctx (id, embedding) VALUES ('x', array(1.0F, 0.0F, 0.0F)), ('y', array(0.0F, 1.0F, 0.0F)), "
        + "('z', array(0.0F, 0.0F, 1.0F))");
    spark.sql("CALL lcv.system.flush(table => 'db.ctx')");
    // a row added through core a moment ago, and a base row replaced by a newer version
    String path = dir.resolve("db").resolve("ctx").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      store.add(List.of(Map.of("id", "w", "embedding", new float[] {0.9f, 0.1f, 0f}),
          Map.of("id", "y", "embedding", new float[] {0f, 0f, -1f})));
    }
    assertEquals(List.of("x", "w", "z"),
        ids("CALL lcv.system.vector_search(table => 'db.ctx', column => 'embedding', vector => array(1.0, 0.05, 0.01), k => 3)"));
    assertEquals(List.of("x", "w"),
        ids("SELECT id, _distance FROM vector_search('lcv.db.ctx', 'embedding', array(1.0, 0.05, 0.0), 2)"));
    // a table function is a relation: it joins, filters and orders like one
    Row nearest = spark.sql("SELECT s.id, s._distance, c.id AS again FROM vector_search('lcv.db.ctx', 'embedding', "
        + "array(0, 0, -1)) s JOIN lcv.db.ctx c ON s.id = c.id WHERE s._distance < 0.5").first();
    assertEquals("y", nearest.getString(0));
    assertEquals(0f, nearest.getFloat(1), 1e-6);
    assertEquals(4L, spark.sql("SELECT count(*) FROM vector_search('" + path + "', 'embedding', array(1, 1, 1), 10)")
        .first().getLong(0), "by path; every live row once");
  }

  @Test
  void aFilterChoosesTheRowsSearchedBeforeTheNearestAreCut() {
    spark.sql("CREATE TABLE lcv.db.roles USING lancecontext TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '2')");
    spark.sql("INSERT INTO lcv.db.roles (id, role, token_count, embedding) VALUES "
        + "('a', 'tool', 5, array(1.0F, 0.0F)), ('b', 'user', 50, array(0.99F, 0.1F)), ('c', 'tool', 70, array(0.0F, 1.0F))");
    // the nearest tool row with more than 10 tokens is c, although a and b are nearer
    assertEquals(List.of("c"), ids("SELECT id FROM vector_search('lcv.db.roles', 'embedding', array(1.0, 0.0), 1, "
        + "'role = ''tool'' AND token_count > 10')"));
    assertEquals(List.of("a", "c"), ids("SELECT id FROM vector_search('lcv.db.roles', 'embedding', array(1.0, 0.0), 5, "
        + "'role IN (''tool'')')"));
    Exception unknown = assertThrows(Exception.class, () -> spark.sql("SELECT * FROM vector_search('lcv.db.roles', "
        + "'embedding', array(1.0, 0.0), 1, 'rol = 1')").collect());
    assertTrue(SparkWriteTest.messages(unknown).contains("rol"), SparkWriteTest.messages(unknown));
  }

  @Test
  void aDataFrameOfQueriesGetsTheNearestRowsOfEachInItsTasks() {
    String path = dir.resolve("batch").toString();
    Map<String, String> options = Map.of("path", path, "schema", "context", "schema.embedding-dim", "2");
    try (ContextStore store = ContextStore.open(options)) {
      store.add(List.of(Map.of("id", "east", "embedding", new float[] {1f, 0f}),
          Map.of("id", "north", "embedding", new float[] {0f, 1f}),
          Map.of("id", "west", "embedding", new float[] {-1f, 0f})));
      store.delete(List.of("west"));
    }
    StructType schema = new StructType().add("qid", DataTypes.StringType)
        .add("v", DataTypes.createArrayType(DataTypes.FloatType));
    Dataset<Row> queries = spark.createDataFrame(List.of(RowFactory.create("q1", List.of(0.9f, 0.1f)),
        RowFactory.create("q2", List.of(-0.1f, 1f)), RowFactory.create("q3", List.of(-1f, 0f))), schema).repartition(2);
    List<String> hits = SparkSearch.nearestPerQuery(queries, "v", options, "embedding", 2)
        .selectExpr("concat(qid, ':', rank, ':', hit.id)").collectAsList().stream().map(r -> r.getString(0)).sorted().toList();
    // west is deleted: never found, even by the query next to it
    assertEquals(List.of("q1:1:east", "q1:2:north", "q2:1:north", "q2:2:east", "q3:1:north", "q3:2:east"), hits);
    // a condition chooses the rows searched before the k nearest are cut: north alone, even for q1 next to east
    List<String> filtered = SparkSearch.nearestPerQuery(queries, "v", options, "embedding", 2, "id = 'north'")
        .selectExpr("concat(qid, ':', rank, ':', hit.id)").collectAsList().stream().map(r -> r.getString(0)).sorted().toList();
    assertEquals(List.of("q1:1:north", "q2:1:north", "q3:1:north"), filtered);
    Exception bad = assertThrows(Exception.class,
        () -> SparkSearch.nearestPerQuery(queries, "v", options, "embedding", 2, "no_such_column = 1"));
    assertTrue(SparkWriteTest.messages(bad).contains("no_such_column"), SparkWriteTest.messages(bad));
  }

  @Test
  void textSearchFindsTheBestMatchingRowsAddedAMomentAgoToo() {
    spark.sql("CREATE TABLE lcv.db.notes USING lancecontext TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '2')");
    spark.sql("INSERT INTO lcv.db.notes (id, role, text_payload) VALUES ('a', 'tool', 'tool error: retry'), "
        + "('b', 'user', 'plan the next step'), ('c', 'tool', 'tool timeout'), ('d', 'user', 'error error error')");
    spark.sql("CALL lcv.system.flush(table => 'db.notes')");
    String path = dir.resolve("db").resolve("notes").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      store.add(List.of(Map.of("id", "e", "role", "tool", "text_payload", "Tool ERROR again"),
          Map.of("id", "d", "role", "user", "text_payload", "all good now")));   // d no longer matches
    }
    assertEquals(List.of("a", "e", "c"),
        ids("CALL lcv.system.text_search(table => 'db.notes', column => 'text_payload', text => 'tool error', k => 5)"));
    assertEquals(List.of("a", "e"), ids("SELECT id, _score FROM text_search('lcv.db.notes', 'text_payload', "
        + "'error', 10, 'role = ''tool''')"));
    Row best = spark.sql("SELECT id, _score FROM text_search('" + path + "', 'text_payload', 'timeout', 1)").first();
    assertEquals("c", best.getString(0));
    assertTrue(best.getFloat(1) > 0, "a score");
    Exception notText = assertThrows(Exception.class, () -> spark.sql("SELECT * FROM text_search('lcv.db.notes', "
        + "'token_count', 'tool')").collect());
    assertTrue(SparkSaveModeTest.causes(notText, SchemaException.class), SparkWriteTest.messages(notText));
    // the batch form: a DataFrame of questions, each searched in its task; a null text and one without a term find nothing
    StructType schema = new StructType().add("qid", DataTypes.StringType).add("q", DataTypes.StringType);
    Dataset<Row> questions = spark.createDataFrame(List.of(RowFactory.create("q1", "tool error"),
        RowFactory.create("q2", "good"), RowFactory.create("q3", null), RowFactory.create("q4", "?!")), schema)
        .repartition(2);
    Map<String, String> options = Map.of("path", path);
    assertEquals(List.of("q1:1:a", "q1:2:e", "q2:1:d"), SparkSearch.bestMatchesPerQuery(questions, "q", options,
        "text_payload", 2).selectExpr("concat(qid, ':', rank, ':', hit.id)").collectAsList().stream()
        .map(r -> r.getString(0)).sorted().toList());
    assertEquals(List.of("q1:1:c"), SparkSearch.bestMatchesPerQuery(questions, "q", options, "text_payload", 2,
        "id = 'c'").selectExpr("concat(qid, ':', rank, ':', hit.id)").collectAsList().stream()
        .map(r -> r.getString(0)).sorted().toList());
    assertTrue(SparkSearch.bestMatchesPerQuery(questions, "q", options, "text_payload", 1).select("hit._score")
        .collectAsList().stream().allMatch(r -> r.getFloat(0) > 0), "scores");
  }

  @Test
  void hybridSearchFusesBothRankingsOfRowsAddedAMomentAgoToo() {
    spark.sql("CREATE TABLE lcv.db.mixed USING lancecontext TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '2')");
    spark.sql("INSERT INTO lcv.db.mixed (id, role, text_payload, embedding) VALUES "
        + "('a', 'tool', 'tool error', array(1.0F, 0.0F)), ('b', 'user', 'plan accepted', array(0.9F, 0.1F)), "
        + "('c', 'tool', 'tool error again', array(-1.0F, 0.0F))");
    String path = dir.resolve("db").resolve("mixed").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      store.add(List.of(Map.of("id", "d", "role", "tool", "text_payload", "tool error", "embedding", new float[] {1f, 0f})));
    }
    // a and d are first in both rankings, then b (vector only) and c (text only)
    List<String> ids = spark.sql("SELECT id FROM hybrid_search('lcv.db.mixed', 'embedding', array(1.0, 0.0), "
        + "'text_payload', 'tool error', 4)").collectAsList().stream().map(r -> r.getString(0)).toList();
    assertEquals(4, ids.size(), ids.toString());
    assertEquals(java.util.Set.of("a", "d"), java.util.Set.copyOf(ids.subList(0, 2)), ids.toString());
    Row best = spark.sql("SELECT id, _relevance_score FROM hybrid_search('lcv.db.mixed', 'embedding', array(1.0, 0.0), "
        + "'text_payload', 'plan', 1, 'role = ''user''')").first();
    assertEquals("b", best.getString(0), "the filter chooses the rows both searches rank");
    assertTrue(best.getFloat(1) > 0, "a relevance");
    Exception arity = assertThrows(Exception.class, () -> spark.sql("SELECT * FROM hybrid_search('lcv.db.mixed', "
        + "'embedding', array(1.0, 0.0))").collect());
    assertTrue(SparkWriteTest.messages(arity).contains("vector_column"), SparkWriteTest.messages(arity));
  }

  @Test
  void badArgumentsNameWhatIsWrong() {
    spark.sql("CREATE TABLE lcv.db.bad USING lancecontext TBLPROPERTIES ('schema' = 'context', 'schema.embedding-dim' = '3')");
    Exception dim = assertThrows(Exception.class,
        () -> spark.sql("SELECT * FROM vector_search('lcv.db.bad', 'embedding', array(1.0, 2.0), 2)").collect());
    assertTrue(SparkSaveModeTest.causes(dim, SchemaException.class), SparkWriteTest.messages(dim));
    assertTrue(SparkWriteTest.messages(dim).contains("embedding"), SparkWriteTest.messages(dim));
    Exception column = assertThrows(Exception.class, () -> spark.sql("CALL lcv.system.vector_search(table => 'db.bad', "
        + "column => 'role', vector => array(1, 2, 3), k => 2)").collect());
    assertTrue(SparkSaveModeTest.causes(column, SchemaException.class), SparkWriteTest.messages(column));
    assertTrue(SparkWriteTest.messages(column).contains("role"), SparkWriteTest.messages(column));
    Exception notOurs = assertThrows(Exception.class,
        () -> spark.sql("SELECT * FROM vector_search('spark_catalog.default.t', 'embedding', array(1.0), 2)").collect());
    assertTrue(SparkWriteTest.messages(notOurs).contains("not a table of a lancecontext catalog"),
        SparkWriteTest.messages(notOurs));
  }
}
