package io.lancecontext.core.internal.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.internal.lance.KeyIndexCoverage;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;

/**
 * Lookups by key read only the base fragments whose key hashes say they may hold a looked-up key, and still
 * find every row (real store, merges that append fragments the key index does not cover).
 */
class BaseKeyHashesTest extends StoreTest {
  @Test
  void aKeyHashedInPlaceInItsVectorEqualsTheHashOfItsString() {
    List<String> keys = List.of("", "a", "session-0042/turn-7", "ключ-😀", "k".repeat(300));
    try (RootAllocator a = new RootAllocator();
        org.apache.arrow.vector.VarCharVector v = new org.apache.arrow.vector.VarCharVector("id", a)) {
      for (int i = 0; i < keys.size(); i++) {
        v.setSafe(i, keys.get(i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      v.setValueCount(keys.size());
      for (int i = 0; i < keys.size(); i++) {
        assertEquals(KeyHashSet.hash(keys.get(i)), KeyHashSet.hash(v, i), keys.get(i));
      }
    }
  }

  @Test
  void lookupsReadOnlyTheFragmentsThatMayHoldTheirKeys() throws Exception {
    StoreConfig config = config("index.key", "btree");
    SchemaSpec spec;
    long before;
    try (ContextStore store = ContextStore.open(config)) {
      spec = store.spec();
      mergeRows(store, "a", 25_000, "first");  // indexed: more than 20,000 rows the index did not cover
      mergeRows(store, "b", 300, "first");    // a fragment the index does not cover
      mergeRows(store, "c", 200, "first");    // another one
      store.delete(List.of("c7"));
      store.seal();
      store.merge();
      assertEquals(Map.of("id", "b5", "text_payload", "first"), one(store, "b5"));
      assertTrue(store.lookup(List.of("c7", "zz"), List.of("id"), false).isEmpty(), "deleted and absent keys");
      before = version(config);
      mergeRows(store, "b", 10, "second");    // replaces b0..b9: their rows in b's fragment are deleted
      assertEquals(Map.of("id", "b5", "text_payload", "second"), one(store, "b5"));
      assertEquals(25_000 + 300 + 200 - 1, store.count());
    }
    ContextStore.closeAllResident();

    BaseKeyHashes hashes = new BaseKeyHashes(1 << 20);
    try (RootAllocator a = new RootAllocator()) {
      BaseTable base = BaseTable.of(LanceDataset.wrap(Dataset.open().allocator(a).uri(config.uri()).build()));
      BaseTable old = BaseTable.of(LanceDataset.wrap(base.dataset().lance().checkoutVersion(before)));
      try {
        KeyIndexCoverage coverage = old.keyIndexCoverage(spec);
        assertTrue(coverage.exists());
        assertEquals(3, coverage.uncovered().size(), "b's, c's and the tombstone's fragments: " + coverage);
        List<Integer> covered = coverage.covered();
        assertEquals(1, covered.size(), "a's fragment is indexed");
        int aFragment = covered.get(0);
        int bFragment = holding(old.dataset().lance(), coverage, "b5");
        int cFragment = holding(old.dataset().lance(), coverage, "c9");
        int tombstone = holding(old.dataset().lance(), coverage, "c7");
        assertNotEquals(cFragment, tombstone, "c7's row in c's fragment is deleted");
        assertNull(hashes.fragmentsFor(old, spec, List.of("zz")), "no hashes yet: every fragment is read");
        BaseKeyHashes.awaitReads();
        assertEquals(List.of(), hashes.fragmentsFor(old, spec, List.of("zz", "yy")), "absent keys: no fragment");
        assertEquals(List.of(aFragment), hashes.fragmentsFor(old, spec, List.of("zz", "a17")));
        assertEquals(List.of(bFragment), hashes.fragmentsFor(old, spec, List.of("b5", "zz")));
        assertEquals(List.of(bFragment, cFragment), hashes.fragmentsFor(old, spec, List.of("c9", "b5")));
        assertEquals(List.of(tombstone), hashes.fragmentsFor(old, spec, List.of("c7")),
            "a key deleted before this version: its tombstone's fragment only");

        KeyIndexCoverage now = base.keyIndexCoverage(spec);
        assertEquals(4, now.uncovered().size(), now.toString());
        int newB = now.uncovered().stream().mapToInt(LanceFragment::id).max().orElseThrow();
        assertNotEquals(bFragment, newB);
        // b's fragment has new deletions: until its hashes are read again it is read for any key
        assertEquals(List.of(bFragment, newB), hashes.fragmentsFor(base, spec, List.of("b5")));
        BaseKeyHashes.awaitReads();
        assertEquals(List.of(newB), hashes.fragmentsFor(base, spec, List.of("b5")), "b5's old row is deleted");
        assertEquals(List.of(bFragment), hashes.fragmentsFor(base, spec, List.of("b15")));
        // the older version still reads b's fragment for b5, which was live there
        assertEquals(List.of(bFragment), hashes.fragmentsFor(old, spec, List.of("b5")));
      } finally {
        old.release();
        base.release();
      }
    }
    hashes.close();
  }

  /**
   * Once every fragment is hashed, a lookup takes the rows its keys' hashes point at instead of searching for them:
   * the same answers before and after, a tombstone's and an expired record's rows taken and dropped, a row deleted
   * by a later merge never taken (its fragment is hashed again).
   */
  @Test
  void lookupsTakeTheRowsTheirKeysHashesPointAt() throws Exception {
    StoreConfig config = config("index.key", "btree");
    try (ContextStore store = ContextStore.open(config)) {
      SchemaSpec spec = store.spec();
      mergeRows(store, "a", 2_000, "first");
      mergeRows(store, "b", 300, "first");
      store.add(List.of(Map.of("id", "gone", "text_payload", "expired", "expires_at",
          java.time.Instant.now().minusSeconds(60))));
      store.delete(List.of("b17"));
      store.seal();
      store.merge();                         // b17's tombstone and the expired record in the base
      mergeRows(store, "b", 10, "second");   // b0..b9 replaced: their rows in b's fragment deleted
      for (int round = 0; round < 2; round++) {
        String at = "round " + round;
        assertEquals(Map.of("id", "b5", "text_payload", "second"), one(store, "b5"), at);
        assertEquals(Map.of("id", "b150", "text_payload", "first"), one(store, "b150"), at);
        assertEquals(Map.of("id", "a1999", "text_payload", "first"), one(store, "a1999"), at);
        assertEquals(List.of(), store.lookup(List.of("b17", "gone", "zz"), List.of("id"), false), at);
        assertEquals(1, store.lookup(List.of("gone"), List.of("id"), true).size(), at + ": expired, asked for");
        Set<Object> found = new TreeSet<>();
        store.lookup(List.of("a3", "b3", "b299", "b17", "zz", "a3"), List.of("id"), false).forEach(r -> found.add(r.get("id")));
        assertEquals(Set.of("a3", "b3", "b299"), found, at);
        BaseKeyHashes.awaitReads();  // the second round takes rows by their hashes
      }
      try (RootAllocator a = new RootAllocator(); BaseKeyHashes hashes = new BaseKeyHashes(1 << 20)) {
        BaseTable base = BaseTable.of(LanceDataset.wrap(Dataset.open().allocator(a).uri(config.uri()).build()));
        try {
          assertNull(hashes.addressesFor(base, spec, List.of("b5")), "not hashed yet: searched");
          BaseKeyHashes.awaitReads();
          assertEquals(0, hashes.addressesFor(base, spec, List.of("zz", "yy")).length, "absent keys: no row");
          assertEquals(1, hashes.addressesFor(base, spec, List.of("b5")).length, "b5's live row only");
          assertEquals(1, hashes.addressesFor(base, spec, List.of("b17")).length, "b17's tombstone");
          long[] three = hashes.addressesFor(base, spec, List.of("b150", "a17", "b5"));
          assertEquals(3, three.length);
          assertTrue(three[0] < three[1] && three[1] < three[2], "ascending");
        } finally {
          base.release();
        }
      }
    }
  }

  /** Reads confined to keys (id = .., id IN (..)) find the same rows before and after the hashes are read. */
  @Test
  void readsConfinedToKeysFindTheirRowsWithAndWithoutHashes() throws Exception {
    try (ContextStore store = ContextStore.open(config("index.key", "btree"))) {
      mergeRows(store, "a", 25_000, "first");
      mergeRows(store, "b", 300, "first");
      store.delete(List.of("b170"));
      mergeRows(store, "b", 10, "second");  // b0..b9 replaced in the base
      mergeRows(store, "c", 5, "fresh");
      store.add(List.of(Map.of("id", "c1", "text_payload", "unmerged"), Map.of("id", "d1", "text_payload", "unmerged")));
      io.lancecontext.core.read.Predicate in = io.lancecontext.core.read.Predicate.in("id",
          List.of("a17", "b5", "b170", "b150", "c1", "c2", "d1", "zz"));
      Map<String, Object> expected = Map.of("a17", "first", "b5", "second", "b150", "first", "c1", "unmerged",
          "c2", "fresh", "d1", "unmerged");
      for (int round = 0; round < 2; round++) {
        assertEquals(expected, texts(store, in), "round " + round);
        assertEquals(Map.of("b150", "first"), texts(store, io.lancecontext.core.read.Predicate.and(in,
            io.lancecontext.core.read.Predicate.eq("text_payload", "first"),
            io.lancecontext.core.read.Predicate.not(io.lancecontext.core.read.Predicate.eq("id", "a17")))));
        assertEquals(Map.of(), texts(store, io.lancecontext.core.read.Predicate.eq("id", "zz")));
        assertEquals(Map.of(), texts(store, io.lancecontext.core.read.Predicate.eq("id", "b170")), "deleted");
        // and through read splits, as engines read
        Map<String, Object> bySplits = new HashMap<>();
        var plan = store.planRead(io.lancecontext.core.read.ScanSpec.all().withColumns(List.of("id", "text_payload"))
            .withFilter(in), 4);
        for (var split : plan.splits()) {
          try (var reader = store.read(split)) {
            reader.records().forEach(r -> bySplits.put((String) r.get("id"), r.get("text_payload")));
          }
        }
        assertEquals(expected, bySplits, "round " + round + " through " + plan.splits().size() + " splits");
        BaseKeyHashes.awaitReads();  // the second round reads with every fragment's hashes
      }
      var stats = store.stats().keyHashes();
      assertEquals(store.stats().fragments(), stats.fragments(), "every fragment's hashes: " + stats);
      assertTrue(stats.bytes() >= 8L * 25_000 && stats.bytes() <= stats.boundBytes(), stats.toString());
      assertEquals(256L << 20 >> 3, stats.boundBytes(), "an eighth of read.fresh-cache-bytes");
      assertTrue(store.stats().summary().contains("key hashes"), store.stats().summary());
    }
  }

  private static Map<String, Object> texts(ContextStore store, io.lancecontext.core.read.Predicate filter) {
    Map<String, Object> out = new HashMap<>();
    for (Map<String, Object> r : store.scanRecords(io.lancecontext.core.read.ScanSpec.all()
        .withColumns(List.of("id", "text_payload")).withFilter(filter))) {
      out.put((String) r.get("id"), r.get("text_payload"));
    }
    return out;
  }

  /** A bound too small for the whole table: only the fragments the key index does not cover are hashed. */
  @Test
  void aBoundTooSmallForTheTableHashesTheUnindexedFragmentsOnly() throws Exception {
    StoreConfig config = config("index.key", "btree");
    SchemaSpec spec;
    try (ContextStore store = ContextStore.open(config)) {
      spec = store.spec();
      mergeRows(store, "a", 25_000, "first");
      mergeRows(store, "b", 300, "first");
    }
    ContextStore.closeAllResident();
    try (RootAllocator a = new RootAllocator(); BaseKeyHashes hashes = new BaseKeyHashes(8 * 10_000)) {
      BaseTable base = BaseTable.of(LanceDataset.wrap(Dataset.open().allocator(a).uri(config.uri()).build()));
      try {
        List<Integer> covered = base.keyIndexCoverage(spec).covered();
        hashes.fragmentsFor(base, spec, List.of("zz"));
        BaseKeyHashes.awaitReads();
        assertEquals(covered, hashes.fragmentsFor(base, spec, List.of("zz")), "the indexed fragment is always read");
        assertNull(hashes.fragmentsFor(base, spec, List.of("b1")), "b's fragment too: every fragment");
      } finally {
        base.release();
      }
    }
  }

  @Test
  void withoutAKeyIndexTheHashesStillPruneFragments() throws Exception {
    StoreConfig config = config("index.key", "none");
    try (ContextStore store = ContextStore.open(config)) {
      mergeRows(store, "a", 100, "first");
      try (RootAllocator a = new RootAllocator()) {
        BaseTable base = BaseTable.of(LanceDataset.wrap(Dataset.open().allocator(a).uri(config.uri()).build()));
        try {
          assertFalse(base.keyIndexCoverage(store.spec()).exists());
          assertTrue(base.keyIndexCoverage(store.spec()).fragments().size() >= 1);
          BaseKeyHashes hashes = new BaseKeyHashes(1 << 20);
          assertNull(hashes.fragmentsFor(base, store.spec(), List.of("a5")));
          BaseKeyHashes.awaitReads();
          assertEquals(List.of(), hashes.fragmentsFor(base, store.spec(), List.of("zz")), "hashes work without an index");
          hashes.close();
        } finally {
          base.release();
        }
      }
      assertEquals(Map.of("id", "a5", "text_payload", "first"), one(store, "a5"));
    }
  }

  @Test
  void aPartAppendedToTheBaseAsItIsIsHashedFromTheKeysItWasExpectedWith() throws Exception {
    StoreConfig config = config("merge.append-min-rows", "1");
    SchemaSpec spec;
    String partIdentity;
    List<String> keys = new ArrayList<>();
    try (ContextStore store = ContextStore.open(config)) {
      spec = store.spec();
      WriteSummary staged;
      try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction("t", "a").build())) {
        for (int i = 0; i < 60; i++) {
          w.write(Map.of("id", "p" + i, "text_payload", "part"));
        }
        staged = w.commit();
      }
      store.publish("t", List.of(staged));
      WriteSummary.StagedPart part = staged.staged().get(0);
      try (RootAllocator a = new RootAllocator();
          Dataset ds = Dataset.open().allocator(a).uri(config.uri() + "/" + TxnIds.partDir("t", part.bucket(),
              part.name())).build()) {
        assertEquals(1, ds.getFragments().size());
        LanceDataset partData = LanceDataset.wrap(ds);
        partIdentity = partData.fragments().get(0).identity();
        try (ScanHandle scan = partData.scan(ScanRequest.of(List.of("id")))) {
          while (scan.reader().loadNextBatch()) {
            var id = (org.apache.arrow.vector.VarCharVector) scan.reader().getVectorSchemaRoot().getVector("id");
            for (int r = 0; r < id.getValueCount(); r++) {
              keys.add(new String(id.get(r), java.nio.charset.StandardCharsets.UTF_8));
            }
          }
        }
      }
      store.merge();
      assertEquals(Map.of("id", "p7", "text_payload", "part"), one(store, "p7"));
    }
    ContextStore.closeAllResident();
    try (RootAllocator a = new RootAllocator(); BaseKeyHashes hashes = new BaseKeyHashes(1 << 20)) {
      BaseTable base = BaseTable.of(LanceDataset.wrap(Dataset.open().allocator(a).uri(config.uri()).build()));
      try {
        List<LanceFragment> fragments = base.keyIndexCoverage(spec).fragments();
        LanceFragment appended = fragments.stream().filter(f -> f.identity().equals(partIdentity)).findFirst()
            .orElseThrow(() -> new AssertionError("the part's data file is not a base fragment: " + fragments));
        assertEquals(1, fragments.size(), fragments.toString());
        hashes.expect(partIdentity, new StagedKeys.Keys(keys.toArray(new String[0]), null));
        long[] addresses = hashes.addressesFor(base, spec, List.of("p7", "zz"));
        assertTrue(addresses != null, "hashed from the expected keys at once, not read later");
        assertEquals(1, addresses.length);
        assertEquals(((long) appended.id() << 32) | keys.indexOf("p7"), addresses[0]);
        assertEquals(List.of(), hashes.fragmentsFor(base, spec, List.of("zz")));
        assertEquals(1, hashes.footprint().fragments());
      } finally {
        base.release();
      }
    }
    try (RootAllocator a = new RootAllocator(); BaseKeyHashes hashes = new BaseKeyHashes(1 << 20)) {
      BaseTable base = BaseTable.of(LanceDataset.wrap(Dataset.open().allocator(a).uri(config.uri()).build()));
      try {
        hashes.expect(partIdentity, new StagedKeys.Keys(keys.subList(1, keys.size()).toArray(new String[0]), null));
        assertNull(hashes.addressesFor(base, spec, List.of("p7")), "keys that do not match the fragment: read");
        BaseKeyHashes.awaitReads();
      } finally {
        base.release();
      }
    }
  }

  @Test
  void hashesAreThoseOfTheKeysUtf8Bytes() {
    byte[] utf8 = "ключ-1".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertEquals(KeyHashSet.hash(utf8, utf8.length), KeyHashSet.hash("ключ-1"));
    Set<Long> distinct = new TreeSet<>();
    for (int i = 0; i < 100_000; i++) {
      distinct.add(KeyHashSet.hash("k" + i));
    }
    assertEquals(100_000, distinct.size(), "no collision among 100,000 short keys");
  }

  @Test
  void aKeyHashSetHoldsExactlyItsHashes() {
    java.util.Random random = new java.util.Random(7);
    for (int n : new int[] {0, 1, 3, 4, 5, 1_000, 100_003}) {
      long[] in = new long[n];
      Set<Long> expected = new java.util.HashSet<>();
      for (int i = 0; i < n; i++) {
        in[i] = i % 10 == 0 ? (i % 20 == 0 ? Long.MIN_VALUE + i : Long.MAX_VALUE - i) : random.nextLong();
        expected.add(in[i]);
      }
      KeyHashSet set = new KeyHashSet(in.clone());
      assertEquals(n, set.size());
      for (long h : expected) {
        assertTrue(set.contains(h), n + " hashes: " + h);
      }
      int falsePositives = 0;
      for (int i = 0; i < 10_000; i++) {
        long h = random.nextLong();
        if (!expected.contains(h) && set.contains(h)) {
          falsePositives++;
        }
      }
      assertEquals(0, falsePositives, "a hash not added is not found");
      assertEquals(!expected.isEmpty(), set.containsAny(new long[] {12345L, n == 0 ? 1 : in[n / 2]}));
      assertTrue(set.bytes() <= 10L * n + 64, "at most 10 bytes per hash: " + set.bytes());
      // with each hash's row offset (its index here): every offset of a hash, and none of another
      int[] offsets = new int[n];
      Map<Long, List<Integer>> expectedOffsets = new HashMap<>();
      long[] withDuplicates = in.clone();
      for (int i = 0; i < n; i++) {
        if (i % 7 == 3) {
          withDuplicates[i] = withDuplicates[i - 1];  // a collision: two rows, one hash
        }
        offsets[i] = i;
        expectedOffsets.computeIfAbsent(withDuplicates[i], h -> new ArrayList<>()).add(i);
      }
      KeyHashSet located = new KeyHashSet(withDuplicates.clone(), offsets);
      assertTrue(located.hasOffsets());
      expectedOffsets.forEach((h, rows) -> {
        List<Integer> got = new ArrayList<>();
        located.offsetsOf(h, got::add);
        got.sort(null);
        assertEquals(rows, got, "offsets of " + h);
        assertTrue(located.contains(h));
      });
      List<Integer> none = new ArrayList<>();
      located.offsetsOf(12345L, none::add);
      set.offsetsOf(n == 0 ? 1 : in[0], none::add);
      assertEquals(List.of(), none, "an absent hash, and a set without offsets");
      assertTrue(located.bytes() <= 14L * n + 64, "at most 14 bytes per hash with offsets: " + located.bytes());
    }
  }

  /**
   * A count-only read counts the base fragments whose hashes this JVM holds and share none with the fresh keys
   * without reading them, tombstone rows excluded, and reads the others; the count equals the model before the
   * hashes are read, after, and through read splits, with fresh upserts of base keys, fresh deletes and merged
   * tombstones.
   */
  @Test
  void countOnlyReadsCountHashedFragmentsAndReadTheRest() throws Exception {
    Map<String, String> o = new HashMap<>();
    o.put("path", dir.resolve("counted").toString());
    o.put("schema", """
        {"key": "id", "columns": [{"name": "id", "type": "string", "nullable": false},
          {"name": "text_payload", "type": "large_string"}], "capabilities": ["tombstones"]}""");
    o.put("shards", "1");
    o.put("merge.trigger.interval", "1h");
    StoreConfig config = StoreConfig.of(o);
    try (ContextStore store = ContextStore.open(config)) {
      mergeRows(store, "a", 9_000, "first");  // hashed when a count asks (at least MIN_ROWS_HASHED_FOR_COUNTS rows)
      mergeRows(store, "b", 500, "first");    // not: read by every count until a lookup hashes it
      store.delete(List.of("a1", "a2", "b3"));  // tombstone rows in the base after this merge
      store.seal();
      store.merge();
      mergeRows(store, "c", 200, "first");
      long expected = 9_000 + 500 + 200 - 3;
      assertEquals(expected, store.count(), "before any hashes");
      BaseKeyHashes.awaitReads();
      assertEquals(1, store.stats().keyHashes().fragments(), "the count asked for a's fragment's hashes only");
      assertEquals(expected, store.count(), "a's fragment from its hashes, the others read");

      SchemaSpec spec = store.spec();
      BaseKeyHashes hashes = new BaseKeyHashes(1 << 20);
      try (RootAllocator a = new RootAllocator()) {
        BaseTable base = BaseTable.of(LanceDataset.wrap(Dataset.open().allocator(a).uri(config.uri()).build()), hashes);
        try {
          assertEquals(Map.of(), base.countableFragments(spec, null, null), "nothing hashed yet");
          BaseKeyHashes.awaitReads();
          assertEquals(1, base.countableFragments(spec, null, null).size(), "a's fragment");
          assertEquals(3, base.fragmentsHolding(spec, List.of("zz")).size(), "a lookup reads the 3 others, hashing them");
          BaseKeyHashes.awaitReads();
          assertEquals(List.of(), base.fragmentsHolding(spec, List.of("zz")));
          Map<Integer, Long> all = base.countableFragments(spec, null, null);
          assertEquals(base.keyIndexCoverage(spec).fragments().size(), all.size(), all.toString());
          assertEquals(expected, all.values().stream().mapToLong(Long::longValue).sum(), "tombstone rows not counted");
          int bFragment = holding(base.dataset().lance(), base.keyIndexCoverage(spec), "b5");
          KeyHashSet fresh = new KeyHashSet(KeyHashSet.hashes(List.of("b5", "zz")));
          Map<Integer, Long> some = base.countableFragments(spec, null, fresh);
          assertFalse(some.containsKey(bFragment), "b5 may be fresh: b's fragment is read");
          assertEquals(all.size() - 1, some.size(), some.toString());
          assertEquals(Map.of(bFragment, all.get(bFragment)), base.countableFragments(spec, List.of(bFragment), null));
        } finally {
          base.release();
        }
      }
      hashes.close();

      // fresh rows: upserts of base keys (counted once), new keys, deletes of base and fresh keys
      store.add(List.of(Map.of("id", "a10", "text_payload", "second"), Map.of("id", "b20", "text_payload", "second"),
          Map.of("id", "d1", "text_payload", "new"), Map.of("id", "d2", "text_payload", "new")));
      store.delete(List.of("a100", "d2", "zz"));
      store.seal();  // a generation
      store.add(List.of(Map.of("id", "d3", "text_payload", "tail"), Map.of("id", "a1", "text_payload", "back")));
      long now = expected + 3 - 1;  // d1, d3 and a1 (deleted before) back; a100 deleted; d2 added and deleted
      assertEquals(now, store.count());
      assertEquals(now, store.scanRecords(io.lancecontext.core.read.ScanSpec.all().withColumns(List.of("id"))).size());
      long bySplits = 0;
      var plan = store.planRead(io.lancecontext.core.read.ScanSpec.all().withColumns(List.of()), 4);
      for (var split : plan.splits()) {
        try (var reader = store.read(split)) {
          while (reader.next()) {
            assertEquals(0, reader.batch().getFieldVectors().size(), "no columns");
            bySplits += reader.batch().getRowCount();
          }
        }
      }
      assertEquals(now, bySplits, plan.splits().size() + " splits");
      assertEquals(2, store.count(io.lancecontext.core.read.Predicate.eq("text_payload", "second")), "a filter reads");
    }
  }

  /** The uncovered fragment whose live rows hold {@code key}. */
  private static int holding(Dataset ds, KeyIndexCoverage coverage, String key) throws Exception {
    List<Integer> found = new ArrayList<>();
    for (LanceFragment f : coverage.uncovered()) {
      try (var scan = ds.getFragment(f.id()).newScan(new org.lance.ipc.ScanOptions.Builder().columns(List.of("id")).build());
          var reader = scan.scanBatches()) {
        while (reader.loadNextBatch()) {
          var id = (org.apache.arrow.vector.VarCharVector) reader.getVectorSchemaRoot().getVector("id");
          for (int r = 0; r < id.getValueCount(); r++) {
            if (key.equals(new String(id.get(r), java.nio.charset.StandardCharsets.UTF_8))) {
              found.add(f.id());
            }
          }
        }
      }
    }
    assertEquals(1, found.size(), key + " is live in one fragment");
    return found.get(0);
  }

  private static List<Integer> plus(List<Integer> ids, int... more) {
    List<Integer> out = new ArrayList<>(ids);
    for (int m : more) {
      out.add(m);
    }
    return out;
  }

  private StoreConfig config(String key, String value) {
    Map<String, String> o = new HashMap<>();
    o.put("path", dir.resolve("u").toString());
    o.put("schema", "context");
    o.put("schema.embedding-dim", "4");
    o.put("shards", "1");
    o.put("merge.trigger.interval", "1h");
    o.put(key, value);
    return StoreConfig.of(o);
  }

  private static long version(StoreConfig config) {
    try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open().allocator(a).uri(config.uri()).build()) {
      return ds.version();
    }
  }

  private static Map<String, Object> one(ContextStore store, String key) {
    List<Map<String, Object>> found = store.lookup(List.of(key), List.of("id", "text_payload"), false);
    assertEquals(1, found.size(), key);
    return found.get(0);
  }

  private static void mergeRows(ContextStore store, String prefix, int n, String text) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Map<String, Object> r = new HashMap<>();
      r.put("id", prefix + i);
      r.put("text_payload", text);
      out.add(r);
    }
    store.add(out);
    store.seal();
    store.merge();
  }
}
