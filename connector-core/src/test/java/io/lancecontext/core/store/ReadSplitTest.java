package io.lancecontext.core.store;

import static io.lancecontext.core.store.StoreTestSupport.options;
import static io.lancecontext.core.store.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreScan;
import io.lancecontext.core.testing.StoreTest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Read plans: parts read independently (after a serialization round trip) return exactly the LSM view. */
class ReadSplitTest extends StoreTest {

  private static Map<String, Object> readAll(ContextStore store, List<ReadSplit> splits) {
    Map<String, Object> out = new TreeMap<>();
    for (ReadSplit split : splits) {
      try (StoreReader reader = store.read(split)) {
        for (Map<String, Object> r : reader.records()) {
          Object previous = out.put((String) r.get("id"), r.get("token_count"));
          assertEquals(null, previous, "key " + r.get("id") + " returned by two parts");
        }
      }
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static List<ReadSplit> roundTrip(List<ReadSplit> splits) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(new ArrayList<>(splits));
    }
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return (List<ReadSplit>) in.readObject();
    }
  }

  @Test
  void partsReadIndependentlyReturnExactlyTheViewOfOneSnapshot() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "splits", "context"))) {
      for (int round = 0; round < 4; round++) {  // four merges: several base fragments
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
          rows.add(rec("id", "k" + (round * 30 + i), "token_count", round * 1000 + i));
        }
        store.add(rows);
        store.seal();
        store.merge();
      }
      store.add(List.of(rec("id", "k5", "token_count", -5), rec("id", "new", "token_count", 7)));
      store.seal();                                        // an unmerged generation
      store.add(List.of(rec("id", "k40", "token_count", -40)));  // the WAL tail
      store.delete(List.of("k41"));

      ScanSpec scan = ScanSpec.all().withColumns(List.of("id", "token_count"));
      Map<String, Object> expected = StoreTestSupport.view(store, "token_count");
      List<ReadSplit> splits = roundTrip(store.planRead(scan, 4));
      assertTrue(splits.size() >= 2, "base parts and the fresh part: " + splits.size());
      assertEquals(1, splits.stream().filter(s -> s.part() == StoreScan.Part.FRESH).count());
      assertEquals(expected, readAll(store, splits));

      // later writes do not change what the plan reads
      store.add(List.of(rec("id", "k5", "token_count", 555), rec("id", "later", "token_count", 1)));
      store.seal();
      store.merge();
      assertEquals(expected, readAll(store, splits));

      Predicate negative = Predicate.compare("token_count", Predicate.Op.LT, 0L);
      Map<String, Object> filtered = new TreeMap<>();
      for (ReadSplit s : store.planRead(scan.withFilter(negative), 3)) {
        try (StoreReader r = store.read(s)) {
          r.records().forEach(m -> filtered.put((String) m.get("id"), m.get("token_count")));
        }
      }
      assertEquals(Map.of("k40", -40), filtered, "k5 was re-written after the first plan");
      assertThrows(IllegalArgumentException.class, () -> store.planRead(scan.withOffset(1), 2));
    }
  }
}
