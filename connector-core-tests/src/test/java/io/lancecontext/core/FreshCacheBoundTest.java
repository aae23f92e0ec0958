package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The fresh-tier cache ({@code read.fresh-cache-bytes}) stays within its bound and reads stay exact. */
class FreshCacheBoundTest extends StoreTest {
  private static final long BOUND = 64 * 1024;

  @Test
  void theFreshCacheStaysWithinItsByteBoundWhileReadsStayExactAndOpenReadsKeepWhatTheyHold() {
    try (ContextStore store = ContextStore.open(options(dir, "bound", "context", "read.fresh-cache-bytes", BOUND + "",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      Map<String, Object> model = new TreeMap<>();
      StoreReader held = null;
      Map<String, Object> heldModel = null;
      try {
        for (int add = 0; add < 60; add++) {
          List<Map<String, Object>> rows = new ArrayList<>();
          for (int i = 0; i < 5; i++) {
            String key = "k" + ((add * 5 + i) % 170);  // later adds update earlier keys
            rows.add(rec("id", key, "token_count", add * 100 + i, "text_payload", "x".repeat(400)));
            model.put(key, add * 100 + i);
          }
          store.add(rows);
          if (add == 20) {
            // a read opened now keeps the WAL entries it uses while the cache drops them
            held = store.scan(ScanSpec.all().withColumns(List.of("id", "token_count")));
            heldModel = new TreeMap<>(model);
          }
          if (add % 10 == 9) {
            assertEquals(model, StoreTestSupport.view(store, "token_count"), "view after add " + add);
            StoreStats.FreshCache cache = store.stats().freshCache();
            assertTrue(cache.bytes() <= BOUND, "within the bound: " + cache);
          }
        }
        StoreStats.FreshCache cache = store.stats().freshCache();
        assertEquals(BOUND, cache.boundBytes());
        assertTrue(cache.evictions() > 0, "60 WAL entries do not fit: " + cache);
        assertTrue(cache.entries() > 0 && cache.entries() < 60, "some fit: " + cache);
        assertTrue(cache.bytes() > 0 && cache.bytes() <= BOUND, cache.toString());

        Map<String, Object> read = new TreeMap<>();
        held.records().forEach(r -> read.put((String) r.get("id"), r.get("token_count")));
        assertEquals(heldModel, read, "the read opened before the evictions returns its snapshot");
      } finally {
        if (held != null) {
          held.close();
        }
      }
      store.seal();
      assertEquals(model, StoreTestSupport.view(store, "token_count"), "after the seal");
      store.merge();
      assertEquals(model, StoreTestSupport.view(store, "token_count"), "after the merge");
    }
  }
}
