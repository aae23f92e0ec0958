package io.lancecontext.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancecontext.core.ContextStore;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

/**
 * The sink's partitioner takes a row's bucket from its key's UTF-8 bytes where they lie: the same bucket as
 * {@link ContextStore#bucketOf(String, int)} for every way Flink holds a string.
 */
class SinkFormatBucketTest {
  private static final RowType TYPE = RowType.of(new LogicalType[] {new IntType(), new VarCharType(VarCharType.MAX_LENGTH)},
      new String[] {"n", "id"});
  private static final SinkFormat<RowData> ROWS = SinkFormat.rows(TYPE, "id");
  private static final List<String> KEYS = List.of("ab", "key-17", "0190a3c4-7b2e-7cc1-9a1f-3b1c2d4e5f60", "ünïcödé-ключ-鍵",
      "x".repeat(1000));

  @Test
  void aKeyInARowThatCameOverTheNetworkGoesToItsBucket() throws Exception {
    RowDataSerializer serializer = new RowDataSerializer(TYPE);
    for (String key : KEYS) {
      DataOutputSerializer out = new DataOutputSerializer(64);
      out.writeInt(12345);  // the row lies at an offset of a larger buffer, as in a network buffer
      serializer.serialize(GenericRowData.of(7, StringData.fromString(key)), out);
      DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
      in.readInt();
      RowData row = serializer.deserialize(in);
      for (int shards : new int[] {1, 4, 7, 64}) {
        assertEquals(ContextStore.bucketOf(key, shards), ROWS.bucket(row, shards), key + " in " + shards + " buckets");
      }
    }
  }

  @Test
  void aKeyFromAJavaStringOrSpreadOverTwoSegmentsGoesToItsBucket() {
    for (String key : KEYS) {
      byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
      int half = utf8.length / 2;
      MemorySegment first = MemorySegmentFactory.wrap(Arrays.copyOf(utf8, half));
      MemorySegment second = MemorySegmentFactory.wrap(Arrays.copyOfRange(utf8, half, utf8.length));
      StringData spread = BinaryStringData.fromAddress(new MemorySegment[] {first, second}, 0, utf8.length);
      assertEquals(key, spread.toString());
      for (int shards : new int[] {1, 4, 7, 64}) {
        assertEquals(ContextStore.bucketOf(key, shards), ROWS.bucket(GenericRowData.of(1, StringData.fromString(key)), shards));
        assertEquals(ContextStore.bucketOf(key, shards), ROWS.bucket(GenericRowData.of(1, spread), shards));
      }
    }
  }

  @Test
  void aRowWithoutAKeyGoesToBucketZero() {
    assertEquals(0, ROWS.bucket(GenericRowData.of(1, null), 4));
  }
}
