package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.internal.lance.MergedWatermarks;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreProcess;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/** Merges: deletions commit with the data (no base version shows a deleted key again or an updated key twice), and {@code merge.max-bytes} / {@code merge.max-inputs} bound one merge, oldest rows first. */
class MergeTest extends StoreTest {
  private Map<String, String> options(String name, String... more) {
    List<String> all = new ArrayList<>(List.of("shards", "4", "merge.trigger.generations", "1000",
        "merge.trigger.interval", "1h", "write.idle-timeout", "1h"));
    all.addAll(List.of(more));
    return options(dir, name, "context", all.toArray(new String[0]));
  }

  private static Map<String, Object> row(String key, int value) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("token_count", value);
    return r;
  }

  private static List<Map<String, Object>> rows(String prefix, int from, int to, int value) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(row(prefix + i, value));
    }
    return out;
  }

  /** key → tombstone flag of every base-table row, read with lance-core alone. */
  private static Map<String, Boolean> baseRows(String path) throws Exception {
    Map<String, Boolean> out = new HashMap<>();
    try (BufferAllocator allocator = new RootAllocator();
        Dataset ds = Dataset.open(path, allocator);
        LanceScanner scanner = ds.newScan(new ScanOptions.Builder().columns(List.of("id", "_lc_tombstone")).build());
        ArrowReader reader = scanner.scanBatches()) {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot b = reader.getVectorSchemaRoot();
        VarCharVector id = (VarCharVector) b.getVector("id");
        BitVector tomb = (BitVector) b.getVector("_lc_tombstone");
        for (int i = 0; i < b.getRowCount(); i++) {
          out.put(new String(id.get(i), java.nio.charset.StandardCharsets.UTF_8), !tomb.isNull(i) && tomb.get(i) != 0);
        }
      }
    }
    return out;
  }

  /** The data files of the store's flushed generations (each generation's {@code data/*.lance}), sorted. */
  private List<java.nio.file.Path> generationFiles(String name) {
    return dataFiles(dir.resolve(name).resolve("_mem_wal"));
  }

  /**
   * A flushed generation of at least {@code merge.append-min-rows} rows, every one of which wins the merge and none a
   * tombstone, becomes a base fragment as it is (its data file linked, not rewritten); a smaller one, one whose rows
   * lose to a newer generation's and one holding a tombstone are rewritten. The store reads the same before and
   * after, and after garbage collection removed the generations.
   */
  @Test
  void aMergeAppendsTheGenerationsWhoseRowsAllWinAsTheyAreAndRewritesTheOthers() throws Exception {
    Map<String, String> o = options("gen-append", "shards", "1", "merge.append-min-rows", "100", "gc.grace", "0s");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(rows("whole", 0, 300, 1));
      store.seal();
      List<java.nio.file.Path> whole = generationFiles("gen-append");
      assertEquals(1, whole.size(), whole.toString());
      store.add(rows("small", 0, 50, 1));
      store.seal();
      store.add(rows("beaten", 0, 200, 1));
      store.seal();
      store.add(rows("beaten", 0, 10, 2));  // a newer generation: its keys' rows in the one before lose
      store.seal();
      store.add(rows("tomb", 0, 150, 1));
      store.delete(List.of("small1"));  // a tombstone in the same generation as the tomb rows
      store.seal();
      List<java.nio.file.Path> all = generationFiles("gen-append");
      assertEquals(5, all.size(), all.toString());
      Map<String, Object> before = new HashMap<>();
      store.get(List.of("whole0", "whole299", "small0", "small1", "beaten0", "beaten150", "tomb0"))
          .forEach(r -> before.put((String) r.get("id"), r.get("token_count")));
      MergeResult r = store.merge();
      assertTrue(r.merged(), r::toString);
      java.nio.file.Path root = dir.resolve("gen-append");
      assertTrue(inBase(root, whole.get(0)), "the 300-row generation was rewritten, not appended");
      assertEquals(1, all.stream().filter(f -> inBase(root, f)).count(),
          "only the 300-row generation is appended whole");
      store.gc();
      assertTrue(generationFiles("gen-append").isEmpty(), "garbage collection removed the merged generations");
      Map<String, Object> after = new HashMap<>();
      store.get(List.of("whole0", "whole299", "small0", "small1", "beaten0", "beaten150", "tomb0"))
          .forEach(row -> after.put((String) row.get("id"), row.get("token_count")));
      assertEquals(before, after);
      assertEquals(Map.of("whole0", 1, "whole299", 1, "small0", 1, "beaten0", 2, "beaten150", 1, "tomb0", 1), after);
      assertEquals(300 + 49 + 200 + 150, store.count());
      assertEquals(300 + 49 + 200 + 150, baseRows(o.get("path")).values().stream().filter(t -> !t).count());
    }
  }

  @Test
  void aMergeNeverCommitsABaseVersionInWhichADeletedKeyReappearsOrAnUpdatedKeyDoubles() throws Exception {
    Map<String, String> o = options("two-commits");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(rows("k", 0, 100, 1));
      store.merge();
      long before = store.stats().baseVersion();
      store.delete(List.of("k1", "k2", "k3"));
      store.add(rows("k", 50, 60, 2));
      MergeResult r = store.merge();
      assertTrue(r.merged(), r::toString);
      assertEquals(3, r.tombstones());
      assertEquals(before + 2, r.baseVersion(), "rows and deletions in one commit, then the watermark");
      try (BufferAllocator allocator = new RootAllocator();
          Dataset prior = Dataset.open().allocator(allocator).uri(o.get("path"))
              .readOptions(new ReadOptions.Builder().setVersion(before).build()).build();
          Dataset rows = Dataset.open().allocator(allocator).uri(o.get("path"))
              .readOptions(new ReadOptions.Builder().setVersion(before + 1).build()).build();
          Dataset marked = Dataset.open().allocator(allocator).uri(o.get("path"))
              .readOptions(new ReadOptions.Builder().setVersion(before + 2).build()).build()) {
        assertEquals(MergedWatermarks.read(prior), MergedWatermarks.read(rows),
            "the version holding the merged rows still leaves their generations in the fresh tier, which reads "
                + "hide the base rows of");
        assertNotEquals(MergedWatermarks.read(rows), MergedWatermarks.read(marked));
        assertEquals(1, rows.countRows("id = 'k55'"), "an updated key has one base row");
        assertEquals(1, rows.countRows("id = 'k1' AND _lc_tombstone = true"), "a deleted key's row is its tombstone");
        assertEquals(100, rows.countRows());
        assertEquals(marked.countRows(), rows.countRows(), "the watermark commit changes no rows");
      }
      assertTrue(store.get(List.of("k1", "k2", "k3")).isEmpty());
      assertEquals(97, store.count());
      Map<String, Boolean> base = baseRows(o.get("path"));
      assertEquals(Boolean.TRUE, base.get("k1"), "the deleted key's row is replaced by its tombstone");

      assertTrue(store.flush().complete());
      base = baseRows(o.get("path"));
      assertEquals(97, base.size(), "flush leaves no tombstone row for other Lance readers");
      assertTrue(base.values().stream().noneMatch(t -> t));
      assertEquals(97, store.count());
    }
  }

  @Test
  void readersPollingDuringMergesOfUpdatesNeverSeeADoubledMissingOrOlderKey() throws Exception {
    Map<String, String> o = mergedStore("updates-poll", 300, 0);
    AtomicInteger acknowledged = new AtomicInteger();
    List<String> sample = List.of("k0", "k7", "k42", "k99", "k150", "k201", "k299");
    try (ChildJvm child = ChildJvm.start(StoreProcess.class, dir.resolve("reader.log"), "reader", o.get("path"));
        ContextStore store = ContextStore.open(o)) {
      assertEquals("ready", child.readLine(), child::tail);
      Pollers pollers = new Pollers(failures -> {
        int floor = acknowledged.get();
        List<Map<String, Object>> got = store.get(sample);
        if (got.size() != sample.size()) {
          failures.add("read " + got.size() + " of " + sample.size() + " keys: " + got);
        }
        for (Map<String, Object> r : got) {
          if (((Number) r.get("token_count")).intValue() < floor) {
            failures.add("read " + r.get("id") + " at " + r.get("token_count") + " after " + floor + " was acknowledged");
          }
        }
        List<Map<String, Object>> all = store.scanRecords(io.lancecontext.core.read.ScanSpec.all());
        long distinct = all.stream().map(r -> r.get("id")).distinct().count();
        if (all.size() != 300 || distinct != 300) {
          failures.add("a scan returned " + all.size() + " rows of " + distinct + " keys, not 300");
        }
        return true;
      }, failures -> {
        String answer = child.ask("count");
        if (!"300".equals(answer)) {
          failures.add("the other process counted " + answer + " rows, not 300");
        }
        return true;
      });
      try {
        for (int round = 1; round <= 8; round++) {
          store.add(rows("k", 0, 300, round));
          acknowledged.set(round);
          MergeResult r = store.merge();
          assertTrue(r.merged(), r::toString);
        }
        Thread.sleep(200);
      } finally {
        pollers.stop();
      }
      pollers.check();
      try (BufferAllocator allocator = new RootAllocator(); Dataset ds = Dataset.open(o.get("path"), allocator)) {
        assertEquals(300, ds.countRows(), "the base holds one row per key after the merges");
      }
      child.send("exit");
      assertEquals(0, child.waitFor(60), child::tail);
    }
  }

  @Test
  void deletedKeysNeverReappearToReadersInThisAndAnotherProcessDuringRepeatedMerges() throws Exception {
    Map<String, String> o = mergedStore("poll", 400, 1);
    List<String> deleted = new CopyOnWriteArrayList<>();
    try (ChildJvm child = ChildJvm.start(StoreProcess.class, dir.resolve("reader.log"), "reader", o.get("path"));
        ContextStore store = ContextStore.open(o)) {
      assertEquals("ready", child.readLine(), child::tail);
      int[] next = {0};
      Pollers pollers = new Pollers(failures -> {
        List<String> gone = new ArrayList<>(deleted);  // each was deleted before this read started
        if (gone.isEmpty()) {
          return false;
        }
        for (Map<String, Object> r : store.get(gone)) {
          failures.add("this process read deleted key " + r.get("id"));
        }
        long visible = store.count();
        if (visible > 400 - gone.size()) {
          failures.add("count " + visible + " with " + gone.size() + " of 400 keys deleted");
        }
        return true;
      }, failures -> {
        List<String> gone = new ArrayList<>(deleted);
        if (gone.isEmpty()) {
          return false;
        }
        String key = gone.get(next[0]++ % gone.size());
        String answer = child.ask("get " + key);
        if (!"missing".equals(answer)) {
          failures.add("the other process read deleted key " + key + ": " + answer);
        }
        return true;
      });
      try {
        for (int round = 0; round < 8; round++) {
          List<String> batch = new ArrayList<>();
          for (int i = round * 20; i < round * 20 + 20; i++) {
            batch.add("k" + i);
          }
          store.delete(batch);
          deleted.addAll(batch);
          store.add(rows("k", 300, 400, 10 + round));  // updates merged in the same commits
          MergeResult r = store.merge();
          assertTrue(r.merged(), r::toString);
        }
        assertTrue(store.flush().complete());
        Thread.sleep(200);
      } finally {
        pollers.stop();
      }
      pollers.check();
      assertEquals(400 - 160, store.count());
      child.send("exit");
      assertEquals(0, child.waitFor(60), child::tail);
    }
  }

  @Test
  void aMergeCappedByMaxBytesTakesTheOldestRowsOfABucketAndLeavesTheRestToTheNextMerge() throws Exception {
    Map<String, String> o = options("capped", "merge.max-bytes", "1");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(rows("a", 0, 400, 1));
      store.add(rows("a", 0, 200, 2));  // repeated keys: the bucket moves to its other lane
      store.add(rows("a", 100, 300, 3));
      int merges = 0;
      while (true) {
        MergeResult r = store.merge();
        if (!r.merged()) {
          break;
        }
        merges++;
        Set<Integer> buckets = new HashSet<>();
        for (String shard : r.generations().keySet()) {
          for (int b = 0; b < 4; b++) {
            if (ShardIds.forBucket(b).contains(shard)) {
              buckets.add(b);
            }
          }
        }
        assertEquals(1, buckets.size(), "one bucket per merge under a 1-byte cap: " + r);
        assertEquals(400, store.count());
        for (Map<String, Object> rec : store.get(List.of("a0", "a150", "a250", "a399", "a120", "a99", "a299"))) {
          int i = Integer.parseInt(((String) rec.get("id")).substring(1));
          int expected = i >= 100 && i < 300 ? 3 : i < 200 ? 2 : 1;
          assertEquals(expected, rec.get("token_count"), "newest row of " + rec.get("id") + " after merge " + merges);
        }
        assertTrue(merges <= 12, "at most one merge per generation");
      }
      assertTrue(merges > 4, "the buckets' generations merged in several steps: " + merges);
      assertEquals(0, store.stats().freshRows());
    }
  }

  @Test
  void manyTinyTransactionPartsMergeInStepsOfMergeMaxInputsAndReadTheSameAfterEach() throws Exception {
    Map<String, String> o = options("tiny", "merge.max-inputs", "3");
    try (ContextStore store = ContextStore.open(o)) {
      for (int t = 0; t < 10; t++) {
        WriteSummary w;
        try (StoreWriter writer = store.newWriter(WriterOptions.builder().transaction("tx" + t, "a").build())) {
          writer.write(rows("k", 0, 30, t));
          w = writer.commit();
        }
        store.publish("tx" + t, List.of(w));
        store.add(List.of(row("k5", 100 + t)));  // a generation newer than the part
      }
      int merges = 0;
      while (true) {
        MergeResult r = store.merge();
        if (!r.merged()) {
          break;
        }
        merges++;
        int taken = r.generations().values().stream().mapToInt(Integer::intValue).sum();
        assertTrue(taken <= 3, "merge " + merges + " took " + taken + " inputs: " + r);
        Map<String, Object> view = StoreTestSupport.view(store, "token_count");
        assertEquals(30, view.size());
        for (var e : view.entrySet()) {
          assertEquals(e.getKey().equals("k5") ? 109 : 9, e.getValue(), e.getKey() + " after merge " + merges);
        }
        assertTrue(merges < 100);
      }
      assertTrue(merges >= 7, "10 parts and 10 generations in steps of 3: " + merges);
      assertEquals(0, store.stats().freshRows());
      assertEquals(9, store.get("k0").orElseThrow().get("token_count"));
      assertEquals(109, store.get("k5").orElseThrow().get("token_count"));
    }
  }

  /**
   * The options of a new store holding keys {@code k0..k<keys-1>} (written with {@code value}) merged into its
   * base, and not resident in this JVM: the readers of a polling test start from the files alone.
   */
  private Map<String, String> mergedStore(String name, int keys, int value) {
    Map<String, String> o = options(name);
    try (ContextStore created = ContextStore.open(o)) {
      created.add(rows("k", 0, keys, value));
      created.merge();
    }
    ContextStore.closeAllResident();
    return o;
  }

  /**
   * Two readers that poll until {@link #stop()}: one in this process, one asking the child process. A poll
   * returns whether it read (false: nothing to check yet) and adds what it found wrong to {@code failures};
   * a poll that throws is a failure too (and, for an I/O error talking to the child, ends that reader).
   */
  private static final class Pollers {
    @FunctionalInterface
    interface Poll {
      boolean poll(java.util.Queue<String> failures) throws java.io.IOException;
    }

    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong hereReads = new AtomicLong();
    private final AtomicLong childReads = new AtomicLong();
    private final List<Thread> threads;

    Pollers(Poll here, Poll child) {
      threads = List.of(reader(here, hereReads), reader(child, childReads));
      threads.forEach(Thread::start);
    }

    private Thread reader(Poll poll, AtomicLong reads) {
      return new Thread(() -> {
        while (!stop.get()) {
          try {
            if (poll.poll(failures)) {
              reads.incrementAndGet();
            }
          } catch (java.io.IOException e) {
            failures.add(e.toString());
            return;
          } catch (RuntimeException e) {
            failures.add(e.toString());
            reads.incrementAndGet();
          }
        }
      });
    }

    void stop() throws InterruptedException {
      stop.set(true);
      for (Thread t : threads) {
        t.join(60_000);
      }
    }

    /** After {@link #stop()}: no reader saw anything wrong, and each read more than 8 times meanwhile. */
    void check() {
      assertTrue(failures.isEmpty(), () -> failures.size() + " failures, first: " + failures.peek());
      assertTrue(hereReads.get() > 8 && childReads.get() > 8,
          "the readers polled during the merges: " + hereReads + " / " + childReads);
    }
  }
}
