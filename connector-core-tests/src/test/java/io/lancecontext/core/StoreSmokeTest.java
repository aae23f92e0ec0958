package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StoreSmokeTest extends StoreTest {
  @Test
  void addGetScanMerge() {
    String path = dir.resolve("s").toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "8"))) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        Map<String, Object> r = new HashMap<>();
        r.put("id", "k" + i);
        r.put("reward", (double) i);
        rows.add(r);
      }
      assertEquals(10, store.add(rows));
      System.out.println("get: " + store.get("k3"));
      assertEquals(3.0, store.get("k3").orElseThrow().get("reward"));
      assertEquals(10, store.scanRecords(ScanSpec.all()).size());
      store.seal();
      System.out.println("stats after seal: " + store.stats());
      assertEquals(10, store.scanRecords(ScanSpec.all()).size());
      System.out.println("merge: " + store.merge());
      System.out.println("stats after merge: " + store.stats());
      assertEquals(10, store.scanRecords(ScanSpec.all()).size());
      assertEquals(3.0, store.get("k3").orElseThrow().get("reward"));
      Map<String, Object> upd = new HashMap<>();
      upd.put("id", "k3");
      upd.put("reward", 33.0);
      store.add(List.of(upd));
      assertEquals(33.0, store.get("k3").orElseThrow().get("reward"));
      assertEquals(10, store.count());
      assertTrue(store.stats().freshRows() >= 1);
    }
  }
}
