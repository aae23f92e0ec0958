package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancecontext.core.internal.read.StoreScan;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreTest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
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
      fillEveryTier(store, 4, 50, 30);  // four merges: several base fragments

      ScanSpec scan = ScanSpec.all().withColumns(List.of("id", "token_count"));
      Map<String, Object> expected = StoreTestSupport.view(store, "token_count");
      ReadPlan plan = store.planRead(scan, 4);
      List<ReadSplit> splits = roundTrip(plan.splits());
      assertTrue(splits.stream().anyMatch(s -> s.part() == ReadSplit.Part.BASE), "base parts: " + splits);
      assertTrue(splits.stream().anyMatch(s -> s.part() == ReadSplit.Part.FRESH), "fresh parts: " + splits);
      assertEquals(expected, readAll(store, splits));
      // a budget of one split: the whole view in one
      ReadPlan one = store.planRead(scan, 1);
      assertEquals(1, one.splits().size(), one.splits().toString());
      assertEquals(ReadSplit.Part.ALL, one.splits().get(0).part());
      assertEquals(expected, readAll(store, roundTrip(one.splits())));
      // later writes do not change what the plan reads
      store.add(List.of(rec("id", "k5", "token_count", 555), rec("id", "later", "token_count", 1)));
      store.seal();
      store.merge();
      assertEquals(expected, readAll(store, splits));

      Predicate negative = Predicate.compare("token_count", Predicate.Op.LT, 0L);
      Map<String, Object> filtered = new TreeMap<>();
      for (ReadSplit s : store.planRead(scan.withFilter(negative), 3).splits()) {
        try (StoreReader r = store.read(s)) {
          r.records().forEach(m -> filtered.put((String) m.get("id"), m.get("token_count")));
        }
      }
      assertEquals(Map.of("k40", -40), filtered, "k5 was re-written after the first plan");
      assertThrows(IllegalArgumentException.class, () -> store.planRead(scan.withOffset(1), 2));
    }
  }

  /**
   * A read confined to keys (id = .., id IN (..)) excludes from its base parts only those of its keys the
   * fresh tier holds, and still never returns a replaced or deleted row: keys updated in a generation and in
   * the WAL tail, a deleted key, a base-only key and a missing one.
   */
  @Test
  void aReadConfinedToKeysReturnsTheirNewestRowsOnlyFromEveryPart() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "confined", "context"))) {
      fillEveryTier(store, 4, 50, 30);
      ScanSpec scan = ScanSpec.all().withColumns(List.of("id", "token_count"));
      Map<String, Object> expected = new TreeMap<>(Map.of("k5", -5, "k40", -40, "k7", 7, "new", 7));
      Predicate keys = Predicate.in("id", List.of("k5", "k40", "k41", "k7", "new", "absent"));
      ReadPlan byKey = store.planRead(scan.withFilter(keys), 4);
      assertEquals(expected, readAll(store, roundTrip(byKey.splits())));
      // one split of the whole view (more would be tasks finding nothing), its fresh tier the keys' buckets only
      assertEquals(1, byKey.splits().size(), byKey.splits().toString());
      assertEquals(ReadSplit.Part.ALL, byKey.splits().get(0).part());
      ReadSplit one = store.planRead(scan.withFilter(Predicate.eq("id", "k5")), 3).splits().get(0);
      assertEquals(ReadSplit.Part.ALL, one.part());
      assertEquals(io.lancecontext.core.internal.write.ShardIds.forBucket(ContextStore.bucketOf("k5", store.shards())),
          one.shards(), "k5's bucket's lanes");
      assertEquals(Map.of("k5", -5), readAll(store, List.of(one)));
      assertEquals(Map.of(), readAll(store, store.planRead(scan.withFilter(Predicate.eq("id", "k41")), 3).splits()));
    }
  }

  /** Which reads only count (engines push COUNT(*) down to them): no column, no filter, nothing hidden by rules. */
  @Test
  void readsThatOnlyCount() {
    io.lancecontext.core.schema.SchemaSpec rollout = io.lancecontext.core.schema.SchemaPresets.byName("rollout", 4);
    io.lancecontext.core.schema.SchemaSpec context = io.lancecontext.core.schema.SchemaPresets.byName("context", 4);
    ScanSpec none = ScanSpec.all().withColumns(List.of());
    assertTrue(ContextStore.countsOnly(rollout, none));
    assertTrue(!ContextStore.countsOnly(rollout, ScanSpec.all()), "columns");
    assertTrue(!ContextStore.countsOnly(rollout, none.withFilter(Predicate.eq("id", "a"))), "a filter");
    assertTrue(!ContextStore.countsOnly(rollout, none.withLimit(3)), "a limit");
    assertTrue(!ContextStore.countsOnly(rollout, none.between("t1", null)), "an incremental read");
    assertTrue(!ContextStore.countsOnly(context, none), "lifecycle and supersession hide rows");
    assertTrue(ContextStore.countsOnly(context, none.withIncludeExpired(true).withIncludeSuperseded(true)));
  }

  /**
   * A split planned here and read in another JVM after merges, a compaction and garbage collection
   * returns exactly its snapshot while within gc.grace of planning; once gc.grace has passed since the
   * files it needs became obsolete, garbage collection removes them and the read fails with a typed
   * error. On a machine too slow to read within the grace, the scenario is repeated with a longer one.
   */
  @Test
  void aSplitReadsExactlyItsSnapshotInAnotherProcessUntilGcGraceWhileMaintenanceRuns() throws Exception {
    for (long grace : new long[] {4, 10, 25}) {
      if (readWithinGrace(grace)) {
        return;
      }
    }
    fail("the child read never happened within 25 s of planning");
  }

  private boolean readWithinGrace(long graceSeconds) throws Exception {
    String name = "grace" + graceSeconds;
    try (ContextStore store = ContextStore.open(options(dir, name, "context", "gc.grace", graceSeconds + "s",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"));
        ChildJvm reader = ChildJvm.start(SplitReaderProcess.class, dir.resolve(name + ".log"), store.uri(), "token_count")) {
      fillEveryTier(store, 3, 40, 20);
      assertEquals("ready", reader.readLine(), reader.tail());
      // the files the plan will need are older than gc.grace before it is made: age since creation
      // must not count, only age since they stopped being needed
      Thread.sleep(graceSeconds * 1000 + 500);

      Map<String, Object> expected = StoreTestSupport.view(store, "token_count");
      List<ReadSplit> splits = store.planRead(ScanSpec.all().withColumns(List.of("id", "token_count")), 4).splits();
      Instant planned = splits.get(0).snapshot().plannedAt();
      String serialized = serialize(splits);

      for (int round = 0; round < 2; round++) {  // every tier rewritten, merged, compacted
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 70; i++) {
          rows.add(rec("id", "k" + i, "token_count", 10_000 * (round + 1) + i));
        }
        rows.add(rec("id", "new", "token_count", -1));
        store.add(rows);
        store.delete(List.of("k3", "k40"));
        store.seal();
        store.merge();
      }
      long beforeCompaction = store.stats().baseVersion();
      CompactionResult compacted = store.compact();
      store.add(List.of(rec("id", "last", "token_count", 1)));
      store.seal();
      store.merge();
      long lastObsolete = System.currentTimeMillis();
      GcResult early = store.gc();
      String answer = reader.ask(serialized);
      if (Instant.now().isAfter(planned.plus(Duration.ofSeconds(graceSeconds)))) {
        reader.send("exit");
        return false;
      }
      assertTrue(compacted.ran() && compacted.baseVersion() > beforeCompaction, "the compaction rewrote fragments: " + compacted);
      assertTrue(early.ran(), early.toString());
      assertEquals("ok " + SplitReaderProcess.render(expected), answer, "read after " + early);

      Map<String, Object> now = StoreTestSupport.view(store, "token_count");
      // WAL entries and manifests are kept the shard views' manifest recheck interval longer than the grace
      long collectAfter = lastObsolete + graceSeconds * 1000 + 500 + io.lancecontext.core.internal.read.FreshCache
          .manifestRecheckNanos(Duration.ofSeconds(graceSeconds)) / 1_000_000;
      while (System.currentTimeMillis() < collectAfter) {
        Thread.sleep(100);
      }
      GcResult late = store.gc();
      assertTrue(late.generationDirs() > 0, "merged generations collected: " + late);
      assertTrue(late.walEntries() > 0, "sealed WAL entries collected: " + late);
      assertTrue(late.baseVersionsRemoved() > 0, "superseded base versions collected: " + late);
      String after = reader.ask(serialized);
      assertTrue(after.startsWith("error io.lancecontext.core.error.StorageException"), after);
      assertEquals(now, StoreTestSupport.view(store, "token_count"), "the store itself lost nothing");
      reader.send("exit");
      assertEquals(0, reader.waitFor(60), reader.tail());
      return true;
    }
  }

  private static String serialize(List<ReadSplit> splits) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(new ArrayList<>(splits));
    }
    return Base64.getEncoder().encodeToString(bytes.toByteArray());
  }

  @Test
  void aSplitNeverCarriesStorageOptions() throws Exception {
    io.lancecontext.core.options.StoreConfig config = io.lancecontext.core.options.StoreConfig.of(Map.of(
        "path", dir.resolve("s").toString(), "gc.grace", "1m", "storage.aws_secret_access_key", "s3cr3t-value"));
    ReadSplit split = new ReadSplit(config, new ReadSplit.Snapshot(1, Map.of(), Instant.now()), ScanSpec.all(),
        ReadSplit.Part.FRESH, null);
    assertEquals(Map.of(), split.config().storageOptions());
    assertEquals("1m", split.config().asMap().get("gc.grace"), "other options stay");
    String serialized = new String(Base64.getDecoder().decode(serialize(List.of(split))), java.nio.charset.StandardCharsets.ISO_8859_1);
    assertTrue(!serialized.contains("s3cr3t-value"), "the secret is not in the serialized split");
  }

  /**
   * With rows of every bucket in every tier, a superseding record in the fresh tier naming a base key of
   * another bucket, and a deletion: every plan size returns exactly the view; a generous plan reads the
   * fresh tier in one part per bucket holding fresh keys (both lanes of a bucket in one part, no shard in
   * two parts); the estimates add up to the base table's physical rows and the fresh tier's keys.
   */
  @Test
  void theFreshTierIsSplitByWholeBucketsAndEveryPlanSizeReturnsTheView() throws Exception {
    try (ContextStore store = ContextStore.open(options(dir, "buckets", "context", "shards", "4",
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      fillEveryTier(store, 3, 40, 20);
      List<Map<String, Object>> fresh = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        fresh.add(rec("id", "f" + i, "token_count", 100 + i));
      }
      store.add(fresh.subList(0, 30));
      store.seal();
      store.add(fresh.subList(30, 60));
      String victim = "k1";
      String superseder = firstKeyOutsideBucket(store, store.bucketOf(victim));
      store.add(List.of(rec("id", superseder, "token_count", 9, "supersedes", victim)));

      ScanSpec scan = ScanSpec.all().withColumns(List.of("id", "token_count"));
      Map<String, Object> expected = StoreTestSupport.view(store, "token_count");
      assertTrue(!expected.containsKey(victim) && expected.containsKey(superseder), "superseded hidden in the view");
      for (int maxSplits : new int[] {1, 2, 3, 5, 8, 32}) {
        ReadPlan plan = store.planRead(scan, maxSplits);
        assertEquals(expected, readAll(store, roundTrip(plan.splits())), maxSplits + " splits: " + plan.splits());
      }

      ReadPlan plan = store.planRead(scan, 32);
      java.util.Set<Integer> freshBuckets = new java.util.TreeSet<>();
      for (int i = 0; i < 60; i++) {
        freshBuckets.add(store.bucketOf("f" + i));
      }
      List<ReadSplit> freshParts = plan.splits().stream().filter(s -> s.part() == ReadSplit.Part.FRESH).toList();
      assertEquals(freshBuckets.size(), freshParts.size(), "one fresh part per bucket: " + freshParts);
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (ReadSplit part : freshParts) {
        for (String shard : part.shards()) {
          assertTrue(seen.add(shard), "shard " + shard + " in two parts");
        }
        java.util.Set<Integer> bucketsOfPart = new java.util.HashSet<>();
        for (int b = 0; b < store.shards(); b++) {
          List<String> lanes = io.lancecontext.core.internal.write.ShardIds.forBucket(b);
          if (part.shards().containsAll(lanes)) {
            bucketsOfPart.add(b);
          } else {
            assertTrue(java.util.Collections.disjoint(part.shards(), lanes), "a part holds a whole bucket: " + part.shards());
          }
        }
        assertEquals(1, bucketsOfPart.size(), part.shards().toString());
      }

      var stats = store.stats();
      long baseRows = 0;
      long freshRows = 0;
      for (int i = 0; i < plan.splits().size(); i++) {
        ReadPlan.Estimate e = plan.estimate(i);
        assertTrue(e.rows() > 0 && e.bytes() > 0, "split " + i + ": " + e);
        if (plan.splits().get(i).part() == ReadSplit.Part.BASE) {
          baseRows += e.rows();
        } else {
          freshRows += e.rows();
        }
      }
      assertEquals(stats.baseRows(), baseRows, "base estimates: the fragments' rows");
      assertEquals(stats.freshRows(), freshRows, "fresh estimates: the fresh tier's keys");
      assertEquals(baseRows + freshRows, plan.estimatedRows());
    }
  }

  /**
   * What a split's snapshot holds is proportional to the split: a base split's holds no shard view, only
   * the fresh tier's key set, computed once per plan (every base split of the plan shares the same set); a
   * fresh split's holds the views of its own shards only.
   */
  @Test
  void aBaseSplitHoldsOnlyTheFreshKeySetSharedByThePlanAndAFreshSplitOnlyItsShards() {
    try (ContextStore store = ContextStore.open(options(dir, "cost", "context", "shards", "4"))) {
      fillEveryTier(store, 3, 40, 20);
      java.util.Set<String> freshKeys;
      try (var live = store.resident().snapshot(null)) {
        freshKeys = java.util.Set.copyOf(live.freshKeys());
      }
      ReadPlan plan = store.planRead(ScanSpec.all(), 8);
      List<ReadSplit> base = plan.splits().stream().filter(s -> s.part() == ReadSplit.Part.BASE).toList();
      List<ReadSplit> fresh = plan.splits().stream().filter(s -> s.part() == ReadSplit.Part.FRESH).toList();
      assertTrue(base.size() >= 2 && !fresh.isEmpty(), plan.splits().toString());
      try (var first = store.resident().pinnedSnapshot(base.get(0));
          var second = store.resident().pinnedSnapshot(base.get(1))) {
        assertEquals(Map.of(), first.shards(), "no shard view in a base split");
        assertEquals(freshKeys, first.freshKeys());
        org.junit.jupiter.api.Assertions.assertSame(first.freshKeys(), second.freshKeys(), "computed once per plan");
      }
      for (ReadSplit split : fresh) {
        try (var snapshot = store.resident().pinnedSnapshot(split)) {
          assertEquals(new java.util.HashSet<>(split.shards()), snapshot.shards().keySet());
        }
      }
    }
  }

  private static String firstKeyOutsideBucket(ContextStore store, int bucket) {
    for (int i = 0; ; i++) {
      if (store.bucketOf("s" + i) != bucket) {
        return "s" + i;
      }
    }
  }

  /**
   * The reading process supplies its own storage options ({@code openForSplit}): a split planned by a
   * handle holding a secret carries none, and another JVM that opens the store from the split alone, with
   * its own table options, reads exactly the view.
   */
  @Test
  void anotherProcessReadsASplitWithItsOwnStorageOptions() throws Exception {
    Map<String, String> o = new java.util.HashMap<>(options(dir, "own", "context", "shards", "4"));
    o.put("storage.aws_secret_access_key", "planner-side-secret");
    try (ContextStore store = ContextStore.open(o);
        ChildJvm reader = ChildJvm.start(SplitReaderProcess.class, dir.resolve("own.log"), store.uri(), "token_count",
            "openForSplit")) {
      fillEveryTier(store, 2, 30, 20);
      assertEquals("ready", reader.readLine(), reader.tail());
      Map<String, Object> expected = StoreTestSupport.view(store, "token_count");
      String serialized = serialize(store.planRead(ScanSpec.all().withColumns(List.of("id", "token_count")), 6).splits());
      String bytes = new String(Base64.getDecoder().decode(serialized), java.nio.charset.StandardCharsets.ISO_8859_1);
      assertTrue(!bytes.contains("planner-side-secret") && !bytes.contains("aws_secret_access_key"),
          "no storage option in the serialized splits");
      assertEquals("ok " + SplitReaderProcess.render(expected), reader.ask(serialized));
      reader.send("exit");
      assertEquals(0, reader.waitFor(60), reader.tail());
    }
  }

  /**
   * Rows in every tier: {@code merges} rounds of {@code rows} upserts (keys {@code k<round*stride+i>},
   * overlapping across rounds) each merged into the base, then an update and a new key in an unmerged
   * generation, an update in the WAL tail, and a deletion.
   */
  private static void fillEveryTier(ContextStore store, int merges, int rows, int stride) {
    for (int round = 0; round < merges; round++) {
      List<Map<String, Object>> batch = new ArrayList<>();
      for (int i = 0; i < rows; i++) {
        batch.add(rec("id", "k" + (round * stride + i), "token_count", round * 1000 + i));
      }
      store.add(batch);
      store.seal();
      store.merge();
    }
    store.add(List.of(rec("id", "k5", "token_count", -5), rec("id", "new", "token_count", 7)));
    store.seal();                                              // an unmerged generation
    store.add(List.of(rec("id", "k40", "token_count", -40)));  // the WAL tail
    store.delete(List.of("k41"));
  }
}
