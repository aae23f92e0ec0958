package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SnapshotNotFoundException;
import io.lancecontext.spark.catalog.LanceContextCatalog;
import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Snapshots from Spark: {@code CALL ...snapshot/tag/drop_tag/tags}, {@code VERSION AS OF '<token or tag>'} and
 * {@code option("snapshot", ...)} read the store as it was, after writes, merges and compaction.
 */
class SparkSnapshotTest extends SparkTest {

  @BeforeAll
  static void catalog() {
    spark.conf().set("spark.sql.catalog.lcs", LanceContextCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.lcs.warehouse", dir.toString());
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lcs.db");
  }

  private static List<String> rows(String sql) {
    return spark.sql(sql).collectAsList().stream().map(Row::toString).sorted().toList();
  }

  @Test
  void versionAsOfAndTheSnapshotOptionReadTheStoreAsItWas() {
    spark.sql("CREATE TABLE lcs.db.steps (id STRING, reward DOUBLE) USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    spark.sql("INSERT INTO lcs.db.steps (id, reward) VALUES ('a', 1.0), ('b', 2.0)");
    List<String> before = rows("SELECT id, reward FROM lcs.db.steps");
    Row taken = spark.sql("CALL lcs.system.snapshot(table => 'db.steps')").first();
    String token = taken.getString(taken.fieldIndex("token"));
    assertTrue(token.startsWith("lc."), token);
    Row tagged = spark.sql("CALL lcs.system.tag(table => 'db.steps', tag => 'step-1')").first();
    assertEquals("step-1", tagged.getString(tagged.fieldIndex("tag")));

    spark.sql("INSERT INTO lcs.db.steps (id, reward) VALUES ('a', 10.0), ('c', 3.0)");
    spark.sql("CALL lcs.system.flush(table => 'db.steps')");
    spark.sql("CALL lcs.system.compact(table => 'db.steps')");
    assertEquals(List.of("[a,10.0]", "[b,2.0]", "[c,3.0]"), rows("SELECT id, reward FROM lcs.db.steps"));

    assertEquals(before, rows("SELECT id, reward FROM lcs.db.steps VERSION AS OF '" + token + "'"));
    assertEquals(before, rows("SELECT id, reward FROM lcs.db.steps VERSION AS OF 'step-1'"));
    String path = dir.resolve("db").resolve("steps").toString();
    assertEquals(before, spark.read().format("lancecontext").option("snapshot", "step-1").load(path)
        .select("id", "reward").collectAsList().stream().map(Row::toString).sorted().toList());
    assertEquals(1L, spark.sql("SELECT count(*) FROM lcs.db.steps VERSION AS OF '" + token + "' WHERE reward > 1.5")
        .first().getLong(0));

    // a second tag of the token; the listing; dropping one
    spark.sql("CALL lcs.system.tag(table => 'db.steps', tag => 'same', snapshot => '" + token + "')");
    assertEquals(List.of("same", "step-1"), spark.sql("CALL lcs.system.tags(table => 'db.steps')").collectAsList()
        .stream().map(r -> r.getString(r.fieldIndex("tag"))).sorted().toList());
    Row dropped = spark.sql("CALL lcs.system.drop_tag(table => 'db.steps', tag => 'step-1')").first();
    assertTrue(dropped.getBoolean(dropped.fieldIndex("dropped")));
    Exception gone = assertThrows(Exception.class,
        () -> spark.sql("SELECT * FROM lcs.db.steps VERSION AS OF 'step-1'").collect());
    assertTrue(SparkSaveModeTest.causes(gone, SnapshotNotFoundException.class), SparkWriteTest.messages(gone));
    assertEquals(before, rows("SELECT id, reward FROM lcs.db.steps VERSION AS OF 'same'"));

    // a write never goes to a snapshot
    Exception write = assertThrows(Exception.class, () -> spark.sql("SELECT 'z' AS id, 1.0 AS reward").write()
        .format("lancecontext").option("snapshot", "same").mode("append").save(path));
    assertTrue(SparkSaveModeTest.causes(write, BadOptionException.class), SparkWriteTest.messages(write));
    assertFalse(rows("SELECT id FROM lcs.db.steps").contains("[z]"));
  }
}
