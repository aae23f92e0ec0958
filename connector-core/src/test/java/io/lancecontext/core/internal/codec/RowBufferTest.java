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
      try (VectorSchemaRoot batch = buffer.take()) {
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
      try (VectorSchemaRoot batch = buffer.take()) {
        BatchValidator.validate(spec, batch);
        var decoded = new RecordCodec(spec).decode(batch);
        assertEquals("a", decoded.get(0).get("id"));
        assertEquals("a", decoded.get(1).get("id"));
        assertEquals(2, decoded.get(2).get("i"));
        var marker = (org.apache.arrow.vector.BitVector) batch.getVector("_lc_tombstone");
        assertTrue(marker.isNull(0) && marker.get(1) == 1 && marker.isNull(2));
      }
      assertEquals(0, buffer.rows());
      assertEquals(null, buffer.take());
    }
  }
}
