package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.schema.ColumnType;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * Round trips written through Spark and read back through Spark, value by value: the {@code datagen} preset
 * (key {@code event_id}) and a user spec with struct, list, vector and blob columns, nulls included.
 */
class SparkRoundTripTest extends SparkTest {
  private static String store(String name) {
    return dir.resolve(name).toString();
  }

  /** The rows Spark reads back from {@code path}, in key order, as {@code columns}. */
  private static List<Row> readBack(String path, String key, String[] columns) {
    return spark.read().format("lancecontext").load(path).selectExpr(columns).orderBy(key).collectAsList();
  }

  /** Row by row (Spark's Row equality compares binary by content and lists and structs by value). */
  private static void assertSameRows(List<Row> want, List<Row> got) {
    assertEquals(want.size(), got.size(), "rows");
    for (int i = 0; i < want.size(); i++) {
      assertEquals(want.get(i), got.get(i), "row " + i);
    }
  }

  @Test
  void theDatagenPresetRoundTripsEveryTypeItHas() {
    String path = store("datagen");
    String[] columns = {"event_id", "run_id", "step", "created_at", "duration_ms", "prompt_text", "output_binary",
        "input_ids", "filter_passed", "num_tokens_in", "quality_score", "seed", "tags", "embedding"};
    Dataset<Row> rows = spark.range(0, 40, 1, 2).selectExpr(
        "format_string('e%03d', id) AS event_id",
        "concat('run-', id % 3) AS run_id",
        "id * 10 AS step",
        "timestamp_micros(1700000000000000 + id * 1000001) AS created_at",
        "id / 4.0D AS duration_ms",
        "IF(id % 5 = 0, NULL, repeat('p', cast(id AS int) + 1)) AS prompt_text",
        "IF(id % 7 = 0, NULL, unhex(concat('00ff', lpad(hex(id), 4, '0')))) AS output_binary",
        "IF(id % 6 = 0, NULL, array(concat('in', id), 'x')) AS input_ids",
        "id % 2 = 0 AS filter_passed",
        "cast(id AS int) AS num_tokens_in",
        "IF(id % 4 = 0, NULL, id * 0.5D) AS quality_score",
        "id * 1000000007 AS seed",
        "array_repeat('t', cast(id % 3 AS int)) AS tags",
        "array(cast(id AS float), -1.5f, 0.25f, cast(id * id AS float)) AS embedding");
    rows.write().format("lancecontext").option("schema", "datagen").option("schema.embedding-dim", "4")
        .mode("append").save(path);

    List<Row> want = rows.orderBy("event_id").collectAsList();
    assertSameRows(want, readBack(path, "event_id", columns));
    Dataset<Row> back = spark.read().format("lancecontext").load(path);
    assertEquals(DataTypes.BinaryType, back.schema().apply("output_binary").dataType());
    assertEquals(new ArrayType(DataTypes.FloatType, true), back.schema().apply("embedding").dataType());
    assertEquals(0, back.where("error_message IS NOT NULL OR retry_count IS NOT NULL").count(),
        "columns the write did not name are null");
    assertEquals(33, back.schema().fields().length, "every column of the preset");
  }

  private static final String USER_SPEC = "{\"key\": \"id\", \"columns\": ["
      + "{\"name\": \"id\", \"type\": \"string\", \"nullable\": false},"
      + "{\"name\": \"meta\", \"type\": \"struct\", \"fields\": [{\"name\": \"step\", \"type\": \"int32\"},"
      + "  {\"name\": \"note\", \"type\": \"string\"}, {\"name\": \"tags\", \"type\": \"list\", \"item\": {\"type\": \"string\"}}]},"
      + "{\"name\": \"tokens\", \"type\": \"list\", \"item\": {\"type\": \"int32\"}},"
      + "{\"name\": \"calls\", \"type\": \"list\", \"item\": {\"type\": \"struct\", \"fields\": ["
      + "  {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"weight\", \"type\": \"float64\"}]}},"
      + "{\"name\": \"emb\", \"type\": \"vector\", \"dim\": 3, \"metric\": \"l2\"},"
      + "{\"name\": \"image\", \"type\": \"large_binary\", \"blob\": true},"
      + "{\"name\": \"score\", \"type\": \"float32\"}]}";

  @Test
  void aUserSpecWithStructListVectorAndBlobColumnsRoundTrips() {
    String path = store("user-spec");
    Dataset<Row> rows = spark.range(0, 30, 1, 3).selectExpr(
        "format_string('u%02d', id) AS id",
        "IF(id % 4 = 3, NULL, named_struct('step', cast(id AS int), 'note', IF(id % 5 = 0, NULL, concat('n', id)), "
            + "'tags', array('a', concat('b', id)))) AS meta",
        "IF(id % 6 = 5, NULL, sequence(0, cast(id % 4 AS int))) AS tokens",
        "array(named_struct('name', 'search', 'weight', id * 0.25D), named_struct('name', concat('f', id), 'weight', -1.0D)) AS calls",
        "array(cast(id AS float), 2.0f, -3.5f) AS emb",
        // blobs of a few bytes and of 100 KiB (Lance's blob encoding stores large values out of line)
        "IF(id % 3 = 2, NULL, IF(id % 10 = 0, cast(repeat(cast(id AS string), 102400) AS binary), "
            + "unhex(concat('cafe', lpad(hex(id), 2, '0'))))) AS image",
        "cast(id AS float) / 8 AS score");
    rows.write().format("lancecontext").option("schema", USER_SPEC).mode("append").save(path);

    try (ContextStore s = ContextStore.open(Map.of("path", path))) {
      assertTrue(s.spec().column("image").blob(), "image is a blob column");
      assertEquals(ColumnType.VECTOR, s.spec().column("emb").type());
      assertEquals(30, s.count());
    }
    String[] columns = {"id", "meta", "tokens", "calls", "emb", "image", "score"};
    List<Row> want = rows.orderBy("id").collectAsList();
    List<Row> got = readBack(path, "id", columns);
    assertSameRows(want, got);
    assertEquals(102400 * 2, ((byte[]) got.get(10).getAs("image")).length, "a large blob reads back whole");
    StructType schema = spark.read().format("lancecontext").load(path).schema();
    assertEquals("l2", schema.apply("emb").metadata().getString(SparkSchemas.VECTOR_METRIC));
    // nested fields read through pushdown and projection too
    assertEquals(List.of("u06"), spark.read().format("lancecontext").load(path).where("meta.step = 6")
        .select("id").as(org.apache.spark.sql.Encoders.STRING()).collectAsList());
    Row one = spark.read().format("lancecontext").load(path).where("id = 'u01'").select("meta.tags", "image").first();
    assertEquals(List.of("a", "b1"), one.getList(0));
    assertTrue(Arrays.equals(new byte[] {(byte) 0xca, (byte) 0xfe, 0x01}, (byte[]) one.get(1)));
  }
}
