package io.lancecontext.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.AllocatorExtension;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class RowBufferTest {
  @RegisterExtension
  final AllocatorExtension arrow = new AllocatorExtension();

  private static final SchemaSpec SPEC = SchemaSpec.fromJson("{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"i\",\"type\":\"int32\"},{\"name\":\"meta\",\"type\":\"struct\",\"fields\":["
      + "{\"name\":\"step\",\"type\":\"int32\"},{\"name\":\"inner\",\"type\":\"struct\",\"fields\":["
      + "{\"name\":\"note\",\"type\":\"string\"}]}]}]}");

  @Test
  void aDiscardedRowLeavesNoFieldValuesUnderTheNextRowsNullStruct() {
    try (RowBuffer buffer = new RowBuffer(SPEC, arrow.allocator(), KeyIds.random())) {
      int id = buffer.column("id");
      buffer.set(id, "discarded");
      buffer.set(buffer.column("meta"), Map.of("step", 7, "inner", Map.of("note", "stale")));
      assertThrows(InvalidRecordException.class, () -> buffer.set(buffer.column("i"), "not a number"));
      buffer.set(id, "k");
      buffer.endRow();
      try (VectorSchemaRoot batch = only(buffer)) {
        assertEquals(1, batch.getRowCount());
        StructVector meta = (StructVector) batch.getVector("meta");
        assertTrue(meta.isNull(0));
        assertTrue(((FieldVector) meta.getChild("step")).isNull(0), "no stale field value under the null struct");
        StructVector inner = (StructVector) meta.getChild("inner");
        assertTrue(inner.isNull(0) && ((FieldVector) inner.getChild("note")).isNull(0));
      }
    }
  }

  @Test
  void rowsAreTakenInTheOrderTheyWereAddedAndTheBufferStartsEmpty() {
    SchemaSpec spec = SchemaSpec.fromJson("{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
        + "{\"name\":\"i\",\"type\":\"int32\"}],\"capabilities\":[\"tombstones\"]}");
    try (RowBuffer buffer = new RowBuffer(spec, arrow.allocator(), KeyIds.random())) {
      buffer.addRecord(Map.of("id", "a", "i", 1));
      buffer.addTombstone("a");
      buffer.addRecord(Map.of("i", 2));
      assertEquals(3, buffer.rows());
      assertEquals(1, buffer.keylessRows());
      try (VectorSchemaRoot batch = only(buffer)) {
        BatchValidator.validate(spec, batch);
        var decoded = new RecordCodec(spec).decode(batch);
        assertEquals("a", decoded.get(0).get("id"));
        assertEquals("a", decoded.get(1).get("id"));
        assertEquals(2, decoded.get(2).get("i"));
        var marker = (org.apache.arrow.vector.BitVector) batch.getVector("_lc_tombstone");
        assertTrue(marker.isNull(0) && marker.get(1) == 1 && marker.isNull(2));
      }
      assertEquals(0, buffer.rows());
      assertEquals(java.util.List.of(), buffer.takeAll());
    }
  }

  private static final SchemaSpec ROUTED = SchemaSpec.fromJson("{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"i\",\"type\":\"int32\"},{\"name\":\"v\",\"type\":\"vector\",\"dim\":2,\"metric\":\"l2\"},"
      + "{\"name\":\"meta\",\"type\":\"struct\",\"fields\":[{\"name\":\"step\",\"type\":\"int32\"}]}],"
      + "\"capabilities\":[\"tombstones\"]}");

  /** Four buckets by the key's last character ('0'..'3'); a generated key's last character is a hex digit. */
  private static final KeyRouter LAST_CHARACTER = (utf8, offset, length) -> Math.floorMod(utf8[offset + length - 1], 4);

  /**
   * A buffer by bucket keeps each bucket's rows in a batch of their own, in the order they were added, however a
   * row reached it: its key set first (straight to its bucket), set last (copied there when it ends), a record, a
   * tombstone; rows without a key (unique generated keys) in one batch of their own, last; every value intact and
   * nothing of an abandoned row left.
   */
  @Test
  void aBufferByBucketKeepsEachBucketsRowsInOrderWhateverTheOrderValuesAreSetIn() {
    try (RowBuffer buffer = new RowBuffer(ROUTED, arrow.allocator(), KeyIds.seeded("seed"), 4, LAST_CHARACTER)) {
      int id = buffer.column("id");
      int i = buffer.column("i");
      int v = buffer.column("v");
      int meta = buffer.column("meta");
      buffer.setUtf8(id, "k1".getBytes(java.nio.charset.StandardCharsets.UTF_8));  // the key first
      buffer.set(i, 1);
      buffer.set(v, new float[] {1f, 1.5f});
      buffer.endRow();
      buffer.set(i, 2);  // the key last: built in bucket 1's batch, moved to bucket 2's
      buffer.set(meta, Map.of("step", 2));
      buffer.set(v, new float[] {2f, 2.5f});
      buffer.set(id, "k2");
      buffer.endRow();
      buffer.set(i, 99);  // abandoned
      buffer.set(meta, Map.of("step", 99));
      assertThrows(InvalidRecordException.class, () -> buffer.set(v, new float[] {1f}));
      buffer.set(i, 3);  // keyless: a generated key
      buffer.endRow();
      buffer.endRow();  // keyless, no value at all
      buffer.addRecord(new java.util.LinkedHashMap<>(Map.of("i", 4, "id", "r3")));
      buffer.addTombstone("t1");
      buffer.set(i, 6);
      buffer.set(id, "k5");  // bucket 1 after a row of bucket 1: not moved
      buffer.endRow();
      assertEquals(7, buffer.rows());
      java.util.List<VectorSchemaRoot> batches = buffer.takeAll();
      try {
        java.util.List<java.util.List<Map<String, Object>>> decoded = new java.util.ArrayList<>();
        java.util.List<String> all = new java.util.ArrayList<>();
        for (int n = 0; n < batches.size(); n++) {
          VectorSchemaRoot batch = batches.get(n);
          BatchValidator.validate(ROUTED, batch);
          var rows = new RecordCodec(ROUTED).decode(batch);
          decoded.add(rows);
          if (n == batches.size() - 1) {
            assertEquals(2, rows.size(), "the keyless rows, last: " + rows);
            rows.forEach(r -> all.add((String) r.get("id")));
            continue;
          }
          int bucket = -1;
          for (var r : rows) {
            byte[] key = ((String) r.get("id")).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            int b = LAST_CHARACTER.bucket(key, 0, key.length);
            assertTrue(bucket < 0 || bucket == b, "one bucket per batch: " + rows);
            bucket = b;
            all.add((String) r.get("id"));
          }
        }
        assertEquals(7, all.size(), all.toString());
        Map<String, Map<String, Object>> byKey = new java.util.HashMap<>();
        decoded.forEach(rows -> rows.forEach(r -> byKey.put((String) r.get("id"), r)));
        assertEquals(1, byKey.get("k1").get("i"));
        assertEquals(java.util.List.of(1f, 1.5f), floats(byKey.get("k1").get("v")));
        assertEquals(null, byKey.get("k1").get("meta"));
        assertEquals(2, byKey.get("k2").get("i"));
        assertEquals(java.util.List.of(2f, 2.5f), floats(byKey.get("k2").get("v")));
        assertEquals(2, ((Map<?, ?>) byKey.get("k2").get("meta")).get("step"));
        assertEquals(4, byKey.get("r3").get("i"));
        assertEquals(6, byKey.get("k5").get("i"));
        String generated = all.get(5);
        assertEquals(3, byKey.get(generated).get("i"));
        assertEquals(null, byKey.get(all.get(6)).get("i"));
        assertEquals(null, byKey.get(generated).get("meta"), "nothing of the abandoned row");
        assertTrue(all.indexOf("k1") < all.indexOf("k5"), "a bucket's rows in the order they were added: " + all);
        for (VectorSchemaRoot batch : batches) {
          var marker = (org.apache.arrow.vector.BitVector) batch.getVector("_lc_tombstone");
          var keys = (org.apache.arrow.vector.VarCharVector) batch.getVector("id");
          for (int r = 0; r < batch.getRowCount(); r++) {
            assertEquals(new String(keys.get(r), java.nio.charset.StandardCharsets.UTF_8).equals("t1"), !marker.isNull(r)
                && marker.get(r) == 1);
          }
        }
      } finally {
        batches.forEach(VectorSchemaRoot::close);
      }
      assertEquals(0, buffer.rows());
      assertEquals(java.util.List.of(), buffer.takeAll());
    }
  }

  private static final SchemaSpec SCALARS = SchemaSpec.fromJson("{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"s\",\"type\":\"string\"},{\"name\":\"never\",\"type\":\"string\"},"
      + "{\"name\":\"big\",\"type\":\"large_string\"},{\"name\":\"bin\",\"type\":\"binary\"},"
      + "{\"name\":\"i\",\"type\":\"int32\"},{\"name\":\"b\",\"type\":\"bool\"},"
      + "{\"name\":\"t\",\"type\":\"list\",\"item\":{\"type\":\"string\"}},"
      + "{\"name\":\"v\",\"type\":\"vector\",\"dim\":2,\"metric\":\"l2\"}]}");

  /**
   * A row leaves the scalar and vector columns it does not set alone (a new batch reads null there) and a string
   * column no row sets is not filled row by row: whatever the pattern, over more rows than a batch first holds and after a
   * discarded row that had set every column, each value reads back as set and every other as null.
   */
  @Test
  void columnsARowDoesNotSetReadNullWhateverTheRowsAroundThemSet() {
    for (KeyRouter router : new KeyRouter[] {null, LAST_CHARACTER}) {
      try (RowBuffer buffer = router == null ? new RowBuffer(SCALARS, arrow.allocator(), KeyIds.random())
          : new RowBuffer(SCALARS, arrow.allocator(), KeyIds.random(), 4, router)) {
        int rows = 300;
        for (int r = 0; r < rows; r++) {
          if (r == 150) {  // a discarded row that set every column
            buffer.set(buffer.column("id"), "gone0");
            for (String c : java.util.List.of("s", "never", "big", "bin", "i", "b", "t", "v")) {
              Object value = switch (c) {
                case "bin" -> new byte[] {1};
                case "i" -> 1;
                case "b" -> true;
                case "t" -> java.util.List.of("x");
                case "v" -> new float[] {1f, 2f};
                default -> "stale";
              };
              buffer.set(buffer.column(c), value);
            }
            buffer.abandonRow();
          }
          boolean keyLast = r % 7 == 3;  // built in the batch of any bucket, then moved to its own
          if (!keyLast) {
            buffer.set(buffer.column("id"), "k" + r);
          }
          if (r % 2 == 0) {
            buffer.set(buffer.column("s"), "s" + r);
          }
          if (r % 3 == 0) {
            buffer.set(buffer.column("i"), r);
            buffer.set(buffer.column("big"), "big" + r);
          }
          if (r % 5 == 0) {
            buffer.set(buffer.column("bin"), new byte[] {(byte) r});
            buffer.set(buffer.column("b"), r % 10 == 0);
          }
          if (r % 4 == 0) {
            buffer.set(buffer.column("v"), new float[] {r, -r});
          }
          if (keyLast) {
            buffer.set(buffer.column("id"), "k" + r);
          }
          buffer.endRow();
          if (r % 11 == 5) {  // keyless rows right after a keyed one: one with values, one without any
            buffer.set(buffer.column("i"), -r);
            buffer.endRow();
            buffer.set(buffer.column("id"), "k" + r + "b");
            buffer.endRow();
            buffer.endRow();
          }
        }
        Map<String, Map<String, Object>> byKey = new java.util.HashMap<>();
        for (VectorSchemaRoot batch : buffer.takeAll()) {
          try (batch) {
            BatchValidator.validate(SCALARS, batch);
            new RecordCodec(SCALARS).decode(batch).forEach(row -> byKey.put((String) row.get("id"), row));
          }
        }
        int extra = 3 * (int) java.util.stream.IntStream.range(0, rows).filter(r -> r % 11 == 5).count();
        assertEquals(rows + extra, byKey.size());
        for (var row : byKey.values()) {
          String key = (String) row.get("id");
          if (!key.startsWith("k") || key.endsWith("b")) {
            assertEquals(null, row.get("s"), "a keyless or key-only row: " + row);
            assertEquals(null, row.get("big"), "a keyless or key-only row: " + row);
            assertEquals(null, row.get("v"), "a keyless or key-only row: " + row);
            assertTrue(row.get("i") == null || ((Integer) row.get("i")) <= 0, "a keyless or key-only row: " + row);
          }
        }
        for (int r = 0; r < rows; r++) {
          Map<String, Object> row = byKey.get("k" + r);
          String where = "row " + r + " (router " + (router != null) + "): " + row;
          assertEquals(r % 2 == 0 ? "s" + r : null, row.get("s"), where);
          assertEquals(r % 3 == 0 ? (Object) r : null, row.get("i"), where);
          assertEquals(r % 3 == 0 ? "big" + r : null, row.get("big"), where);
          assertEquals(r % 5 == 0 ? (Object) (r % 10 == 0) : null, row.get("b"), where);
          assertEquals(r % 5 == 0 ? java.util.List.of((byte) r) : null, row.get("bin") == null ? null
              : java.util.List.of(((byte[]) row.get("bin"))[0]), where);
          assertEquals(null, row.get("never"), where);
          assertEquals(null, row.get("t"), where);
          assertEquals(r % 4 == 0 ? java.util.List.of((float) r, (float) -r) : null,
              row.get("v") == null ? null : floats(row.get("v")), where);
        }
      }
    }
  }

  /** The one batch of a buffer without a router. */
  static VectorSchemaRoot only(RowBuffer buffer) {
    java.util.List<VectorSchemaRoot> batches = buffer.takeAll();
    assertEquals(1, batches.size(), "a buffer without a router has one batch");
    return batches.get(0);
  }

  private static java.util.List<Float> floats(Object vector) {
    java.util.List<Float> out = new java.util.ArrayList<>();
    if (vector instanceof float[] f) {
      for (float x : f) {
        out.add(x);
      }
      return out;
    }
    for (Object x : (java.util.List<?>) vector) {
      out.add(((Number) x).floatValue());
    }
    return out;
  }
}
