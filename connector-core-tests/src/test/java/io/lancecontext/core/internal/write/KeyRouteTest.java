package io.lancecontext.core.internal.write;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.junit.jupiter.api.Test;

class KeyRouteTest {
  private static final String[] ALPHABET = {"a", "b", "é", "ß", "中", "😀", "", "\u0000", "key-"};

  private static String randomKey(Random random, int distinct) {
    int id = random.nextInt(distinct);
    return ALPHABET[id % ALPHABET.length] + id + ALPHABET[(id / 3) % ALPHABET.length];
  }

  @Test
  void theLastRowOfEachKeyWinsInItsBucketInBatchOrderAsAStringMapSays() {
    Random random = new Random(7);
    try (BufferAllocator allocator = new RootAllocator()) {
      for (int round = 0; round < 40; round++) {
        int n = 1 + random.nextInt(3000);
        int buckets = 1 + random.nextInt(8);
        int distinct = 1 + random.nextInt(n * 2);
        List<String> keys = new ArrayList<>();
        List<Boolean> tombs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
          keys.add(randomKey(random, distinct));
          tombs.add(random.nextInt(5) == 0);
        }
        try (VarCharVector keyVector = new VarCharVector("id", allocator);
            BitVector tomb = new BitVector("t", allocator)) {
          keyVector.allocateNew(n);
          tomb.allocateNew(n);
          for (int r = 0; r < n; r++) {
            keyVector.setSafe(r, keys.get(r).getBytes(StandardCharsets.UTF_8));
            if (r % 7 == 3) {
              tomb.setNull(r);  // a null marker is an upsert
            } else {
              tomb.set(r, tombs.get(r) ? 1 : 0);
            }
          }
          keyVector.setValueCount(n);
          tomb.setValueCount(n);

          Map<String, Integer> last = new LinkedHashMap<>();
          for (int r = 0; r < n; r++) {
            last.put(keys.get(r), r);
          }
          Map<Integer, List<Integer>> want = new TreeMap<>();
          Map<Integer, Integer> wantDeletes = new TreeMap<>();
          for (int r = 0; r < n; r++) {
            if (last.get(keys.get(r)) == r) {
              int b = Buckets.of(keys.get(r), buckets);
              want.computeIfAbsent(b, x -> new ArrayList<>()).add(r);
              wantDeletes.merge(b, tombs.get(r) && r % 7 != 3 ? 1 : 0, Integer::sum);
            }
          }

          List<KeyRoute.Bucket> got = KeyRoute.of(keyVector, tomb, n, buckets);
          assertEquals(new ArrayList<>(want.keySet()), got.stream().map(KeyRoute.Bucket::bucket).toList());
          Map<String, Long> hashOf = new java.util.HashMap<>();
          for (KeyRoute.Bucket b : got) {
            assertArrayEquals(want.get(b.bucket()).stream().mapToInt(Integer::intValue).toArray(), b.rows(),
                "round " + round + ", bucket " + b.bucket());
            assertEquals(wantDeletes.get(b.bucket()), b.deletes());
            assertEquals(b.rows().length, b.keyHashes().length);
            for (int i = 0; i < b.rows().length; i++) {
              hashOf.put(keys.get(b.rows()[i]), b.keyHashes()[i]);
            }
          }
          // one hash per key, and (for these few thousand keys) distinct keys get distinct hashes
          assertEquals(last.size(), hashOf.size());
          assertEquals(last.size(), new HashSet<>(hashOf.values()).size());
        }
      }
    }
  }

  @Test
  void aKeyGetsTheSameHashInEveryBatchAndTheBucketOfBuckets() {
    try (BufferAllocator allocator = new RootAllocator();
        VarCharVector one = vector(allocator, "x", "k1", "y");
        VarCharVector two = vector(allocator, "k1")) {
      List<KeyRoute.Bucket> a = KeyRoute.of(one, null, 3, 1);
      List<KeyRoute.Bucket> b = KeyRoute.of(two, null, 1, 1);
      assertEquals(a.get(0).keyHashes()[1], b.get(0).keyHashes()[0]);
      assertNotEquals(a.get(0).keyHashes()[0], a.get(0).keyHashes()[1]);
      for (int buckets = 1; buckets <= 16; buckets++) {
        assertEquals(Buckets.of("k1", buckets), KeyRoute.of(two, null, 1, buckets).get(0).bucket());
      }
    }
  }

  @Test
  void aLongSetAddsEachValueOnceGrowsAndEmpties() {
    LongSet set = new LongSet(2);
    Set<Long> model = new HashSet<>();
    Random random = new Random(3);
    for (int i = 0; i < 20_000; i++) {
      long v = switch (random.nextInt(4)) {
        case 0 -> 0L;
        case 1 -> random.nextInt(100);
        default -> random.nextLong();
      };
      long probe = random.nextBoolean() ? v : random.nextLong();
      assertEquals(model.contains(probe), set.contains(probe), "contains " + probe);
      assertEquals(model.add(v), set.add(v), "add " + v);
    }
    assertEquals(model.size(), set.size());
    assertFalse(set.add(0));
    assertTrue(set.add(Long.MIN_VALUE) || model.contains(Long.MIN_VALUE));
    assertTrue(set.containsAny(new long[] {random.nextLong(), 0L}));
    set.clear();
    assertEquals(0, set.size());
    assertFalse(set.contains(0) || set.contains(model.iterator().next()));
    assertFalse(set.containsAny(model.stream().mapToLong(Long::longValue).toArray()));
    set.addAll(new long[] {5, 0, 5});
    assertEquals(2, set.size());
  }

  private static VarCharVector vector(BufferAllocator allocator, String... values) {
    VarCharVector v = new VarCharVector("id", allocator);
    v.allocateNew(values.length);
    for (int i = 0; i < values.length; i++) {
      v.setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
    }
    v.setValueCount(values.length);
    return v;
  }
}
