package io.lancecontext.core.internal.lance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/**
 * A whole WAL entry decodes whole on an interrupted thread (a Flink task being cancelled, a Spark task killed):
 * its bytes are in memory, so the interrupt is no reason to judge it incomplete, which would make a read skip its
 * acknowledged rows and the shard's next writer move it aside.
 */
class WalEntryInterruptTest {
  private static byte[] entry(RootAllocator allocator) throws Exception {
    Schema schema = new Schema(List.of(new Field("id", FieldType.nullable(new ArrowType.Utf8()), null)));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
        ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
      VarCharVector id = (VarCharVector) root.getVector("id");
      id.allocateNew();
      id.setSafe(0, "a".getBytes(StandardCharsets.UTF_8));
      id.setSafe(1, "b".getBytes(StandardCharsets.UTF_8));
      root.setRowCount(2);
      writer.start();
      writer.writeBatch();
      writer.end();
    }
    return out.toByteArray();
  }

  @Test
  void aWholeEntryDecodesOnAnInterruptedThread() throws Exception {
    try (RootAllocator allocator = new RootAllocator()) {
      byte[] content = entry(allocator);
      Thread.currentThread().interrupt();
      try (WalEntry e = WalEntry.decode("s0", 7, content, allocator)) {
        assertEquals(2, e.rows());
        assertTrue(WalEntry.isComplete("s0", 7, content, allocator));
      } finally {
        assertTrue(Thread.interrupted(), "the interrupt status is kept");
      }
    }
  }
}
