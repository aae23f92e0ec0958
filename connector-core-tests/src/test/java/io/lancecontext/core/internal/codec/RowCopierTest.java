package io.lancecontext.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.testing.AllocatorExtension;
import io.lancecontext.core.testing.RecordAssertions;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link RowCopier} copies values as bytes and child runs, not through Arrow's per-value copy: every type a
 * spec can declare, nulls at every level (null structs, lists, vectors, list items, struct fields), rows
 * picked out of order, repeated and in runs, and batches concatenated after batches that end in nulls, all
 * compared record by record with the source.
 */
class RowCopierTest {
  @RegisterExtension
  final AllocatorExtension arrow = new AllocatorExtension();

  private final RecordCodec codec = new RecordCodec(RecordCodecTest.ALL_TYPES);

  @Test
  void copiedRowsEqualTheSourceRowsForEveryTypeWithNullsAtEveryLevel() {
    Random random = new Random(7);
    List<Map<String, Object>> records = records(random, 300, "a");
    try (VectorSchemaRoot source = codec.encode(records, arrow.allocator())) {
      for (int round = 0; round < 20; round++) {
        int count = random.nextInt(source.getRowCount() + 1);
        int[] rows = new int[count];
        for (int i = 0; i < count; ) {
          int start = random.nextInt(source.getRowCount());
          int run = 1 + random.nextInt(4);  // runs of consecutive rows, as a split of sorted rows has
          for (int k = 0; k < run && i < count; k++, i++) {
            rows[i] = random.nextInt(10) == 0 ? rows[Math.max(0, i - 1)] : Math.min(source.getRowCount() - 1, start + k);
          }
        }
        try (VectorSchemaRoot copy = RowCopier.copy(source, columns(source), rows, count, arrow.allocator())) {
          assertEquals(count, copy.getRowCount());
          List<Map<String, Object>> expected = new ArrayList<>();
          for (int r : rows) {
            expected.add(records.get(r));
          }
          RecordAssertions.assertRecordsEqual(expected, codec.decode(copy));
        }
      }
    }
  }

  @Test
  void concatenatedBatchesEqualTheirRowsInOrder() {
    Random random = new Random(11);
    List<Map<String, Object>> all = new ArrayList<>();
    List<VectorSchemaRoot> parts = new ArrayList<>();
    try {
      for (int p = 0; p < 5; p++) {
        List<Map<String, Object>> records = records(random, p == 2 ? 0 : 1 + random.nextInt(40), "p" + p);
        if (p == 1) {
          records.get(records.size() - 1).replaceAll((k, v) -> k.equals("id") || k.equals("must") || k.equals("meta") ? v : null);
        }
        all.addAll(records);
        parts.add(codec.encode(records, arrow.allocator()));
      }
      try (VectorSchemaRoot joined = RowCopier.concat(parts, arrow.allocator())) {
        assertEquals(all.size(), joined.getRowCount());
        RecordAssertions.assertRecordsEqual(all, codec.decode(joined));
      }
    } finally {
      parts.forEach(VectorSchemaRoot::close);
    }
  }

  private static List<String> columns(VectorSchemaRoot root) {
    return root.getSchema().getFields().stream().map(Field::getName).toList();
  }

  /** Records of every type, each nullable value null one time in four. */
  private static List<Map<String, Object>> records(Random random, int n, String prefix) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("id", prefix + i);
      r.put("b", maybe(random, random.nextBoolean()));
      r.put("i8", maybe(random, (byte) random.nextInt()));
      r.put("i16", maybe(random, (short) random.nextInt()));
      r.put("i32", maybe(random, random.nextInt()));
      r.put("i64", maybe(random, random.nextLong()));
      r.put("f32", maybe(random, random.nextFloat()));
      r.put("f64", maybe(random, random.nextDouble()));
      r.put("s", maybe(random, "s" + random.nextInt(1000) + "é".repeat(random.nextInt(3))));
      r.put("ls", maybe(random, "large-" + i));
      r.put("bin", maybe(random, bytes(random, random.nextInt(6))));
      r.put("blob", maybe(random, bytes(random, random.nextInt(40))));
      r.put("d", maybe(random, LocalDate.ofEpochDay(random.nextInt(40_000))));
      r.put("ts", maybe(random, Instant.ofEpochSecond(random.nextInt(1 << 30), random.nextInt(1_000_000) * 1_000L)));
      r.put("vec", maybe(random, new float[] {random.nextFloat(), random.nextFloat(), random.nextFloat(), i}));
      Map<String, Object> inner = new LinkedHashMap<>();
      inner.put("note", maybe(random, "n" + i));
      inner.put("xs", maybe(random, longs(random)));
      Map<String, Object> meta = new LinkedHashMap<>();
      meta.put("step", i);
      meta.put("inner", maybe(random, inner));
      r.put("meta", maybe(random, meta));
      List<String> tags = new ArrayList<>();
      for (int t = random.nextInt(4); t > 0; t--) {
        tags.add(random.nextInt(5) == 0 ? null : "t" + random.nextInt(9));
      }
      r.put("tags", maybe(random, tags));
      List<List<Double>> nested = new ArrayList<>();
      for (int t = random.nextInt(3); t > 0; t--) {
        nested.add(random.nextInt(4) == 0 ? null : List.of(random.nextDouble(), (double) t));
      }
      r.put("nested", maybe(random, nested));
      List<Map<String, Object>> rels = new ArrayList<>();
      for (int t = random.nextInt(3); t > 0; t--) {
        Map<String, Object> rel = new LinkedHashMap<>();
        rel.put("kind", maybe(random, "k" + t));
        rel.put("w", maybe(random, (float) t));
        rels.add(rel);
      }
      r.put("rels", maybe(random, rels));
      r.put("must", i);
      out.add(r);
    }
    return out;
  }

  private static List<Long> longs(Random random) {
    List<Long> xs = new ArrayList<>();
    for (int k = random.nextInt(4); k > 0; k--) {
      xs.add(random.nextInt(5) == 0 ? null : random.nextLong());
    }
    return xs;
  }

  private static byte[] bytes(Random random, int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  private static <T> T maybe(Random random, T value) {
    return random.nextInt(4) == 0 ? null : value;
  }
}
