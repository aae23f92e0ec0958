package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SnapshotNotFoundException;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.spark.catalog.LanceContextCatalog;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * Incremental batch reads from Spark: {@code option("since", token)} (with {@code option("snapshot", to)} or up to
 * now) returns the rows added or changed in between and, with capability tombstones, the deleted keys marked by
 * {@code _lc_deleted}, across merges, compaction and garbage collection; a write refuses the option by name.
 */
class SparkIncrementalReadTest extends SparkTest {

  private static Map<String, Object> rec(String id, int tokens) {
    return Map.of("id", id, "token_count", tokens);
  }

  /** id -> token_count for changed rows, id -> "deleted" for deleted keys. */
  private static Map<String, Object> read(String path, String since, String to) {
    var reader = spark.read().format("lancecontext").option("since", since);
    if (to != null) {
      reader = reader.option("snapshot", to);
    }
    Dataset<Row> df = reader.load(path).select("id", "token_count", ScanSpec.DELETED);
    Map<String, Object> out = new TreeMap<>();
    for (Row r : df.collectAsList()) {
      Object was = out.put(r.getString(0), r.getBoolean(2) ? "deleted" : (Object) r.getInt(1));
      assertEquals(null, was, "a key is reported once: " + r);
    }
    return out;
  }

  @Test
  void sinceReadsWhatChangedAcrossMergesCompactionAndGc() throws Exception {
    String path = dir.resolve("incremental").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "context", "schema.embedding-dim", "4",
        "shards", "2", "gc.grace", "1s", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      List<Map<String, Object>> first = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        first.add(rec("k" + i, i));
      }
      store.add(first);
      store.seal();
      store.merge();
      String t0 = store.snapshot().token();
      store.add(List.of(rec("k1", 101), rec("new", 1)));
      store.delete(List.of("k2"));
      String t1 = store.snapshot().token();
      store.seal();
      store.merge();
      store.add(List.of(rec("k3", 103)));
      store.compact();
      Thread.sleep(1_100);
      store.gc();

      assertEquals(Map.of("k1", 101, "new", 1, "k2", "deleted"), read(path, t0, t1));
      assertEquals(Map.of("k1", 101, "new", 1, "k2", "deleted", "k3", 103), read(path, t0, null));
      assertEquals(Map.of("k3", 103), read(path, t1, null));
      assertEquals(Map.of(), read(path, t1, t1), "nothing changed between a snapshot and itself");

      // the schema: every column nullable, _lc_deleted last; a filter applies to the changed rows
      StructType schema = spark.read().format("lancecontext").option("since", t0).load(path).schema();
      assertEquals(ScanSpec.DELETED, schema.fields()[schema.fields().length - 1].name());
      assertTrue(schema.apply("id").nullable());
      assertEquals(List.of("k3"), spark.read().format("lancecontext").option("since", t0).load(path)
          .where("token_count > 102 AND NOT " + ScanSpec.DELETED).select("id").collectAsList().stream()
          .map(r -> r.getString(0)).toList());
      assertEquals(4L, spark.read().format("lancecontext").option("since", t0).load(path).count());

      // a write refuses the option by name, and writes nothing
      Exception write = assertThrows(Exception.class, () -> spark.sql("SELECT 'z' AS id, 1 AS token_count").write()
          .format("lancecontext").option("since", t0).mode("append").save(path));
      assertTrue(SparkSaveModeTest.causes(write, BadOptionException.class), SparkWriteTest.messages(write));
      assertTrue(SparkWriteTest.messages(write).contains("since"), SparkWriteTest.messages(write));
      assertFalse(store.get("z").isPresent());

      Exception late = assertThrows(Exception.class, () -> read(path, t1, t0));
      assertTrue(SparkWriteTest.messages(late).contains("must not be later"), SparkWriteTest.messages(late));
      Exception unknown = assertThrows(Exception.class, () -> read(path, "no-such-tag", null));
      assertTrue(SparkSaveModeTest.causes(unknown, SnapshotNotFoundException.class), SparkWriteTest.messages(unknown));
    }
  }

  @Test
  void aCatalogTableReadRefusesSinceByName() {
    spark.conf().set("spark.sql.catalog.lci", LanceContextCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.lci.warehouse", dir.toString());
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lci.db");
    spark.sql("CREATE TABLE lci.db.t (id STRING, reward DOUBLE) USING lancecontext TBLPROPERTIES ('schema' = 'rollout')");
    spark.sql("INSERT INTO lci.db.t (id, reward) VALUES ('a', 1.0)");
    Exception e = assertThrows(Exception.class,
        () -> spark.read().option("since", "step-1").table("lci.db.t").collect());
    assertTrue(SparkSaveModeTest.causes(e, BadOptionException.class), SparkWriteTest.messages(e));
  }
}
