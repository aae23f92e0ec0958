package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.internal.store.ResidentStore;
import io.lancecontext.core.internal.store.StoreRegistry;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ScanSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import io.lancecontext.core.testing.StoreTest;
import org.junit.jupiter.api.Test;

/**
 * A location dropped and created again by another process holds another store: a JVM that kept the old
 * store resident (an executor between jobs) never serves the old store's rows from it, and never writes
 * them into the new one. The other process is simulated by a second registry: {@link ContextStore#drop}
 * closes {@link StoreRegistry#INSTANCE}'s resident store, not this one's.
 */
class RecreatedStoreTest extends StoreTest {

  private static TreeSet<String> keys(ContextStore store) {
    TreeSet<String> out = new TreeSet<>();
    for (Map<String, Object> r : store.scanRecords(ScanSpec.all())) {
      out.add((String) r.get("id"));
    }
    return out;
  }

  @Test
  void aResidentStoreOfADroppedAndRecreatedLocationNeverServesOrWritesTheOldRows() {
    Map<String, String> create = options(dir, "t", "rollout");
    StoreConfig open = StoreConfig.of(Map.of("path", dir.resolve("t").toString()));
    StoreRegistry executor = new StoreRegistry(8, Duration.ofMinutes(10));
    ContextStore old = ContextStore.open(executor, StoreConfig.of(create));
    old.add(List.of(rec("id", "old-1"), rec("id", "old-2")));  // durable in the WAL tail of writers kept open
    ResidentStore kept = old.resident();
    old.close();  // the job ends; the store stays resident with its writers and caches

    assertTrue(ContextStore.drop(create), "another process drops the table");
    try (ContextStore recreated = ContextStore.open(create)) {
      recreated.add(List.of(rec("id", "new-1")));
    }
    ContextStore.closeAllResident();

    try (ContextStore next = ContextStore.open(executor, open)) {  // the executor's next job
      assertNotSame(kept, next.resident(), "the resident store of the dropped store is not reused");
      assertEquals(new TreeSet<>(List.of("new-1")), keys(next));
      assertEquals(1, next.get(List.of("old-1", "old-2", "new-1")).size());
    }
    executor.closeAll();  // the JVM exits: nothing of the old store is sealed into the new one
    try (ContextStore fresh = ContextStore.open(open.asMap())) {
      assertEquals(new TreeSet<>(List.of("new-1")), keys(fresh));
    }
  }

  @Test
  void anIdleResidentStoreOfADroppedAndRecreatedLocationIsClosedWithoutWritingIntoTheNewStore() {
    Map<String, String> create = options(dir, "u", "rollout");
    StoreRegistry executor = new StoreRegistry(8, Duration.ofMinutes(10));
    try (ContextStore old = ContextStore.open(executor, StoreConfig.of(create))) {
      old.add(List.of(rec("id", "old-1")));
    }
    assertTrue(ContextStore.drop(create));
    try (ContextStore recreated = ContextStore.open(create)) {
      recreated.add(List.of(rec("id", "new-1")));
    }
    ContextStore.closeAllResident();
    executor.closeAll();  // idle eviction or JVM exit of the executor that kept the old store
    try (ContextStore fresh = ContextStore.open(Map.of("path", dir.resolve("u").toString()))) {
      assertEquals(new TreeSet<>(List.of("new-1")), keys(fresh));
    }
  }
}
