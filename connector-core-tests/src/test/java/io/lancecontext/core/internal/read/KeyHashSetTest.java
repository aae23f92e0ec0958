package io.lancecontext.core.internal.read;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.junit.jupiter.api.Test;

/** A key's hash is the same read in place from an Arrow vector (eight bytes at a load) as from its bytes or its String. */
class KeyHashSetTest {
  @Test
  void aKeyHashesTheSameInAVectorAsInBytesAndAsAString() {
    Random random = new Random(7);
    List<String> keys = new ArrayList<>(List.of("", "a", "ключ-鍵-ü", "0190a3c4-7b2e-7cc1-9a1f-3b1c2d4e5f60"));
    for (int length = 1; length <= 41; length++) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < length; i++) {
        sb.append((char) (random.nextInt(3) == 0 ? 0x400 + random.nextInt(200) : 'a' + random.nextInt(26)));
      }
      keys.add(sb.toString());
    }
    try (BufferAllocator allocator = new RootAllocator(); VarCharVector vector = new VarCharVector("id", allocator)) {
      vector.allocateNew();
      for (int r = 0; r < keys.size(); r++) {  // each value starts where the one before ended: at every alignment
        vector.setSafe(r, keys.get(r).getBytes(StandardCharsets.UTF_8));
      }
      vector.setValueCount(keys.size());
      for (int r = 0; r < keys.size(); r++) {
        byte[] utf8 = keys.get(r).getBytes(StandardCharsets.UTF_8);
        assertEquals(KeyHashSet.hash(utf8, utf8.length), KeyHashSet.hash(vector, r), keys.get(r));
        assertEquals(KeyHashSet.hash(keys.get(r)), KeyHashSet.hash(vector, r), keys.get(r));
      }
    }
  }
}
