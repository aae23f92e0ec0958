package io.lancecontext.core.internal.lance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

class KeyIndexTest extends StoreTest {
  @Test
  void chunksGrowSoThatALookupRunsAtMostSixtyFourFilters() {
    assertEquals(KeyIndex.LOOKUP_CHUNK, KeyIndex.chunkSize(1));
    assertEquals(KeyIndex.LOOKUP_CHUNK, KeyIndex.chunkSize(64 * KeyIndex.LOOKUP_CHUNK));
    assertEquals(KeyIndex.LOOKUP_CHUNK + 1, KeyIndex.chunkSize(64 * KeyIndex.LOOKUP_CHUNK + 1));
    assertEquals(3_125, KeyIndex.chunkSize(200_000));
    assertEquals(KeyIndex.LOOKUP_CHUNK_MAX, KeyIndex.chunkSize(10_000_000));
  }

  /** Present and absent keys over many chunks of the index and an unindexed fragment: exactly the present rows. */
  @Test
  void rowOffsetsFindEveryPresentKeyAndNoOther() {
    StoreConfig config = config("k");
    SchemaSpec spec;
    try (ContextStore store = ContextStore.open(config)) {
      spec = store.spec();
      store.add(rows("a", 80_000));
      store.seal();
      store.merge();  // indexed
      store.add(rows("b", 3_000));
      store.seal();
      store.merge();  // a fragment the index does not cover yet
    }
    ContextStore.closeAllResident();
    List<String> lookup = new ArrayList<>();
    Set<String> present = new TreeSet<>();
    for (int i = 0; i < 80_000; i += 4) {
      lookup.add("a" + i);
      present.add("a" + i);
      lookup.add("x" + i);  // absent, between present keys in sort order
    }
    for (int i = 0; i < 3_000; i += 7) {
      lookup.add("b" + i);
      present.add("b" + i);
    }
    assertTrue(lookup.size() > 64 * KeyIndex.LOOKUP_CHUNK, "the lookup spans chunks larger than the minimum");
    assertTrue(2L * lookup.size() <= 83_000, "at least two base rows per key: the lookup goes through the index");
    try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open().allocator(a).uri(config.uri()).build()) {
      Map<Integer, List<Integer>> found = KeyIndex.rowOffsets(LanceDataset.wrap(ds), spec, lookup);
      int rows = found.values().stream().mapToInt(List::size).sum();
      Set<String> keys = keysAt(ds, found);
      assertEquals(present.size(), rows, "one row per present key");
      assertEquals(present, keys);

      // fewer than two base rows per key: one scan of the base keys instead of the indexed filters, the same rows
      List<String> more = new ArrayList<>(lookup);
      for (int i = 0; 2 * more.size() <= 83_000; i++) {
        more.add("y" + i);
      }
      assertEquals(found, KeyIndex.rowOffsets(LanceDataset.wrap(ds), spec, new java.util.HashSet<>(more)));

      // a few keys (one filter): lance-core searches the unindexed fragment itself; the same rows as the keys
      // read into Java (not passable: the scan path)
      List<String> few = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        few.add("a" + (i * 797));
        few.add("x" + i);
      }
      for (int i = 0; i < 50; i++) {
        few.add("b" + (i * 59));
      }
      assertTrue(few.size() <= KeyIndex.LOOKUP_CHUNK);
      Map<Integer, List<Integer>> scanned = KeyIndex.rowOffsets(LanceDataset.wrap(ds), spec, few, false);
      assertEquals(150, scanned.values().stream().mapToInt(List::size).sum());
      assertEquals(scanned, KeyIndex.rowOffsets(LanceDataset.wrap(ds), spec, few, true));
      assertEquals(Map.of(), KeyIndex.rowOffsets(LanceDataset.wrap(ds), spec, List.of(), true));
    }
  }

  /**
   * Merges that leave more than a tenth of the base outside the key index bring it up to date (lance-core's index
   * update, not a rebuild), also over fragments with deleted rows, a fragment removed whole and a compaction: every
   * key is found through the index, exactly once, and the index covers every fragment.
   */
  @Test
  void mergesKeepTheIndexCoveringEveryFragmentAcrossUpdatesDeletionsAndACompaction() {
    StoreConfig config = config("u");
    List<String> live = new ArrayList<>();
    SchemaSpec spec;
    try (ContextStore store = ContextStore.open(config)) {
      spec = store.spec();
      addAndMerge(store, rows("a", 30_000), live);  // the index is built
      addAndMerge(store, rows("b", 25_000), live);  // 25,000 of 55,000 rows outside it: updated
      addAndMerge(store, rows("a", 24_000), live);  // newer rows of a-keys: old rows deleted in indexed fragments
      assertCoversEveryFragment(config, spec);
      store.compact();  // the index is rebuilt over the compacted fragments
      addAndMerge(store, rows("c", 30_000), live);
      addAndMerge(store, rows("c", 30_000), live);  // every row of the last fragment replaced: the fragment goes
    }
    ContextStore.closeAllResident();
    assertCoversEveryFragment(config, spec);
    assertFoundThroughTheIndex(config, spec, live);
  }

  /**
   * A compaction with deferred index remap leaves a fragment-reuse index; lance-core 7.0.0's index update then
   * drops every row of the compacted fragments from the index. A merge that finds the index behind with such an
   * index present rebuilds it instead.
   */
  @Test
  void anIndexLeftBehindByADeferredRemapCompactionIsRebuiltNotUpdated() throws Exception {
    StoreConfig config = config("f");
    List<String> live = new ArrayList<>();
    SchemaSpec spec;
    try (ContextStore store = ContextStore.open(config)) {
      spec = store.spec();
      addAndMerge(store, rows("a", 25_000), live);
      addAndMerge(store, rows("b", 25_000), live);
      addAndMerge(store, rows("c", 25_000), live);
      try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open().allocator(a).uri(config.uri()).build()) {
        // what LanceCompaction does, without its rebuild of the key index and its drop of the fragment-reuse index
        // (a process that died between the compaction's commit and the rebuild)
        var options = LanceCompaction.options(config);
        var plan = org.lance.compaction.Compaction.planCompaction(ds, options);
        List<org.lance.compaction.RewriteResult> rewritten = new ArrayList<>();
        for (var task : plan.getCompactionTasks()) {
          rewritten.add(task.execute(ds));
        }
        assertTrue(!rewritten.isEmpty(), "the three fragments are compacted");
        org.lance.compaction.Compaction.commitCompaction(ds, rewritten, options);
        ds.checkoutLatest();
        assertTrue(ds.listIndexes().contains(LanceCompaction.FRAG_REUSE_INDEX));
      }
      addAndMerge(store, rows("d", 25_000), live);
    }
    ContextStore.closeAllResident();
    assertCoversEveryFragment(config, spec);
    assertFoundThroughTheIndex(config, spec, live);
  }

  private StoreConfig config(String name) {
    return StoreConfig.of(options(dir, name, "context", "shards", "1", "merge.trigger.interval", "1h"));
  }

  private static void addAndMerge(ContextStore store, List<Map<String, Object>> rows, List<String> live) {
    store.add(rows);
    store.seal();
    store.merge();
    rows.forEach(r -> live.add((String) r.get("id")));
  }

  private static void assertCoversEveryFragment(StoreConfig config, SchemaSpec spec) {
    try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open().allocator(a).uri(config.uri()).build()) {
      KeyIndexCoverage coverage = KeyIndexCoverage.of(LanceDataset.wrap(ds), spec);
      assertTrue(coverage.exists());
      assertEquals(List.of(), coverage.uncovered().stream().map(LanceFragment::id).toList());
    }
  }

  /** Every 97th distinct key of {@code live}, looked up through the index: one base row each, holding that key. */
  private static void assertFoundThroughTheIndex(StoreConfig config, SchemaSpec spec, List<String> live) {
    List<String> keys = new ArrayList<>(new TreeSet<>(live));
    List<String> sample = new ArrayList<>();
    for (int i = 0; i < keys.size(); i += 97) {
      sample.add(keys.get(i));
    }
    try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open().allocator(a).uri(config.uri()).build()) {
      assertTrue(2L * sample.size() <= ds.countRows(), "the lookup goes through the index");
      Map<Integer, List<Integer>> found = KeyIndex.rowOffsets(LanceDataset.wrap(ds), spec, sample);
      Set<String> missing = new TreeSet<>(sample);
      missing.removeAll(keysAt(ds, found));
      assertEquals(List.of(), missing.stream().limit(5).toList(), missing.size() + " of " + sample.size()
          + " keys not found through the index");
      assertEquals(sample.size(), found.values().stream().mapToInt(List::size).sum(), "one row per key");
    }
  }

  private static Set<String> keysAt(Dataset ds, Map<Integer, List<Integer>> found) {
    Set<String> keys = new TreeSet<>();
    for (var e : found.entrySet()) {
      Fragment f = new Fragment(ds, e.getKey());
      try (LanceScanner scan = f.newScan(new ScanOptions.Builder().columns(List.of("id")).build());
          ArrowReader reader = scan.scanBatches()) {
        List<String> fragmentKeys = new ArrayList<>();
        while (reader.loadNextBatch()) {
          VectorSchemaRoot b = reader.getVectorSchemaRoot();
          VarCharVector id = (VarCharVector) b.getVector("id");
          for (int r = 0; r < b.getRowCount(); r++) {
            fragmentKeys.add(new String(id.get(r), java.nio.charset.StandardCharsets.UTF_8));
          }
        }
        for (int offset : e.getValue()) {
          keys.add(fragmentKeys.get(offset));
        }
      } catch (Exception ex) {
        throw new AssertionError(ex);
      }
    }
    return keys;
  }

  private static List<Map<String, Object>> rows(String prefix, int n) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Map<String, Object> r = new HashMap<>();
      r.put("id", prefix + i);
      out.add(r);
    }
    return out;
  }
}
