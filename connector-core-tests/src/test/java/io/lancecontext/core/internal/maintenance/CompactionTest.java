package io.lancecontext.core.internal.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.RandomRecords;
import io.lancecontext.core.testing.RecordAssertions;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Compaction of user specs with nested, vector and blob columns, after upserts, deletes and merges. */
class CompactionTest extends StoreTest {
  static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"},"
      + "{\"name\":\"meta\",\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"int32\"},{\"name\":\"b\",\"type\":\"string\"}]},"
      + "{\"name\":\"tags\",\"type\":\"list\",\"item\":{\"type\":\"string\"}},"
      + "{\"name\":\"emb\",\"type\":\"vector\",\"dim\":4,\"metric\":\"l2\"},"
      + "{\"name\":\"img\",\"type\":\"large_binary\",\"blob\":true}],"
      + "\"capabilities\":[\"tombstones\"]}";

  private Map<String, String> options(String name) {
    Map<String, String> o = new HashMap<>();
    o.put("path", dir.resolve(name).toString());
    o.put("schema", SPEC);
    o.put("shards", "2");
    o.put("merge.trigger.generations", "1000000");
    o.put("merge.trigger.interval", "1d");
    return o;
  }

  @Test
  @SuppressWarnings("unchecked")
  void compactionOfNestedVectorAndBlobColumnsSucceedsAfterUpsertsDeletesAndMerges() {
    SchemaSpec spec = SchemaSpec.fromJson(SPEC);
    Random random = new Random(7);
    RandomRecords records = new RandomRecords(spec, 11, 0.2);
    Map<String, Map<String, Object>> model = new TreeMap<>();
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      keys.add("k" + i);
    }
    int compactions = 0;
    int skipped = 0;
    try (ContextStore store = ContextStore.open(options("nested"))) {
      for (int round = 0; round < 12; round++) {
        for (int op = 0; op < 6; op++) {
          if (random.nextInt(4) == 0) {
            List<String> gone = new ArrayList<>();
            for (int i = 0; i < 1 + random.nextInt(5); i++) {
              gone.add(keys.get(random.nextInt(keys.size())));
            }
            store.delete(gone);
            gone.forEach(model::remove);
          } else {
            List<Map<String, Object>> batch = new ArrayList<>();
            Map<String, Map<String, Object>> byKey = new HashMap<>();
            for (int i = 0; i < 1 + random.nextInt(8); i++) {
              Map<String, Object> r = records.next();
              r.put("id", keys.get(random.nextInt(keys.size())));
              // a null struct reading back as a struct of nulls is another defect (issue 7), not compaction's
              r.computeIfAbsent("meta", c -> new HashMap<>(Map.of("a", random.nextInt())));
              if (r.get("meta") instanceof Map<?, ?> m && !m.containsKey("b")) {
                ((Map<String, Object>) m).put("b", null);
              }
              batch.add(r);
              byKey.put((String) r.get("id"), r);
            }
            store.add(batch);
            model.putAll(byKey);
          }
          if (random.nextInt(3) == 0) {
            store.seal();
          }
        }
        store.seal();
        store.merge();
        CompactionResult r = store.compact();
        assertTrue(r.ran(), "round " + round + ": " + r);
        skipped += r.skippedFragments().size();
        compactions++;
        assertView(store, model, "after compaction " + round);
      }
    }
    assertEquals(12, compactions);
    assertTrue(skipped > 0, "the run reaches fragments with zero-length blobs (it failed with lance-core's error before)");
  }

  /**
   * lance-core 7.0.0 fails to rewrite a fragment with a zero-length blob ("Expected option to have
   * value"): such fragments stay, the others are compacted, and the result says which and why.
   */
  @Test
  void compactionLeavesFragmentsWithZeroLengthBlobsAndRewritesTheRest() {
    String spec = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"n\",\"type\":\"int64\"},"
        + "{\"name\":\"img\",\"type\":\"large_binary\",\"blob\":true,\"nullable\":false}]}";
    Map<String, String> o = options("empty-blobs");
    o.put("schema", spec);
    o.put("shards", "1");
    Map<String, byte[]> model = new TreeMap<>();
    try (ContextStore store = ContextStore.open(o)) {
      String plan = "VVEVV";  // one merge each: values, values, empty values, values, values
      for (int m = 0; m < plan.length(); m++) {
        List<Map<String, Object>> batch = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          byte[] img = plan.charAt(m) == 'E' ? new byte[0] : new byte[] {(byte) m, (byte) i, 7};
          Map<String, Object> r = new HashMap<>();
          r.put("id", "m" + m + "-" + i);
          r.put("n", (long) i);
          r.put("img", img);
          batch.add(r);
          model.put("m" + m + "-" + i, img);
        }
        store.add(batch);
        store.seal();
        store.merge();
      }
      CompactionResult first = store.compact();
      assertTrue(first.ran(), first.toString());
      assertEquals(List.of(2), first.skippedFragments(), first.toString());
      assertTrue(first.reason().contains("zero-length blobs"), first.reason());
      assertEquals(5, first.fragmentsBefore());
      assertTrue(first.fragmentsAfter() < first.fragmentsBefore(), "the fragments around 2 are rewritten: " + first);
      CompactionResult again = store.compact();
      assertTrue(again.ran(), again.toString());
      for (Map<String, Object> r : store.scanRecords(ScanSpec.all())) {
        assertTrue(java.util.Arrays.equals(model.get((String) r.get("id")), (byte[]) r.get("img")), r.get("id") + "");
      }
      assertEquals(model.size(), store.count());
    }
  }

  static void assertView(ContextStore store, Map<String, Map<String, Object>> model, String when) {
    List<Map<String, Object>> all = store.scanRecords(ScanSpec.all());
    Map<String, Map<String, Object>> got = new TreeMap<>();
    for (Map<String, Object> r : all) {
      got.put((String) r.get("id"), r);
    }
    assertEquals(model.keySet(), got.keySet(), when);
    for (String k : model.keySet()) {
      String d = RecordAssertions.difference(model.get(k), got.get(k), k);
      assertEquals(null, d, when);
      String g = RecordAssertions.difference(model.get(k), store.get(k).orElseThrow(), k);
      assertEquals(null, g, when + " (get)");
    }
  }
}
