package io.lancecontext.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.AllocatorExtension;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The null rules of {@link BatchValidator}, which checks row by row only the columns where a rule can break (a
 * null somewhere in a non-nullable column, struct field, list item or vector): each rule still fails naming the
 * column path and the first row that breaks it, and nulls where they are allowed (a nullable column, the fields of
 * a null struct, the elements of a null vector) pass.
 */
class BatchValidatorTest {
  @RegisterExtension
  final AllocatorExtension arrow = new AllocatorExtension();

  private static final SchemaSpec SPEC = SchemaSpec.fromJson("{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"note\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int32\",\"nullable\":false},"
      + "{\"name\":\"meta\",\"type\":\"struct\",\"fields\":[{\"name\":\"step\",\"type\":\"int32\",\"nullable\":false}]},"
      + "{\"name\":\"steps\",\"type\":\"list\",\"item\":{\"type\":\"int32\",\"nullable\":false}},"
      + "{\"name\":\"emb\",\"type\":\"vector\",\"dim\":2,\"metric\":\"l2\"}]}");

  private VectorSchemaRoot batch(int rows) {
    try (RowBuffer buffer = new RowBuffer(SPEC, arrow.allocator(), KeyIds.random())) {
      for (int r = 0; r < rows; r++) {
        buffer.addRecord(Map.of("id", "k" + r, "n", r, "meta", Map.of("step", r), "steps", List.of(r, r + 1),
            "emb", List.of(1f, 2f)));
      }
      return RowBufferTest.only(buffer);
    }
  }

  @Test
  void aBatchWithoutNullsWhereNoneMayBeAndWithNullsWhereTheyMayPasses() {
    try (VectorSchemaRoot b = batch(4)) {
      BatchValidator.validate(SPEC, b);
      StructVector meta = (StructVector) b.getVector("meta");
      meta.setNull(1);
      ((FieldVector) meta.getChild("step")).setNull(1);  // under a null struct: allowed
      FixedSizeListVector emb = (FixedSizeListVector) b.getVector("emb");
      emb.setNull(2);
      ((FieldVector) emb.getDataVector()).setNull(4);  // an element of a null vector: allowed
      ((FieldVector) b.getVector("note")).setNull(3);  // a nullable column
      BatchValidator.validate(SPEC, b);
    }
  }

  @Test
  void aNullInANonNullableColumnFailsNamingColumnAndRow() {
    try (VectorSchemaRoot b = batch(4)) {
      ((IntVector) b.getVector("n")).setNull(2);
      assertFails(b, "n", 2);
    }
  }

  @Test
  void aNullNonNullableStructFieldUnderAStructFailsNamingItsPathAndRow() {
    try (VectorSchemaRoot b = batch(4)) {
      ((FieldVector) ((StructVector) b.getVector("meta")).getChild("step")).setNull(3);
      assertFails(b, "meta.step", 3);
    }
  }

  @Test
  void aNullListItemFailsNamingItsIndexAndRow() {
    try (VectorSchemaRoot b = batch(4)) {
      ListVector steps = (ListVector) b.getVector("steps");
      ((FieldVector) steps.getDataVector()).setNull(steps.getElementStartIndex(1) + 1);
      assertFails(b, "steps[1]", 1);
    }
  }

  @Test
  void aNullVectorElementFailsNamingColumnAndRow() {
    try (VectorSchemaRoot b = batch(4)) {
      ((FieldVector) ((FixedSizeListVector) b.getVector("emb")).getDataVector()).setNull(2 * 2 + 1);
      InvalidRecordException e = assertFails(b, "emb", 2);
      assertTrue(e.getMessage().contains("vector element 1"), e.getMessage());
    }
  }

  private static InvalidRecordException assertFails(VectorSchemaRoot b, String column, int row) {
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> BatchValidator.validate(SPEC, b));
    assertEquals(column, e.column(), e.getMessage());
    assertEquals(row, e.row(), e.getMessage());
    return e;
  }
}
