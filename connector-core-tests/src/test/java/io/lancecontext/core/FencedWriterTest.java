package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.WriteNotAcknowledgedException;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreProcess;
import io.lancecontext.core.testing.StoreTest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.memwal.ShardWriter;
import org.lance.memwal.ShardWriterConfig;

/** A writer whose shard another writer claimed: it waits and wins the shard back, within the put timeout. */
class FencedWriterTest extends StoreTest {
  @Test
  void aFencedWriterWinsItsShardBackWithinThePutTimeoutInsteadOfFailingTheAdd() throws Exception {
    Map<String, String> o = options(dir, "reclaim", "rollout", "shards", "1", "write.fence-backoff", "400ms");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(List.of(rec("id", "before")));
      BucketWriter.LaneStats owned = store.resident().writers()[0].stats().get(0);
      assertTrue(owned.open(), "the first add opened lane 0");
      // another process claims the shard (replaying and sealing this writer's WAL tail) and lets it go
      try (Dataset ds = StoreDatasets.open(store.uri(), store.config(), LanceRuntime.get().allocator()).lance()) {
        ShardWriter intruder = ds.memWalWriter(ShardIds.forLane(0, 0), new ShardWriterConfig().withDurableWrite(true));
        intruder.close();
      }
      long t = System.nanoTime();
      store.add(List.of(rec("id", "after")));
      long millis = (System.nanoTime() - t) / 1_000_000;
      BucketWriter.LaneStats lane = store.resident().writers()[0].stats().get(0);
      assertEquals(owned.abandoned() + 1, lane.abandoned(), "the fenced writer was let go");
      assertTrue(lane.open() && lane.epoch() > owned.epoch(), "and the shard claimed back: epoch " + owned.epoch() + " -> "
          + lane.epoch());
      assertTrue(millis >= 200, "it waited the jittered back-off (400 ms x 0.5..1.5) first: " + millis + " ms");
      assertTrue(store.get("before").isPresent() && store.get("after").isPresent());
      assertEquals(2, store.count());
      System.out.println("reclaim: the add that found its writer fenced took " + millis + " ms");
    }
  }

  /**
   * A writer idle for longer than {@code gc.grace} while another claimed its shard and garbage collection removed the
   * claim's manifest versions still finds out it was fenced (it used to look for the version after the one it knew
   * only, find none, and put to a fenced shard).
   */
  @Test
  void aWriterIdleForLongerThanGcGraceFindsTheClaimGarbageCollectionHid() throws Exception {
    Map<String, String> o = options(dir, "idle", "rollout", "shards", "1", "gc.grace", "1s",
        "write.idle-timeout", "1h", "write.fence-backoff", "100ms", "merge.trigger.generations", "1000000",
        "merge.trigger.interval", "1d");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(List.of(rec("id", "before")));
      BucketWriter.LaneStats owned = store.resident().writers()[0].stats().get(0);
      assertTrue(owned.open(), "the first add opened lane 0");
      // another process claims the shard again and again: more manifest versions than collection always keeps
      try (Dataset ds = StoreDatasets.open(store.uri(), store.config(), LanceRuntime.get().allocator()).lance()) {
        for (int i = 0; i < 12; i++) {
          ds.memWalWriter(ShardIds.forLane(0, 0), new ShardWriterConfig().withDurableWrite(true)).close();
        }
      }
      for (int i = 0; i < 2; i++) {  // manifests go gc.grace and half of it after a collection saw them superseded
        Thread.sleep(1_600);
        assertTrue(store.gc().ran());
      }
      store.add(List.of(rec("id", "after")));
      BucketWriter.LaneStats lane = store.resident().writers()[0].stats().get(0);
      assertEquals(owned.abandoned() + 1, lane.abandoned(), "the fenced writer was let go");
      assertTrue(lane.epoch() > owned.epoch(), "and the shard claimed back: epoch " + owned.epoch() + " -> " + lane.epoch());
    }
    ContextStore.closeAllResident();
    try (ContextStore reopened = ContextStore.open(Map.of("path", dir.resolve("idle").toString()))) {
      assertTrue(reopened.get("after").isPresent(), "the add after the idle spell is durable");
      assertEquals(2, reopened.count());
    }
  }

  /**
   * The probe every reader of a known shard manifest uses (the fresh-tier cache, the merge triggers): after garbage
   * collection removed the versions after the known one, probing the next version finds nothing, so a look
   * {@code gc.grace} or more after the last one lists the versions instead.
   */
  @Test
  void aManifestLookGcGraceAfterTheLastOneFindsWhatAProbeNoLongerCan() throws Exception {
    Map<String, String> o = options(dir, "look", "rollout", "shards", "1", "gc.grace", "1s",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(List.of(rec("id", "before")));
      String shard = ShardIds.forLane(0, 0);
      var files = store.resident().files();
      ShardManifest known = ShardManifests.latest(files, shard);
      long grace = 1_000_000_000L;
      try (Dataset ds = StoreDatasets.open(store.uri(), store.config(), LanceRuntime.get().allocator()).lance()) {
        for (int i = 0; i < 12; i++) {
          ds.memWalWriter(shard, new ShardWriterConfig().withDurableWrite(true)).close();
        }
      }
      long newest = ShardManifests.latest(files, shard).version();
      assertTrue(newest >= known.version() + 12, known.version() + " -> " + newest);
      assertEquals(newest, ShardManifests.newest(files, shard, known, 0, grace).version(), "probed, before collection");
      for (int i = 0; i < 2; i++) {  // manifests go gc.grace and half of it after a collection saw them superseded
        Thread.sleep(1_600);
        assertTrue(store.gc().ran());
      }
      assertEquals(known.version(), ShardManifests.newest(files, shard, known, 0, grace).version(),
          "a probe right after a look cannot see past the collected versions");
      assertEquals(newest, ShardManifests.newest(files, shard, known, grace, grace).version(),
          "a look gc.grace after the last one lists them");
    }
  }

  @Test
  void addsRacingAnotherProcessClaimingTheShardWinItBackAndNeverFailBeforeThePutTimeoutIsSpent() throws Exception {
    Map<String, String> o = options(dir, "held", "rollout", "shards", "1", "write.fence-backoff", "100ms",
        "write.put-timeout", "2s");
    List<String> acked = new java.util.ArrayList<>();
    int failed = 0;
    long abandonedBefore;
    try (ContextStore store = ContextStore.open(o)) {
      store.add(List.of(rec("id", "before")));
      acked.add("before");
      abandonedBefore = store.resident().writers()[0].stats().get(0).abandoned();
      try (ChildJvm claimer = ChildJvm.start(StoreProcess.class, dir.resolve("claimer.log"), "claimer", store.uri(),
          ShardIds.forLane(0, 0), "15")) {
        assertEquals("claiming", claimer.readLine(), claimer::tail);
        long end = System.nanoTime() + 4_000_000_000L;
        for (int i = 0; System.nanoTime() < end; i++) {
          long t = System.nanoTime();
          try {
            store.add(List.of(rec("id", "k" + i)));
            acked.add("k" + i);
          } catch (WriteNotAcknowledgedException e) {
            // fenced (not won back in time), or a claim of this JVM's own that hung past the budget
            long millis = (System.nanoTime() - t) / 1_000_000;
            assertTrue(e.isRetryable());
            // the add gives up when its next claim could not start with an eighth of the budget left
            assertTrue(millis >= 2_000 - 250 - 150 && millis <= 2_000 + 5_000, "failed after " + millis + " ms, put timeout 2 s: "
                + e.getMessage());
            failed++;
          }
        }
      }
      long abandoned = store.resident().writers()[0].stats().get(0).abandoned() - abandonedBefore;
      assertTrue(abandoned >= 1, "the claims did fence this JVM's writer");
      System.out.printf("held: %d adds acknowledged, %d failed once the put timeout was spent, %d writers abandoned%n",
          acked.size() - 1, failed, abandoned);
      // once the other writer is gone, adds win the shard back; nothing acknowledged is missing
      store.add(List.of(rec("id", "after")));
      acked.add("after");
      assertEquals(acked.size(), store.get(acked).size());
    }
  }
}
