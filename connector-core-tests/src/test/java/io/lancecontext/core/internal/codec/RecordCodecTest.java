package io.lancecontext.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaPresets;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.VectorMetric;
import io.lancecontext.core.testing.AllocatorExtension;
import io.lancecontext.core.testing.RecordAssertions;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RecordCodecTest {
  @RegisterExtension
  final AllocatorExtension arrow = new AllocatorExtension();

  static final SchemaSpec ALL_TYPES = SchemaSpec.builder()
      .idColumn()
      .column("b", ColumnType.BOOL)
      .column("i8", ColumnType.INT8)
      .column("i16", ColumnType.INT16)
      .column("i32", ColumnType.INT32)
      .column("i64", ColumnType.INT64)
      .column("f32", ColumnType.FLOAT32)
      .column("f64", ColumnType.FLOAT64)
      .column("s", ColumnType.STRING)
      .column("ls", ColumnType.LARGE_STRING)
      .column("bin", ColumnType.BINARY)
      .column(ColumnSpec.blob("blob", ColumnType.LARGE_BINARY))
      .column("d", ColumnType.DATE)
      .column("ts", ColumnType.TIMESTAMP)
      .column(ColumnSpec.vector("vec", 4, VectorMetric.L2))
      .column(ColumnSpec.struct("meta", ColumnSpec.of("step", ColumnType.INT32).withNullable(false),
          ColumnSpec.struct("inner", ColumnSpec.string("note"), ColumnSpec.list("xs", ColumnSpec.item(ColumnType.INT64)))))
      .column(ColumnSpec.list("tags", ColumnSpec.item(ColumnType.STRING)))
      .column(ColumnSpec.list("nested", ColumnSpec.list("item", ColumnSpec.item(ColumnType.FLOAT64))))
      .column(ColumnSpec.list("rels", ColumnSpec.structItem(ColumnSpec.string("kind"), ColumnSpec.of("w", ColumnType.FLOAT32))))
      .column(ColumnSpec.of("must", ColumnType.INT32).withNullable(false))
      .build();

  static Map<String, Object> good() {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("id", "k1");
    r.put("b", true);
    r.put("i8", (byte) -3);
    r.put("i16", (short) 300);
    r.put("i32", 70_000);
    r.put("i64", 1L << 40);
    r.put("f32", 1.5f);
    r.put("f64", -2.25);
    r.put("s", "héllo");
    r.put("ls", "large");
    r.put("bin", new byte[] {1, 2, 3});
    r.put("blob", new byte[] {9, 8});
    r.put("d", LocalDate.of(2024, 2, 29));
    r.put("ts", Instant.parse("2025-01-02T03:04:05.123456Z"));
    r.put("vec", new float[] {1, 2, 3, 4});
    Map<String, Object> inner = new LinkedHashMap<>();
    inner.put("note", "n");
    inner.put("xs", List.of(1L, 2L));
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("step", 7);
    meta.put("inner", inner);
    r.put("meta", meta);
    r.put("tags", List.of("a", "b"));
    r.put("nested", List.of(List.of(1.0, 2.0), List.of()));
    Map<String, Object> rel = new LinkedHashMap<>();
    rel.put("kind", "parent");
    rel.put("w", 0.5f);
    r.put("rels", List.of(rel));
    r.put("must", 1);
    return r;
  }

  @Test
  void encodesAndDecodesEveryTypeLosslessly() {
    RecordCodec codec = new RecordCodec(ALL_TYPES);
    Map<String, Object> record = good();
    Map<String, Object> withNulls = good();
    withNulls.put("id", "k2");
    for (String c : List.of("b", "i8", "i16", "i32", "i64", "f32", "f64", "s", "ls", "bin", "blob", "d", "ts", "vec", "tags", "nested", "rels")) {
      withNulls.put(c, null);
    }
    withNulls.put("meta", null);
    try (VectorSchemaRoot root = codec.encode(List.of(record, withNulls), arrow.allocator())) {
      assertEquals(2, root.getRowCount());
      List<Map<String, Object>> decoded = codec.decode(root);
      RecordAssertions.assertRecordsEqual(List.of(record, withNulls), decoded);
    }
  }

  @Test
  void acceptsConvenientJavaTypes() {
    RecordCodec codec = new RecordCodec(ALL_TYPES);
    Map<String, Object> r = good();
    r.put("i64", 5);
    r.put("f64", 3);
    r.put("f32", 0.25d);
    r.put("bin", ByteBuffer.wrap(new byte[] {4, 5}));
    r.put("ts", OffsetDateTime.of(2025, 1, 2, 3, 4, 5, 0, ZoneOffset.ofHours(2)));
    r.put("vec", List.of(1, 2.5, 3f, 4L));
    r.put("tags", new ArrayList<>(List.of("x")));
    try (VectorSchemaRoot root = codec.encode(List.of(r), arrow.allocator())) {
      Map<String, Object> d = codec.decodeRow(root, 0);
      assertEquals(5L, d.get("i64"));
      assertEquals(3.0, d.get("f64"));
      assertEquals(0.25f, d.get("f32"));
      assertTrue(RecordAssertions.deepEquals(new byte[] {4, 5}, d.get("bin")));
      assertEquals(Instant.parse("2025-01-02T01:04:05Z"), d.get("ts"));
      assertTrue(RecordAssertions.deepEquals(new float[] {1, 2.5f, 3, 4}, d.get("vec")));
    }
  }

  @Test
  void absentKeyGetsATimeOrderedUuid7() {
    RecordCodec codec = new RecordCodec(SchemaPresets.rollout(4));
    List<Map<String, Object>> records = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      records.add(new HashMap<>(Map.of("rollout_id", "r", "sequence_order", i)));
    }
    try (VectorSchemaRoot root = codec.encode(records, arrow.allocator())) {
      List<Map<String, Object>> decoded = codec.decode(root);
      String previous = "";
      for (Map<String, Object> d : decoded) {
        String id = (String) d.get("id");
        UUID uuid = UUID.fromString(id);
        assertEquals(7, uuid.version());
        assertEquals(2, uuid.variant());
        assertTrue(id.compareTo(previous) > 0, "ids are time-ordered");
        previous = id;
      }
    }
    assertTrue(records.get(0).get("id") == null, "the caller's map is not modified");
  }

  @Test
  void decodeMatchesByNameToleratingMissingAndReorderedColumns() {
    SchemaSpec spec = SchemaSpec.builder().idColumn().column("a", ColumnType.INT32).column("b", ColumnType.STRING).build();
    // an older batch: columns in another order, 'a' missing
    Schema older = new Schema(List.of(spec.toArrowSchema().findField("b"), spec.toArrowSchema().findField("id")));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(older, arrow.allocator())) {
      root.allocateNew();
      ((org.apache.arrow.vector.VarCharVector) root.getVector("b")).setSafe(0, "x".getBytes());
      ((org.apache.arrow.vector.VarCharVector) root.getVector("id")).setSafe(0, "k".getBytes());
      root.setRowCount(1);
      Map<String, Object> d = new RecordCodec(spec).decode(root).get(0);
      assertEquals(List.of("id", "a", "b"), new ArrayList<>(d.keySet()));
      assertEquals("k", d.get("id"));
      assertNull(d.get("a"));
      assertEquals("x", d.get("b"));
      assertEquals(List.of(Map.of("b", "x")), new RecordCodec(spec).decode(root, List.of("b")));
    }
  }

  static Stream<Arguments> badRecords() {
    return Stream.of(
        bad("unknown column", r -> r.put("colour", "red"), "colour", "unknown column"),
        bad("null key", r -> r.put("id", null), "id", "null"),
        bad("empty key", r -> r.put("id", ""), "id", "the key is empty"),
        bad("key not a string", r -> r.put("id", 42), "id", "expected java.lang.String"),
        bad("string for int", r -> r.put("i32", "12"), "i32", "expected an integral number"),
        bad("double for int", r -> r.put("i64", 1.5), "i64", "expected an integral number"),
        bad("int8 out of range", r -> r.put("i8", 300), "i8", "out of range for int8"),
        bad("int32 out of range", r -> r.put("i32", 1L << 40), "i32", "out of range for int32"),
        bad("string for float", r -> r.put("f64", "1.0"), "f64", "expected a number"),
        bad("int for bool", r -> r.put("b", 1), "b", "expected java.lang.Boolean"),
        bad("bytes for string", r -> r.put("s", new byte[] {1}), "s", "expected java.lang.String"),
        bad("string for binary", r -> r.put("bin", "abc"), "bin", "expected byte[]"),
        bad("string for date", r -> r.put("d", "2024-01-01"), "d", "expected java.time.LocalDate"),
        bad("local date-time for timestamp", r -> r.put("ts", LocalDateTime.now()), "ts", "expected java.time.Instant"),
        bad("epoch long for timestamp", r -> r.put("ts", 1_700_000_000_000L), "ts", "expected java.time.Instant"),
        bad("vector too short", r -> r.put("vec", new float[] {1, 2, 3}), "vec", "vector has 3 elements, the column's dim is 4"),
        bad("vector too long", r -> r.put("vec", List.of(1, 2, 3, 4, 5)), "vec", "vector has 5 elements"),
        bad("vector with null element", r -> r.put("vec", java.util.Arrays.asList(1f, null, 3f, 4f)), "vec", "vector element 1 is null"),
        bad("vector of strings", r -> r.put("vec", "1,2,3,4"), "vec", "expected float[]"),
        bad("map for list", r -> r.put("tags", Map.of("a", 1)), "tags", "expected a java.util.List"),
        bad("wrong list item type", r -> r.put("tags", List.of("a", 2)), "tags[1]", "expected java.lang.String"),
        bad("list for struct", r -> r.put("meta", List.of(1)), "meta", "expected a java.util.Map"),
        bad("unknown struct field", r -> r.put("meta", Map.of("step", 1, "stpe", 2)), "meta.stpe", "unknown struct field"),
        bad("null in non-nullable struct field", r -> r.put("meta", new HashMap<>(Map.of("inner", Map.of()))), "meta.step", "null in a non-nullable int32"),
        bad("wrong type deep inside", r -> r.put("meta", Map.of("step", 1, "inner", Map.of("xs", List.of(1L, "two")))), "meta.inner.xs[1]", "expected an integral number"),
        bad("null in non-nullable column", r -> r.put("must", null), "must", "null in a non-nullable int32"),
        bad("struct in list of wrong shape", r -> r.put("rels", List.of(Map.of("kind", 3))), "rels[0].kind", "expected java.lang.String"),
        bad("system column in record", r -> r.put("_lc_tombstone", true), "_lc_tombstone", "unknown column"));
  }

  private static Arguments bad(String kind, Consumer<Map<String, Object>> mutate, String column, String messagePart) {
    return Arguments.of(kind, mutate, column, messagePart);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badRecords")
  void rejectsBadRecordNamingColumnAndRow(String kind, Consumer<Map<String, Object>> mutate, String column, String messagePart) {
    RecordCodec codec = new RecordCodec(ALL_TYPES);
    List<Map<String, Object>> batch = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Map<String, Object> r = good();
      r.put("id", "k" + i);
      batch.add(r);
    }
    mutate.accept(batch.get(3));
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> codec.encode(batch, arrow.allocator()), kind);
    assertEquals(column, e.column(), () -> kind + ": " + e.getMessage());
    assertEquals(3, e.row(), () -> kind + ": " + e.getMessage());
    assertTrue(e.getMessage().contains(messagePart), () -> kind + ": message '" + e.getMessage() + "' lacks '" + messagePart + "'");
    assertTrue(e.getMessage().contains("row 3") && e.getMessage().contains("'" + column + "'"), e.getMessage());
    // the allocator extension checks that the half-built batch was released
  }

  @Test
  void rejectsANullRecord() {
    RecordCodec codec = new RecordCodec(ALL_TYPES);
    List<Map<String, Object>> batch = new ArrayList<>();
    batch.add(good());
    batch.add(null);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> codec.encode(batch, arrow.allocator()));
    assertEquals(1, e.row());
  }

  @Test
  void validatorRejectsBatchesNotInTheDatasetSchema() {
    SchemaSpec spec = SchemaSpec.builder().idColumn().column("a", ColumnType.INT32).build();
    Field id = spec.toArrowSchema().findField("id");
    Field wrongA = Field.nullable("a", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(List.of(id, wrongA)), arrow.allocator())) {
      root.setRowCount(0);
      SchemaException e = assertThrows(SchemaException.class, () -> BatchValidator.validate(spec, root));
      assertEquals("a", e.column().orElseThrow());
      assertTrue(e.getMessage().contains("expected Arrow type Int(32, true)"), e.getMessage());
    }
    try (VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(List.of(id)), arrow.allocator())) {
      SchemaException e = assertThrows(SchemaException.class, () -> BatchValidator.validate(spec, root));
      assertEquals("a", e.column().orElseThrow());
    }
  }

  @Test
  void tombstonesCarryOnlyTheKey() {
    SchemaSpec spec = SchemaPresets.context(4);
    RecordCodec codec = new RecordCodec(spec);
    try (VectorSchemaRoot root = codec.encodeTombstones(List.of("a", "b"), arrow.allocator())) {
      assertEquals(2, root.getRowCount());
      assertEquals(true, ((org.apache.arrow.vector.BitVector) root.getVector("_lc_tombstone")).getObject(1));
      Map<String, Object> d = codec.decodeRow(root, 0);
      assertEquals("a", d.get("id"));
      assertFalse(d.entrySet().stream().anyMatch(en -> !en.getKey().equals("id") && en.getValue() != null));
    }
    assertThrows(InvalidRecordException.class, () -> codec.encodeTombstones(List.of(""), arrow.allocator()));
  }
}
