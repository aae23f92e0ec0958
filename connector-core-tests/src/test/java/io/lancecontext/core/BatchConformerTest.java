package io.lancecontext.core;

import static io.lancecontext.core.ArrowBatches.batch;
import static io.lancecontext.core.ArrowBatches.binary;
import static io.lancecontext.core.ArrowBatches.bool;
import static io.lancecontext.core.ArrowBatches.date;
import static io.lancecontext.core.ArrowBatches.fixedList;
import static io.lancecontext.core.ArrowBatches.float32;
import static io.lancecontext.core.ArrowBatches.float64;
import static io.lancecontext.core.ArrowBatches.int16;
import static io.lancecontext.core.ArrowBatches.int32;
import static io.lancecontext.core.ArrowBatches.int64;
import static io.lancecontext.core.ArrowBatches.largeBinary;
import static io.lancecontext.core.ArrowBatches.largeList;
import static io.lancecontext.core.ArrowBatches.largeUtf8;
import static io.lancecontext.core.ArrowBatches.list;
import static io.lancecontext.core.ArrowBatches.struct;
import static io.lancecontext.core.ArrowBatches.timestamp;
import static io.lancecontext.core.ArrowBatches.utf8;
import static io.lancecontext.core.StoreTestSupport.inEveryTier;
import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.testing.RecordAssertions.assertRecordEqual;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.testing.AllocatorExtension;
import io.lancecontext.core.testing.StoreTest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Arrow batches in a user schema, shaped as Spark's ArrowWriter and Flink's Arrow utils write them,
 * conformed to the dataset layout by name, written through a handle and read back equal; and every
 * refusal, with nothing written.
 */
class BatchConformerTest extends StoreTest {
  @RegisterExtension
  final AllocatorExtension arrow = new AllocatorExtension();

  static final String SPEC = "{\"columns\":["
      + "{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"created_at\",\"type\":\"timestamp\"},"
      + "{\"name\":\"updated_at\",\"type\":\"timestamp\"},"
      + "{\"name\":\"title\",\"type\":\"string\"},"
      + "{\"name\":\"text\",\"type\":\"large_string\"},"
      + "{\"name\":\"image\",\"type\":\"large_binary\",\"blob\":true},"
      + "{\"name\":\"thumb\",\"type\":\"binary\"},"
      + "{\"name\":\"embedding\",\"type\":\"vector\",\"dim\":4,\"metric\":\"cosine\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"},"
      + "{\"name\":\"i\",\"type\":\"int32\"},"
      + "{\"name\":\"score\",\"type\":\"float64\"},"
      + "{\"name\":\"ratio\",\"type\":\"float32\"},"
      + "{\"name\":\"flag\",\"type\":\"bool\"},"
      + "{\"name\":\"day\",\"type\":\"date\"},"
      + "{\"name\":\"tags\",\"type\":\"list\",\"item\":{\"type\":\"string\"}},"
      + "{\"name\":\"meta\",\"type\":\"struct\",\"fields\":[{\"name\":\"step\",\"type\":\"int32\"},"
      + "{\"name\":\"note\",\"type\":\"string\"}]}]}";

  private static final long T0_MICROS = 1_700_000_000_123_456L;

  /** Spark's ArrowWriter: Utf8, Binary, Timestamp(MICROSECOND, "UTC"), List for arrays, everything nullable, its own column order. */
  static Schema sparkSchema() {
    return new Schema(List.of(utf8("title"), int64("n"), utf8("id"), timestamp("created_at", TimeUnit.MICROSECOND, "UTC"),
        timestamp("updated_at", TimeUnit.MICROSECOND, "UTC"), utf8("text"), binary("image"), binary("thumb"),
        list("embedding", float32("element")), int32("i"), float64("score"), float32("ratio"), bool("flag"), date("day"),
        list("tags", utf8("element")), struct("meta", int32("step"), utf8("note"))));
  }

  static Map<String, Object> sparkRow(int r) {
    Map<String, Object> m = new HashMap<>();
    m.put("id", "spark-" + r);
    m.put("created_at", T0_MICROS + r);
    m.put("updated_at", r % 2 == 0 ? null : T0_MICROS - r);
    m.put("title", "t" + r);
    m.put("text", "long text " + r + " ✓ 𝄞");
    m.put("image", new byte[] {(byte) r, 1, 2});
    m.put("thumb", r % 3 == 0 ? null : new byte[] {9, (byte) r});
    m.put("embedding", List.of(r + 0.5f, 1f, -2f, 3.25f));
    m.put("n", r % 4 == 0 ? null : (long) r << 40);
    m.put("i", r - 3);
    m.put("score", r / 3.0);
    m.put("ratio", r / 7f);
    m.put("flag", r % 2 == 0);
    m.put("day", 19_000 + r);
    m.put("tags", r % 5 == 0 ? null : List.of("a" + r, "b"));
    Map<String, Object> meta = new HashMap<>();
    meta.put("step", r);
    meta.put("note", r % 2 == 0 ? null : "n" + r);
    m.put("meta", r == 1 ? null : meta);
    return m;
  }

  /** What a store returns for {@link #sparkRow}. */
  static Map<String, Object> sparkExpected(int r) {
    Map<String, Object> in = sparkRow(r);
    Map<String, Object> m = new LinkedHashMap<>(in);
    m.put("created_at", micros(T0_MICROS + r));
    m.put("updated_at", in.get("updated_at") == null ? null : micros(T0_MICROS - r));
    m.put("embedding", new float[] {r + 0.5f, 1f, -2f, 3.25f});
    m.put("day", LocalDate.ofEpochDay(19_000 + r));
    return m;
  }

  static Instant micros(long micros) {
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  @Test
  void sparkShapedBatchesAreConformedWrittenAndReadBackEqual() {
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC));
        VectorSchemaRoot batch = batch(sparkSchema(), rows(8, BatchConformerTest::sparkRow), arrow.allocator());
        StoreWriter w = store.newWriter()) {
      w.write(batch);
      assertEquals(8, w.commit().rowsWritten());
      assertEquals(8, batch.getRowCount(), "the caller's batch is left as it was");
      inEveryTier(store, () -> {
        for (int r = 0; r < 8; r++) {
          assertRecordEqual(sparkExpected(r), store.get("spark-" + r).orElseThrow());
        }
      });
    }
  }

  /**
   * Flink's Arrow utils: Utf8 (LargeUtf8 where a writer uses it), Timestamp(MILLISECOND / NANOSECOND, no
   * zone), SMALLINT and FLOAT into wider columns, a FixedSizeList and a LargeList, columns left out.
   */
  @Test
  void flinkShapedBatchesAreConformedWrittenAndReadBackEqual() {
    Schema flink = new Schema(List.of(largeUtf8("id"), timestamp("created_at", TimeUnit.MILLISECOND, null),
        timestamp("updated_at", TimeUnit.NANOSECOND, null), largeUtf8("title"), largeUtf8("text"), largeBinary("image"),
        fixedList("embedding", 4, float32("element")), int64("n"), int16("i"), float32("score"), float32("ratio"),
        largeList("tags", largeUtf8("element"))));
    long millis = 1_700_000_000_123L;
    long nanos = 1_700_000_000_123_456_789L;
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int r = 0; r < 5; r++) {
      Map<String, Object> m = new HashMap<>();
      m.put("id", "flink-" + r);
      m.put("created_at", millis + r);
      m.put("updated_at", nanos - r);
      m.put("title", "t" + r);
      m.put("text", "x".repeat(r));
      m.put("image", new byte[r]);
      m.put("embedding", List.of(1f, 2f, 3f, (float) r));
      m.put("n", (long) -r);
      m.put("i", (short) (r * 1000));
      m.put("score", 0.1f * r);
      m.put("ratio", r % 2 == 0 ? null : 0.5f);
      m.put("tags", List.of("only"));
      rows.add(m);
    }
    try (ContextStore store = ContextStore.open(options(dir, "f", SPEC));
        VectorSchemaRoot batch = batch(flink, rows, arrow.allocator());
        StoreWriter w = store.newWriter()) {
      w.write(batch);
      w.commit();
      for (int r = 0; r < 5; r++) {
        Map<String, Object> got = store.get("flink-" + r).orElseThrow();
        assertEquals(Instant.ofEpochMilli(millis + r), got.get("created_at"));
        assertEquals(micros(Math.floorDiv(nanos - r, 1000)), got.get("updated_at"), "nanoseconds truncated to micros");
        assertEquals("t" + r, got.get("title"));
        assertEquals("x".repeat(r), got.get("text"));
        assertEquals(r * 1000, got.get("i"));
        assertEquals((double) (0.1f * r), got.get("score"), "float32 widened exactly");
        assertEquals(List.of("only"), got.get("tags"));
        assertEquals(-r, ((Long) got.get("n")).intValue());
        assertEquals(null, got.get("thumb"), "a column the batch lacks is null");
        assertEquals(null, got.get("meta"));
        assertEquals((float) r, ((float[]) got.get("embedding"))[3]);
      }
    }
  }

  @Test
  void anArrowReaderIsWrittenBatchByBatch() throws Exception {
    ByteArrayOutputStream ipc = new ByteArrayOutputStream();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(sparkSchema(), arrow.allocator());
        ArrowStreamWriter writer = new ArrowStreamWriter(root, null, ipc)) {
      writer.start();
      for (int b = 0; b < 3; b++) {
        int base = b * 4;
        try (VectorSchemaRoot part = batch(sparkSchema(), rows(4, r -> sparkRow(base + r)), arrow.allocator())) {
          try (var rb = new org.apache.arrow.vector.VectorUnloader(part).getRecordBatch()) {
            new org.apache.arrow.vector.VectorLoader(root).load(rb);
          }
        }
        writer.writeBatch();
      }
      writer.end();
    }
    try (ContextStore store = ContextStore.open(options(dir, "r", SPEC));
        ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(ipc.toByteArray()), arrow.allocator());
        StoreWriter w = store.newWriter()) {
      w.write(reader);
      assertEquals(12, w.commit().rowsWritten());
      for (int r = 0; r < 12; r++) {
        assertRecordEqual(sparkExpected(r), store.get("spark-" + r).orElseThrow());
      }
    }
  }

  @Test
  void theUserSchemaIsTheDeclaredColumnsAndABatchInItIsWrittenAsItIs() {
    try (ContextStore store = ContextStore.open(options(dir, "u", SPEC))) {
      Schema user = store.spec().toUserArrowSchema();
      assertEquals(store.spec().columnNames(), user.getFields().stream().map(Field::getName).toList());
      assertFalse(user.getFields().stream().anyMatch(f -> f.getName().startsWith("_lc_")));
      assertTrue(user.getCustomMetadata() == null || user.getCustomMetadata().isEmpty(), "no spec in the metadata");
      List<Map<String, Object>> rows = rows(3, BatchConformerTest::sparkRow);
      try (VectorSchemaRoot batch = batch(user, rows, arrow.allocator())) {
        assertEquals(3, store.add(batch), "ContextStore.add conforms a user-schema batch too");
      }
      for (int r = 0; r < 3; r++) {
        assertRecordEqual(sparkExpected(r), store.get("spark-" + r).orElseThrow());
      }
    }
  }

  @Test
  void aBatchWithoutTheKeyColumnGetsGeneratedKeys() {
    Schema keyless = new Schema(List.of(utf8("title"), int64("n")));
    try (ContextStore store = ContextStore.open(options(dir, "k", SPEC));
        VectorSchemaRoot batch = batch(keyless, rows(4, r -> new HashMap<>(Map.of("title", "t" + r, "n", (long) r))),
            arrow.allocator());
        StoreWriter w = store.newWriter()) {
      w.write(batch);
      w.commit();
      assertEquals(4, store.count());
    }
  }

  // ---------------------------------------------------------------- refusals: nothing written

  @Test
  void aVectorOfTheWrongLengthIsRefusedNamingRowAndColumn() {
    List<Map<String, Object>> rows = rows(4, BatchConformerTest::sparkRow);
    rows.get(2).put("embedding", List.of(1f, 2f, 3f));
    InvalidRecordException e = refused(InvalidRecordException.class, sparkSchema(), rows);
    assertEquals("embedding", e.column());
    assertEquals(2, e.row());
    assertTrue(e.getMessage().contains("3 elements") && e.getMessage().contains("dim is 4"), e.getMessage());
    List<Map<String, Object>> nullElement = rows(2, BatchConformerTest::sparkRow);
    nullElement.get(1).put("embedding", java.util.Arrays.asList(1f, null, 3f, 4f));
    assertEquals(1, refused(InvalidRecordException.class, sparkSchema(), nullElement).row());
  }

  @Test
  void aNullKeyInANullableKeyColumnIsRefusedNamingRowAndColumn() {
    List<Map<String, Object>> rows = rows(3, BatchConformerTest::sparkRow);
    rows.get(1).put("id", null);
    InvalidRecordException e = refused(InvalidRecordException.class, sparkSchema(), rows);
    assertEquals("id", e.column());
    assertEquals(1, e.row());
  }

  @Test
  void aSystemColumnInTheBatchIsRefusedNamingIt() {
    List<Field> fields = new ArrayList<>(sparkSchema().getFields());
    fields.add(int64("_lc_seq"));
    List<Map<String, Object>> rows = rows(2, BatchConformerTest::sparkRow);
    rows.forEach(r -> r.put("_lc_seq", 1L));
    SchemaException e = refused(SchemaException.class, new Schema(fields), rows);
    assertTrue(e.getMessage().contains("_lc_seq") && e.getMessage().contains("system column"), e.getMessage());
    List<Field> tomb = new ArrayList<>(sparkSchema().getFields());
    tomb.add(bool("_lc_tombstone"));
    assertTrue(refused(SchemaException.class, new Schema(tomb), rows(1, BatchConformerTest::sparkRow)).getMessage()
        .contains("_lc_tombstone"));
  }

  @Test
  void unknownColumnsAreRefusedNamingThem() {
    List<Field> fields = new ArrayList<>(sparkSchema().getFields());
    fields.add(utf8("colour"));
    fields.add(int32("size"));
    SchemaException e = refused(SchemaException.class, new Schema(fields), rows(2, BatchConformerTest::sparkRow));
    assertTrue(e.getMessage().contains("colour") && e.getMessage().contains("size"), e.getMessage());
  }

  @Test
  void narrowingAndLossyTypesAreRefusedBeforeAnyRowIsRead() {
    for (Field narrowed : List.of(int64("i"), float64("ratio"), timestamp("day", TimeUnit.MICROSECOND, "UTC"),
        int64("score"), fixedList("embedding", 3, float32("element")), list("embedding", float64("element")),
        utf8("n"), list("tags", int32("element")), struct("meta", int64("step")))) {
      List<Field> fields = new ArrayList<>();
      for (Field f : sparkSchema().getFields()) {
        fields.add(f.getName().equals(narrowed.getName()) ? narrowed : f);
      }
      List<Map<String, Object>> rows = rows(1, BatchConformerTest::sparkRow);
      rows.get(0).remove(narrowed.getName());  // the column is all null: the type alone is refused
      SchemaException e = refused(SchemaException.class, new Schema(fields), rows);
      assertTrue(e.getMessage().contains(narrowed.getName()), e.getMessage());
    }
  }

  @Test
  void aMissingRequiredColumnIsRefusedAndAMissingNullableOneIsNull() {
    String spec = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"must\",\"type\":\"int32\","
        + "\"nullable\":false},{\"name\":\"may\",\"type\":\"string\"}]}";
    try (ContextStore store = ContextStore.open(options(dir, "m", spec)); StoreWriter w = store.newWriter()) {
      try (VectorSchemaRoot batch = batch(new Schema(List.of(utf8("id"), utf8("may"))),
          List.of(new HashMap<>(Map.of("id", "a", "may", "x"))), arrow.allocator())) {
        SchemaException e = assertThrows(SchemaException.class, () -> w.write(batch));
        assertTrue(e.getMessage().contains("must"), e.getMessage());
      }
      try (VectorSchemaRoot batch = batch(new Schema(List.of(utf8("id"), int32("must"))),
          List.of(new HashMap<>(Map.of("id", "a", "must", 1))), arrow.allocator())) {
        w.write(batch);
      }
      w.commit();
      assertEquals(null, store.get("a").orElseThrow().get("may"));
      assertEquals(1, store.get("a").orElseThrow().get("must"));
    }
  }

  /** Writes one batch through a handle; it must be refused with {@code type} and nothing written. */
  private <E extends LanceContextException> E refused(Class<E> type, Schema schema, List<Map<String, Object>> rows) {
    try (ContextStore store = ContextStore.open(options(dir, "refused", SPEC));
        VectorSchemaRoot batch = batch(schema, rows, arrow.allocator());
        StoreWriter w = store.newWriter()) {
      E e = assertThrows(type, () -> w.write(batch));
      assertEquals(rows.size(), batch.getRowCount(), "the caller's batch is left as it was");
      assertEquals(0, w.commit().rowsWritten());
      assertEquals(0, store.count(), "nothing of a refused batch is written");
      return e;
    }
  }

  static List<Map<String, Object>> rows(int n, Function<Integer, Map<String, Object>> row) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      out.add(row.apply(r));
    }
    return out;
  }
}
