package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.internal.read.FreshShard;
import io.lancecontext.core.internal.read.GenerationSource;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.store.ResidentStore;
import io.lancecontext.core.internal.store.StoreRegistry;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.SessionProbe;
import io.lancecontext.core.testing.StoreTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.lance.Session;

/** One bounded Lance session per JVM and resident stores (design §4). */
class ResidentStoresTest extends StoreTest {
  @Test
  void everyStoreBaseAndGenerationUsesTheOneSharedSession() {
    try (ContextStore a = ContextStore.open(options(dir, "a", "rollout"));
        ContextStore b = ContextStore.open(options(dir, "b", "context"))) {
      a.add(List.of(rec("id", "x")));
      a.seal();
      assertNotNull(LanceRuntime.get().sharedSession());
      Session shared = LanceRuntime.get().sharedSession().lance();
      assertTrue(a.resident().baseDataset().lance().session().isSameAs(shared));
      assertTrue(b.resident().baseDataset().lance().session().isSameAs(shared));
      try (LsmSnapshot snap = a.resident().snapshot(null)) {
        assertTrue(snap.base().dataset().lance().session().isSameAs(shared));
        int generations = 0;
        for (FreshShard s : snap.shards().values()) {
          for (var source : s.sources()) {
            if (source instanceof GenerationSource g) {
              assertTrue(g.dataset().lance().session().isSameAs(shared), "generations inherit the shared session");
              generations++;
            }
          }
        }
        assertEquals(1, generations);
      }
    }
  }

  @Test
  void zeroCacheBytesGivesEachDatasetItsOwnSession() {
    try (ContextStore shared = ContextStore.open(options(dir, "s", "rollout"));
        ContextStore unshared = ContextStore.open(options(dir, "z", "rollout", "cache.bytes", "0"))) {
      assertNotNull(LanceRuntime.get().sharedSession(), "the store with the default budget built the shared session");
      Session jvmSession = LanceRuntime.get().sharedSession().lance();
      assertTrue(shared.resident().baseDataset().lance().session().isSameAs(jvmSession));
      unshared.add(List.of(rec("id", "x")));
      unshared.seal();
      try (LsmSnapshot snap = unshared.resident().snapshot(null)) {
        List<Session> sessions = new ArrayList<>();
        sessions.add(unshared.resident().baseDataset().lance().session());
        sessions.add(snap.base().dataset().lance().session());
        for (FreshShard shard : snap.shards().values()) {
          for (var source : shard.sources()) {
            if (source instanceof GenerationSource g) {
              sessions.add(g.dataset().lance().session());
            }
          }
        }
        assertEquals(3, sessions.size(), "the resident base, the snapshot's base and one generation");
        for (int i = 0; i < sessions.size(); i++) {
          Session si = sessions.get(i);
          assertNotNull(si, "lance-core gives a dataset opened without a session one of its own");
          assertFalse(si.isSameAs(jvmSession), "dataset " + i + " uses the JVM's shared session");
          for (int j = i + 1; j < sessions.size(); j++) {
            assertFalse(si.isSameAs(sessions.get(j)), "datasets " + i + " and " + j + " share a session");
          }
        }
      }
      assertEquals(1, unshared.count());
    }
  }

  @Test
  void aTinyBudgetStaysBoundedWhile100GenerationsAreOpenedAndRead() throws Exception {
    String path = dir.resolve("tiny").toString();
    try (ChildJvm probe = ChildJvm.start(SessionProbe.class, dir.resolve("probe.log"), path, "100", Long.toString(1L << 20))) {
      String result = probe.readLine();
      assertEquals(0, probe.waitFor(600), probe::tail);
      assertNotNull(result, probe::tail);
      String[] p = result.split(" ");  // "session max=<bytes> budget=<bytes> generations=<n>"
      long max = Long.parseLong(p[1].substring(4));
      long budget = Long.parseLong(p[2].substring(7));
      int generations = Integer.parseInt(p[3].substring(12));
      System.out.println("tiny budget: " + result);
      assertEquals(1L << 20, budget);
      assertEquals(100, generations);
      assertTrue(max <= budget * 11 / 10, "session grew to " + max + " bytes, budget " + budget);
      assertTrue(max > budget / 4, "the probe did fill the caches: " + max);
    }
  }

  @Test
  void evictionClosesIdleStoresAndTheirWritersWithoutLeaks() throws Exception {
    long baseline = LanceRuntime.get().allocator().getAllocatedMemory();
    StoreRegistry registry = new StoreRegistry(8, Duration.ofMillis(200));
    ContextStore handle = ContextStore.open(registry, StoreConfig.of(options(dir, "e", "rollout")));
    handle.add(List.of(rec("id", "a"), rec("id", "b"), rec("id", "c")));
    ResidentStore resident = handle.resident();
    assertTrue(resident.openWriters() > 0);
    assertTrue(LanceRuntime.get().allocator().getAllocatedMemory() > baseline, "the WAL tail is cached");
    handle.close();
    assertEquals(1, registry.residentStores(), "stays resident after its last handle closes");
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (registry.residentStores() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(50);
      registry.cleanUp();
    }
    assertEquals(0, registry.residentStores());
    assertTrue(resident.isClosed());
    assertEquals(baseline, LanceRuntime.get().allocator().getAllocatedMemory(), "no Arrow memory left behind");
    try (ContextStore reopened = ContextStore.open(Map.of("path", dir.resolve("e").toString()))) {
      StoreStats s = reopened.stats();
      assertEquals(0, s.shards().stream().mapToInt(StoreStats.Shard::walTailEntries).sum(), "eviction sealed the WAL tail");
      assertTrue(s.unmergedGenerations() >= 1);
      assertEquals(3, reopened.count());
    }
  }

  @Test
  void aStoreWithOpenHandlesIsNeverEvicted() throws Exception {
    StoreRegistry registry = new StoreRegistry(0, Duration.ofMillis(1));
    try (ContextStore handle = ContextStore.open(registry, StoreConfig.of(options(dir, "pinned", "rollout")))) {
      Thread.sleep(100);
      registry.cleanUp();
      assertEquals(1, registry.residentStores());
      handle.add(List.of(rec("id", "still-open")));
      assertEquals(1, handle.count());
    }
  }

  @Test
  void eightThreadsOpeningOneLocationShareOneStore() throws Exception {
    Map<String, String> options = options(dir, "shared", "rollout");
    ContextStore.open(options).close();  // created
    ContextStore.closeAllResident();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<ContextStore>> futures = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      futures.add(pool.submit(() -> {
        start.await();
        return ContextStore.open(Map.of("path", dir.resolve("shared").toString()));
      }));
    }
    start.countDown();
    List<ContextStore> handles = new ArrayList<>();
    for (Future<ContextStore> f : futures) {
      handles.add(f.get());
    }
    pool.shutdown();
    ResidentStore first = handles.get(0).resident();
    for (ContextStore h : handles) {
      assertSame(first, h.resident());
    }
    assertEquals(1, ContextStore.residentStores());
    for (int i = 0; i < 8; i++) {
      handles.get(i).add(List.of(rec("id", "t" + i)));
    }
    assertEquals(8, handles.get(3).count());
    handles.forEach(ContextStore::close);
  }
}
