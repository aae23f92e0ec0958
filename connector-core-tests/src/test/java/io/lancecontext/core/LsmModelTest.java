package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static io.lancecontext.core.StoreTestSupport.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.RandomRecords;
import io.lancecontext.core.testing.RecordAssertions;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The LSM view against an in-memory model: seeded random operations (adds, upserts, duplicate keys in one
 * add, deletes, seals, merges, compactions, garbage collection), the whole view compared after every step,
 * plus filtered scans (odd literals included), limit 0 and point lookups of the keys the step touched.
 *
 * <p>{@value #OPERATIONS_PROPERTY} sets the number of operations per test (default {@value #DEFAULT_OPERATIONS},
 * so that {@code verify} stays short); the {@code nightly} Maven profile of connector-core-tests runs 5,000.
 * {@code lancecontext.test.seed} sets the seed.
 */
class LsmModelTest extends StoreTest {
  static final String OPERATIONS_PROPERTY = "lancecontext.model.operations";
  static final int DEFAULT_OPERATIONS = 300;

  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"},{\"name\":\"tag\",\"type\":\"string\"}],\"capabilities\":[\"tombstones\"]}";

  /** A user spec with every shape that has its own read path: struct, list, vector, blob. */
  static final String RICH_SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"},{\"name\":\"i32\",\"type\":\"int32\"},{\"name\":\"f\",\"type\":\"float32\"},"
      + "{\"name\":\"tag\",\"type\":\"string\"},"
      + "{\"name\":\"meta\",\"type\":\"struct\",\"fields\":[{\"name\":\"step\",\"type\":\"int32\"},"
      + "{\"name\":\"note\",\"type\":\"string\"},"
      + "{\"name\":\"inner\",\"type\":\"struct\",\"fields\":[{\"name\":\"c\",\"type\":\"int64\"}]}]},"
      + "{\"name\":\"tags\",\"type\":\"list\",\"item\":{\"type\":\"string\"}},"
      + "{\"name\":\"rels\",\"type\":\"list\",\"item\":{\"type\":\"struct\",\"fields\":[{\"name\":\"kind\",\"type\":\"string\"}]}},"
      + "{\"name\":\"emb\",\"type\":\"vector\",\"dim\":3,\"metric\":\"cosine\"},"
      + "{\"name\":\"img\",\"type\":\"large_binary\",\"blob\":true}],\"capabilities\":[\"tombstones\"]}";

  private static final int KEYS = 150;
  /** Keys that SQL text and JNI handle badly, mixed into the key pool. */
  private static final List<String> ODD_KEYS = List.of("it's", "nul\u0000", "\uD83D\uDE00", "clef\uD834\uDD1E", "100%_",
      "\u05E9\u05DC\u05D5\u05DD");

  private static int operations() {
    return Integer.getInteger(OPERATIONS_PROPERTY, DEFAULT_OPERATIONS);
  }

  private static long seed() {
    return Long.getLong("lancecontext.test.seed", 20261129L);
  }

  private static String key(Random random) {
    int k = random.nextInt(KEYS + ODD_KEYS.size());
    return k < KEYS ? "k" + k : ODD_KEYS.get(k - KEYS);
  }

  /** Mix of operations, drawn per step. */
  private enum Op { ADD, DELETE, SEAL, MERGE, COMPACT, GC }

  private static Op draw(Random random) {
    int op = random.nextInt(1000);
    return op < 690 ? Op.ADD : op < 870 ? Op.DELETE : op < 940 ? Op.SEAL : op < 980 ? Op.MERGE : op < 995 ? Op.COMPACT : Op.GC;
  }

  private static final class Mix {
    int merges;
    int compactions;
    int deletes;

    void check(int operations) {
      assertTrue(merges >= operations / 50 && compactions >= operations / 200 && deletes >= operations / 10,
          "the mix exercised every operation: " + merges + " merges, " + compactions + " compactions, " + deletes + " deletes");
    }
  }

  private static String maintain(ContextStore store, Op op, Mix mix, String at) {
    try {
      return maintain(store, op, mix);
    } catch (RuntimeException e) {
      throw new AssertionError(at + ": " + op.name().toLowerCase() + " failed: " + e.getMessage(), e);
    }
  }

  private static String maintain(ContextStore store, Op op, Mix mix) {
    switch (op) {
      case SEAL -> store.seal();
      case MERGE -> {
        store.merge();
        mix.merges++;
      }
      case COMPACT -> {
        CompactionResult c = store.compact();
        assertTrue(c.ran());
        mix.compactions++;
      }
      case GC -> store.gc();
      default -> throw new IllegalStateException(op.name());
    }
    return op.name().toLowerCase();
  }

  private static Map<String, String> storeOptions(java.nio.file.Path dir, String name, String spec) {
    // merges are steps of the model; a background merge plus a zero-grace collection could remove a
    // generation under a running read, which gc.grace exists to prevent
    return options(dir, name, spec, "gc.grace", "0s", "shards", "3", "merge.trigger.generations", "1000000",
        "merge.trigger.interval", "1d");
  }

  @Test
  void randomOperationsMatchAModelAfterEveryStep() {
    long seed = seed();
    int operations = operations();
    Random random = new Random(seed);
    Map<String, Long> model = new TreeMap<>();
    Map<String, String> tags = new TreeMap<>();
    Mix mix = new Mix();
    try (ContextStore store = ContextStore.open(storeOptions(dir, "model", SPEC))) {
      for (int step = 0; step < operations; step++) {
        Op op = draw(random);
        List<String> touched = new ArrayList<>();
        String what;
        if (op == Op.ADD) {
          int rows = 1 + random.nextInt(6);
          List<Map<String, Object>> batch = new ArrayList<>();
          Map<String, Long> expected = new LinkedHashMap<>();
          for (int i = 0; i < rows; i++) {
            String k = key(random);
            long n = random.nextInt(1_000_000);
            batch.add(rec("id", k, "n", n, "tag", "t" + (n % 7)));
            expected.put(k, n);  // last row of a key in one add wins
            touched.add(k);
          }
          store.add(batch);
          expected.forEach((k, n) -> {
            model.put(k, n);
            tags.put(k, "t" + (n % 7));
          });
          what = "add " + expected;
        } else if (op == Op.DELETE) {
          List<String> keys = new ArrayList<>();
          for (int i = 0; i < 1 + random.nextInt(3); i++) {
            keys.add(key(random));
          }
          store.delete(keys);
          keys.forEach(k -> {
            model.remove(k);
            tags.remove(k);
          });
          touched.addAll(keys);
          mix.deletes++;
          what = "delete " + keys;
        } else {
          what = maintain(store, op, mix, "step " + step + ", seed " + seed);
        }
        String context = "step " + step + " (" + what + "), seed " + seed;
        assertEquals(model, view(store, "n"), context);
        if (step % 10 == 0) {
          long threshold = random.nextInt(1_000_000);
          Map<String, Long> expectedFiltered = new TreeMap<>();
          model.forEach((k, n) -> {
            if (n > threshold && tags.get(k).equals("t" + (n % 7))) {
              expectedFiltered.put(k, n);
            }
          });
          assertEquals(expectedFiltered, view(store, "n", ScanSpec.all().withFilter(
              Predicate.compare("n", Predicate.Op.GT, threshold))), context + ", filter n > " + threshold);
          // odd literals: a fraction, a literal beyond int64, an empty IN
          Map<String, Long> below = new TreeMap<>();
          model.forEach((k, n) -> {
            if (n < threshold + 0.5) {
              below.put(k, n);
            }
          });
          assertEquals(below, view(store, "n", ScanSpec.all().withFilter(
              Predicate.compare("n", Predicate.Op.LT, threshold + 0.5))), context + ", filter n < " + threshold + ".5");
          assertEquals(model, view(store, "n", ScanSpec.all().withFilter(Predicate.compare("n", Predicate.Op.LT, 1e19))),
              context + ", filter n < 1e19");
          assertEquals(model, view(store, "n", ScanSpec.all().withFilter(Predicate.not(Predicate.in("tag", List.of())))),
              context + ", filter NOT (tag IN ())");
          assertEquals(List.of(), store.scanRecords(ScanSpec.all().withLimit(0)), context + ", limit 0");
          assertEquals(model.size(), store.count(), context + ", count (no columns: counted, not read)");
        }
        if (!touched.isEmpty()) {
          // a filter on the key reads the fresh tier key by key: same answer as the model
          Map<String, Long> expectedByKey = new TreeMap<>();
          touched.forEach(k -> {
            if (model.containsKey(k)) {
              expectedByKey.put(k, model.get(k));
            }
          });
          assertEquals(expectedByKey, view(store, "n", ScanSpec.all().withFilter(Predicate.in("id", touched))),
              context + ", filter id IN " + touched);
        }
        for (String k : touched) {
          Optional<Map<String, Object>> got = store.get(k);
          assertEquals(Optional.ofNullable(model.get(k)), got.map(r -> (Long) r.get("n")), context + ", get " + k);
        }
      }
      assertEquals(model.size(), store.count());
    }
    System.out.printf("model test: %d operations, %d merges, %d compactions, %d deletes, %d live keys%n", operations,
        mix.merges, mix.compactions, mix.deletes, model.size());
    mix.check(operations);
  }

  /** Operations of the transaction model: immediate adds and deletes, staging, publishes, aborts, maintenance. */
  private enum TxnOp { ADD, DELETE, STAGE, PUBLISH, ABORT, SEAL, MERGE, COMPACT, GC }

  private static TxnOp drawTxn(Random random) {
    int op = random.nextInt(1000);
    return op < 300 ? TxnOp.ADD : op < 400 ? TxnOp.DELETE : op < 700 ? TxnOp.STAGE : op < 820 ? TxnOp.PUBLISH
        : op < 860 ? TxnOp.ABORT : op < 920 ? TxnOp.SEAL : op < 970 ? TxnOp.MERGE : op < 985 ? TxnOp.COMPACT
        : TxnOp.GC;
  }

  /** One staged part of the model: what a handle wrote (null: deleted), in order, under its part id. */
  private record StagedModel(String partId, LinkedHashMap<String, Long> writes,
      io.lancecontext.core.result.WriteSummary summary) {}

  @Test
  void immediateAddsAndTransactionsInterleavedOnTheSameKeysMatchAModel() {
    long seed = seed() + 2;
    int operations = Math.max(60, operations() / 2);
    Random random = new Random(seed);
    Map<String, Long> model = new TreeMap<>();
    // open transactions: id -> staged parts; a transaction is published or aborted at most once
    Map<String, List<StagedModel>> open = new LinkedHashMap<>();
    int txns = 0;
    int published = 0;
    int merges = 0;
    int compactions = 0;
    try (ContextStore store = ContextStore.open(storeOptions(dir, "txn-model", SPEC))) {
      for (int step = 0; step < operations; step++) {
        TxnOp op = drawTxn(random);
        String what;
        switch (op) {
          case ADD -> {
            Map<String, Long> expected = new LinkedHashMap<>();
            List<Map<String, Object>> batch = new ArrayList<>();
            for (int i = 0; i < 1 + random.nextInt(4); i++) {
              String k = key(random);
              long n = random.nextInt(1_000_000);
              batch.add(rec("id", k, "n", n, "tag", "t"));
              expected.put(k, n);
            }
            store.add(batch);
            model.putAll(expected);
            what = "add " + expected;
          }
          case DELETE -> {
            String k = key(random);
            store.delete(List.of(k));
            model.remove(k);
            what = "delete " + k;
          }
          case STAGE -> {
            if (open.isEmpty() || random.nextInt(3) == 0) {
              open.put("tx" + txns++, new ArrayList<>());
            }
            List<String> ids = new ArrayList<>(open.keySet());
            String txid = ids.get(random.nextInt(ids.size()));
            List<StagedModel> parts = open.get(txid);
            String partId;
            do {
              partId = "p" + (100 + random.nextInt(900));
            } while (parts.stream().map(StagedModel::partId).toList().contains(partId));
            LinkedHashMap<String, Long> writes = new LinkedHashMap<>();
            try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txid, partId).build())) {
              for (int i = 0; i < 1 + random.nextInt(6); i++) {
                String k = key(random);
                writes.remove(k);  // keep the map in write order: the last write of a key wins
                if (random.nextInt(5) == 0) {
                  w.delete(k);
                  writes.put(k, null);
                } else {
                  long n = random.nextInt(1_000_000);
                  w.write(rec("id", k, "n", n, "tag", "t"));
                  writes.put(k, n);
                }
              }
              parts.add(new StagedModel(partId, writes, w.commit()));
            }
            what = "stage " + txid + "/" + partId + " " + writes;
          }
          case PUBLISH -> {
            if (open.isEmpty()) {
              continue;
            }
            String txid = open.keySet().iterator().next();
            List<StagedModel> parts = open.remove(txid);
            // a part may be left out of the publish (a failed attempt): it never becomes visible
            List<StagedModel> named = parts.stream().filter(x -> random.nextInt(5) != 0).toList();
            store.publish(txid, named.stream().map(StagedModel::summary).toList());
            named.stream().sorted(java.util.Comparator.comparing(StagedModel::partId)).forEach(x ->
                x.writes().forEach((k, n) -> {
                  if (n == null) {
                    model.remove(k);
                  } else {
                    model.put(k, n);
                  }
                }));
            if (random.nextBoolean()) {
              assertTrue(store.publish(txid, List.of()).alreadyPublished());
            }
            published++;
            what = "publish " + txid + " (" + named.size() + " of " + parts.size() + " parts)";
          }
          case ABORT -> {
            if (open.isEmpty()) {
              continue;
            }
            String txid = open.keySet().iterator().next();
            open.remove(txid);
            store.abort(txid);
            what = "abort " + txid;
          }
          case MERGE -> {
            store.merge();
            merges++;
            what = "merge";
          }
          case SEAL -> {
            store.seal();
            what = "seal";
          }
          case COMPACT -> {
            assertTrue(store.compact().ran());
            compactions++;
            what = "compact";
          }
          default -> {
            store.gc();
            // gc.grace is 0s here: every open transaction is older than the grace, so collected (aborted)
            what = "gc (aborts " + open.keySet() + ")";
            open.clear();
          }
        }
        String context = "step " + step + " (" + what + "), seed " + seed;
        assertEquals(model, view(store, "n"), context);
        for (String k : List.of(key(random), key(random))) {
          assertEquals(Optional.ofNullable(model.get(k)), store.get(k).map(r -> (Long) r.get("n")), context + ", get " + k);
        }
      }
      assertEquals(model.size(), store.count());
      store.flush();
      assertEquals(model, view(store, "n"), "after flush, seed " + seed);
    }
    System.out.printf("transaction model test: %d operations, %d transactions, %d published, %d merges, %d "
        + "compactions%n", operations, txns, published, merges, compactions);
    assertTrue(published >= operations / 20 && merges >= operations / 40, "the mix published and merged");
  }

  @Test
  void randomOperationsOnAUserSpecWithStructsListsVectorsAndBlobsMatchAModel() {
    long seed = seed() + 1;
    int operations = operations();
    Random random = new Random(seed);
    Map<String, Map<String, Object>> model = new TreeMap<>();
    Mix mix = new Mix();
    try (ContextStore store = ContextStore.open(storeOptions(dir, "rich", RICH_SPEC))) {
      SchemaSpec spec = store.spec();
      RandomRecords values = new RandomRecords(spec, seed, 0.3);
      for (int step = 0; step < operations; step++) {
        Op op = draw(random);
        List<String> touched = new ArrayList<>();
        String what;
        if (op == Op.ADD) {
          int rows = 1 + random.nextInt(4);
          List<Map<String, Object>> batch = new ArrayList<>();
          Map<String, Map<String, Object>> expected = new LinkedHashMap<>();
          for (int i = 0; i < rows; i++) {
            Map<String, Object> r = values.next();
            String k = key(random);
            r.put("id", k);
            if (random.nextInt(4) == 0) {
              r.put("meta", null);  // null structs and lists are frequent, not just a share of the slots
              r.put("rels", null);
            }
            batch.add(r);
            expected.put(k, r);
            touched.add(k);
          }
          store.add(batch);
          model.putAll(expected);
          what = "add " + expected.keySet();
        } else if (op == Op.DELETE) {
          List<String> keys = new ArrayList<>();
          for (int i = 0; i < 1 + random.nextInt(3); i++) {
            keys.add(key(random));
          }
          store.delete(keys);
          keys.forEach(model::remove);
          touched.addAll(keys);
          mix.deletes++;
          what = "delete " + keys;
        } else {
          what = maintain(store, op, mix, "step " + step + ", seed " + seed);
        }
        String context = "step " + step + " (" + what + "), seed " + seed;
        assertView(model, store.scanRecords(ScanSpec.all()), context + ", full scan");
        assertEquals(model.size(), store.count(), context + ", count (no columns: counted, not read)");
        for (String k : touched) {
          Map<String, Object> expected = model.get(k);
          Optional<Map<String, Object>> got = store.get(k);
          if (expected == null || got.isEmpty()) {
            assertEquals(expected == null, got.isEmpty(), context + ", get " + k);
          } else {
            assertRecord(expected, got.get(), context + ", get " + k);
          }
          // a filtered scan that selects one row (the take path of the base table)
          assertView(only(model, k), store.scanRecords(ScanSpec.all().withFilter(Predicate.eq("id", k))),
              context + ", filter id = " + k);
        }
        if (step % 10 == 0 && !model.isEmpty()) {
          List<Map<String, Object>> live = new ArrayList<>(model.values());
          Map<String, Object> sample = live.get(random.nextInt(live.size()));
          checkFilter(store, model, context, "i32 < 3e9", Predicate.compare("i32", Predicate.Op.LT, 3e9),
              r -> r.get("i32") != null);
          checkFilter(store, model, context, "i32 = 2.5", Predicate.compare("i32", Predicate.Op.EQ, 2.5), r -> false);
          checkFilter(store, model, context, "NOT (i32 IN ())", Predicate.not(Predicate.in("i32", List.of())), r -> true);
          checkFilter(store, model, context, "meta.step IS NULL", Predicate.isNull("meta.step"),
              r -> r.get("meta") == null || ((Map<?, ?>) r.get("meta")).get("step") == null);
          if (sample.get("n") != null) {
            Object n = sample.get("n");
            checkFilter(store, model, context, "n = " + n, Predicate.eq("n", n), r -> n.equals(r.get("n")));
          }
          if (sample.get("f") != null) {
            float f = (Float) sample.get("f");
            // the float's shortest decimal, read as a double: not the float's value, but rounds to it
            double literal = Double.parseDouble(Float.toString(f));
            checkFilter(store, model, context, "f = " + literal, Predicate.compare("f", Predicate.Op.EQ, literal),
                r -> r.get("f") != null && (Float) r.get("f") == f);
          }
          if (sample.get("tag") != null) {
            Object tag = sample.get("tag");
            checkFilter(store, model, context, "tag = <sample>", Predicate.eq("tag", tag), r -> tag.equals(r.get("tag")));
          }
          assertEquals(List.of(), store.scanRecords(ScanSpec.all().withLimit(0)), context + ", limit 0");
          assertEquals(List.of(), store.scanRecords(ScanSpec.all().withLimit(0).withFilter(Predicate.isNotNull("n"))),
              context + ", filtered limit 0");
        }
      }
      assertEquals(model.size(), store.count());
    }
    System.out.printf("rich model test: %d operations, %d merges, %d compactions, %d deletes, %d live keys%n",
        operations, mix.merges, mix.compactions, mix.deletes, model.size());
    mix.check(operations);
  }

  private static Map<String, Map<String, Object>> only(Map<String, Map<String, Object>> model, String k) {
    return model.containsKey(k) ? Map.of(k, model.get(k)) : Map.of();
  }

  private static void checkFilter(ContextStore store, Map<String, Map<String, Object>> model, String context, String name,
      Predicate filter, java.util.function.Predicate<Map<String, Object>> expected) {
    Map<String, Map<String, Object>> matching = new TreeMap<>();
    model.forEach((k, r) -> {
      if (expected.test(r)) {
        matching.put(k, r);
      }
    });
    assertView(matching, store.scanRecords(ScanSpec.all().withFilter(filter)), context + ", filter " + name);
    assertEquals(matching.size(), store.count(filter), context + ", count " + name);
  }

  private static void assertView(Map<String, Map<String, Object>> expected, List<Map<String, Object>> actual, String context) {
    Map<String, Map<String, Object>> byKey = new TreeMap<>();
    for (Map<String, Object> r : actual) {
      if (byKey.put((String) r.get("id"), r) != null) {
        fail(context + ": key " + r.get("id") + " returned twice");
      }
    }
    assertEquals(expected.keySet(), byKey.keySet(), context + ": keys");
    expected.forEach((k, e) -> assertRecord(e, byKey.get(k), context));
  }

  private static void assertRecord(Map<String, Object> expected, Map<String, Object> actual, String context) {
    String d = RecordAssertions.difference(expected, actual, Objects.toString(expected.get("id")));
    if (d != null) {
      fail(context + ": " + d + "\nexpected: " + RecordAssertions.render(expected) + "\nactual:   "
          + RecordAssertions.render(actual));
    }
  }
}
