package io.lancecontext.core;

import static io.lancecontext.core.StoreTestSupport.inEveryTier;
import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.testing.RecordAssertions.assertRecordEqual;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.testing.StoreTest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Row-by-row writes in the dataset layout, as an adapter converting InternalRow or RowData does. */
class RowAppenderTest extends StoreTest {

  /** Engines' row writers set fields in this order, so that each row goes straight into its bucket's batch. */
  @Test
  void keyFirstPutsTheKeyFieldFirstAndKeepsTheOthersInOrder() {
    try (ContextStore store = ContextStore.open(options(dir, "order", BatchConformerTest.SPEC));
        StoreWriter w = store.newWriter()) {
      String key = store.spec().key();
      assertArrayEquals(new int[] {2, 0, 1, 3}, w.rows().keyFirst(List.of("a", "b", key, "c")));
      assertArrayEquals(new int[] {0, 1, 2}, w.rows().keyFirst(List.of("a", "b", "c")), "no key field: as given");
      assertArrayEquals(new int[] {0, 1}, w.rows().keyFirst(List.of(key, "a")));
    }
  }

  @Test
  void appendedRowsOfEveryColumnTypeAreReadBackEqual() {
    try (ContextStore store = ContextStore.open(options(dir, "a", BatchConformerTest.SPEC));
        StoreWriter w = store.newWriter()) {
      RowAppender rows = w.rows();
      int id = rows.column("id");
      int created = rows.column("created_at");
      int title = rows.column("title");
      int text = rows.column("text");
      int image = rows.column("image");
      int thumb = rows.column("thumb");
      int embedding = rows.column("embedding");
      int n = rows.column("n");
      int i = rows.column("i");
      int score = rows.column("score");
      int ratio = rows.column("ratio");
      int flag = rows.column("flag");
      int day = rows.column("day");
      int tags = rows.column("tags");
      int meta = rows.column("meta");
      float[] reused = new float[4];
      byte[] bytes = new byte[2];
      for (int r = 0; r < 6; r++) {
        reused[0] = r;
        bytes[0] = (byte) r;
        rows.setUtf8(id, ("row-" + r).getBytes(StandardCharsets.UTF_8))
            .setTimestampMicros(created, 1_700_000_000_000_000L + r)
            .setString(title, r % 2 == 0 ? "even" : null)
            .setString(text, "text " + r)
            .setBytes(image, bytes)
            .setBytes(thumb, ByteBuffer.wrap(new byte[] {7}))
            .setVector(embedding, reused)
            .setLong(n, (long) r << 33)
            .setInt(i, -r)
            .setDouble(score, r * 1.5)
            .setFloat(ratio, r / 4f)
            .setBoolean(flag, r % 3 == 0)
            .setDate(day, 20_000 + r)
            .setValue(tags, List.of("x", "y" + r))
            .setValue(meta, Map.of("step", r, "note", "m"));
        if (r == 5) {
          rows.setNull(meta).setNull(tags);
        }
        rows.endRow();
      }
      assertEquals(6, w.commit().rowsWritten());
      inEveryTier(store, () -> {
        for (int r = 0; r < 6; r++) {
          Map<String, Object> expected = new LinkedHashMap<>();
          expected.put("id", "row-" + r);
          expected.put("created_at", Instant.ofEpochSecond(1_700_000_000L, r * 1_000L));
          expected.put("updated_at", null);
          expected.put("title", r % 2 == 0 ? "even" : null);
          expected.put("text", "text " + r);
          expected.put("image", new byte[] {(byte) r, 0});
          expected.put("thumb", new byte[] {7});
          expected.put("embedding", new float[] {r, 0, 0, 0});
          expected.put("n", (long) r << 33);
          expected.put("i", -r);
          expected.put("score", r * 1.5);
          expected.put("ratio", r / 4f);
          expected.put("flag", r % 3 == 0);
          expected.put("day", LocalDate.ofEpochDay(20_000 + r));
          expected.put("tags", r == 5 ? null : List.of("x", "y" + r));
          expected.put("meta", r == 5 ? null : Map.of("step", r, "note", "m"));
          assertRecordEqual(expected, store.get("row-" + r).orElseThrow());
        }
      });
    }
  }

  @Test
  void aBadValueDiscardsOnlyTheRowBeingBuilt() {
    try (ContextStore store = ContextStore.open(options(dir, "b", BatchConformerTest.SPEC));
        StoreWriter w = store.newWriter()) {
      RowAppender rows = w.rows();
      int id = rows.column("id");
      int i = rows.column("i");
      int embedding = rows.column("embedding");
      rows.setString(id, "good-0").setInt(i, 1).endRow();
      rows.setString(id, "bad").setInt(i, 42);
      InvalidRecordException wrongType = assertThrows(InvalidRecordException.class, () -> rows.setString(i, "one"));
      assertEquals("i", wrongType.column());
      assertEquals(1, wrongType.row(), "the handle's second row");
      InvalidRecordException range = assertThrows(InvalidRecordException.class, () -> rows.setLong(i, 1L << 40));
      assertEquals("i", range.column());
      assertThrows(InvalidRecordException.class, () -> rows.setVector(embedding, new float[3]));
      assertThrows(InvalidRecordException.class, () -> rows.setTimestampMicros(i, 5));
      rows.setString(id, "good-1").endRow();
      assertEquals(2, w.commit().rowsWritten());
      assertEquals(2, store.count());
      assertEquals(null, store.get("good-1").orElseThrow().get("i"), "nothing of a discarded row leaks into the next");
    }
  }

  @Test
  void aDiscardedRowLeavesNoStructFieldsUnderTheNextRowsNullStruct() {
    try (ContextStore store = ContextStore.open(options(dir, "n", BatchConformerTest.SPEC));
        StoreWriter w = store.newWriter()) {
      RowAppender rows = w.rows();
      int id = rows.column("id");
      int meta = rows.column("meta");
      int i = rows.column("i");
      rows.setString(id, "discarded").setValue(meta, Map.of("step", 7, "note", "stale"));
      assertThrows(InvalidRecordException.class, () -> rows.setString(i, "not a number"));
      rows.setString(id, "k").endRow();
      w.commit();
      inEveryTier(store, () -> {
        assertEquals(null, store.get("k").orElseThrow().get("meta"));
        assertEquals(1, store.count(io.lancecontext.core.read.Predicate.isNull("meta.note")));
      });
    }
  }

  @Test
  void aRowWithoutARequiredColumnOrWithANullKeyIsRefused() {
    String spec = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"must\",\"type\":\"int32\","
        + "\"nullable\":false}]}";
    try (ContextStore store = ContextStore.open(options(dir, "c", spec)); StoreWriter w = store.newWriter()) {
      RowAppender rows = w.rows();
      int id = rows.column("id");
      int must = rows.column("must");
      rows.setString(id, "a");
      InvalidRecordException e = assertThrows(InvalidRecordException.class, rows::endRow);
      assertEquals("must", e.column());
      InvalidRecordException nullKey = assertThrows(InvalidRecordException.class, () -> rows.setNull(id));
      assertEquals("id", nullKey.column());
      rows.setInt(must, 1);
      InvalidRecordException notUtf8 = assertThrows(InvalidRecordException.class,
          () -> rows.setUtf8(id, new byte[] {(byte) 0xC3, (byte) 0x28}));
      assertTrue(notUtf8.getMessage().contains("UTF-8"), notUtf8.getMessage());
      w.commit();
      assertEquals(0, store.count());
    }
  }

  @Test
  void systemAndUnknownColumnsCannotBeResolved() {
    try (ContextStore store = ContextStore.open(options(dir, "d", BatchConformerTest.SPEC));
        StoreWriter w = store.newWriter()) {
      SchemaException system = assertThrows(SchemaException.class, () -> w.rows().column("_lc_seq"));
      assertTrue(system.getMessage().contains("system column"), system.getMessage());
      SchemaException unknown = assertThrows(SchemaException.class, () -> w.rows().column("colour"));
      assertTrue(unknown.getMessage().contains("colour"), unknown.getMessage());
    }
  }

  @Test
  void endedRowsArePutByTheHandlesBatchingRules() {
    try (ContextStore store = ContextStore.open(options(dir, "e", BatchConformerTest.SPEC, "write.batch-rows", "3"));
        StoreWriter w = store.newWriter()) {
      RowAppender rows = w.rows();
      int id = rows.column("id");
      for (int r = 0; r < 4; r++) {
        rows.setString(id, "k" + r).endRow();
      }
      assertEquals(3, store.count(), "the first three rows filled the buffer and were put");
      w.commit();
      assertEquals(4, store.count());
    }
  }
}
