package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.read.ReadLease;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.testing.StoreTest;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A read plan held by a lease ({@link ContextStore#holdRead}) stays readable long after {@code gc.grace}
 * while merges, a compaction and garbage collection rewrite and delete every tier it read; the same plan
 * without a lease fails once its files are collected (so the lease is what keeps it).
 */
class ReadLeaseTest extends StoreTest {
  private static final ScanSpec SCAN = ScanSpec.all().withColumns(List.of("id", "token_count"));

  private Map<String, String> options(String... more) {
    List<String> all = new ArrayList<>(List.of("gc.grace", "1s", "merge.trigger.generations", "1000000",
        "merge.trigger.interval", "1d", "read.lease-timeout", "1h"));
    all.addAll(List.of(more));
    return options(dir, "s", "context", all.toArray(new String[0]));
  }

  private static Map<String, Object> readAll(List<ReadSplit> splits) {
    Map<String, Object> out = new TreeMap<>();
    try (ContextStore reader = ContextStore.open(Map.of("path", splits.get(0).config().uri()))) {
      for (ReadSplit split : splits) {
        try (StoreReader r = reader.read(split)) {
          for (Map<String, Object> row : r.records()) {
            out.put((String) row.get("id"), row.get("token_count"));
          }
        }
      }
    }
    return out;
  }

  private static void rewriteEveryTier(ContextStore store, int round) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      rows.add(rec("id", "k" + i, "token_count", 1000 * round + i));
    }
    store.add(rows);
    store.seal();
    store.merge();
  }

  @Test
  void aLeasedPlanReadsItsSnapshotAfterEveryTierWasRewrittenAndCollected() throws Exception {
    Map<String, Object> expected;
    List<ReadSplit> leased;
    List<ReadSplit> unleased;
    try (ContextStore store = ContextStore.open(options())) {
      rewriteEveryTier(store, 0);
      store.add(List.of(rec("id", "k5", "token_count", -5)));
      store.seal();                                               // an unmerged generation
      store.add(List.of(rec("id", "k40", "token_count", -40)));   // the WAL tail
      unleased = store.planRead(SCAN, 4).splits();  // planned first: what changes next is obsolete for it
      rewriteEveryTier(store, 1);
      store.compact();
      store.add(List.of(rec("id", "k41", "token_count", -41)));
      expected = StoreTestSupport.view(store, "token_count");
      Thread.sleep(1_500);  // more than the margin by which a leased plan's time is taken earlier
      ReadPlan plan = store.planRead(SCAN, 4);
      leased = plan.splits();
      try (ReadLease lease = store.holdRead(plan)) {
        for (int round = 2; round <= 3; round++) {
          rewriteEveryTier(store, round);
        }
        store.compact();
        rewriteEveryTier(store, 4);
        Thread.sleep(2_500);  // gc.grace and the shard views' manifest recheck, past
        GcResult gc = store.gc();
        assertTrue(gc.generationDirs() > 0 || gc.walEntries() > 0 || gc.baseVersionsRemoved() > 0,
            "collection ran and deleted what no leased read needs: " + gc);
        ContextStore.closeAllResident();  // no cache of this JVM may serve the reads below
        assertThrows(StorageException.class, () -> readAll(unleased), "a plan nobody holds loses its files");
        assertEquals(expected, readAll(leased), "the leased plan reads exactly its snapshot");
      }
    }
    try (var leases = Files.list(dir.resolve("s/_lc/read-leases"))) {
      assertEquals(1, leases.count(), "a closed lease stays until it runs out (read.lease-timeout)");
    }
  }

  @Test
  void aLeaseThatRanOutNoLongerKeepsAnythingAndIsDeleted() throws Exception {
    try (ContextStore store = ContextStore.open(options("read.lease-timeout", "200ms"))) {
      rewriteEveryTier(store, 0);
      ReadPlan plan = store.planRead(SCAN, 2);
      store.holdRead(plan).close();
      rewriteEveryTier(store, 1);
      store.compact();
      Thread.sleep(2_500);
      GcResult gc = store.gc();
      assertTrue(gc.baseVersionsRemoved() > 0, "superseded base versions collected: " + gc);
      try (var leases = Files.list(dir.resolve("s/_lc/read-leases"))) {
        assertEquals(0, leases.count());
      }
    }
  }

  @Test
  void aHeldLeaseDoesNotKeepTheStagedPartsOfAnAbortedTransaction() throws Exception {
    try (ContextStore store = ContextStore.open(options())) {
      rewriteEveryTier(store, 0);
      try (ReadLease lease = store.holdRead(store.planRead(SCAN, 2))) {
        TransactionTest.stage(store, "dropped", "a", 0, 10, 1);
        store.abort("dropped");
        Thread.sleep(1_200);  // gc.grace
        store.gc();
        try (var left = Files.list(dir.resolve("s/_lc/txn/dropped"))) {
          assertEquals(List.of("record"), left.map(p -> p.getFileName().toString()).toList(),
              "parts no read ever saw wait gc.grace only");
        }
        lease.release();
      }
      try (var leases = Files.list(dir.resolve("s/_lc/read-leases"))) {
        assertEquals(0, leases.count(), "a released lease is gone at once");
      }
    }
  }
}
