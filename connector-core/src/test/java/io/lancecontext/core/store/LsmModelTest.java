package io.lancecontext.core.store;

import static io.lancecontext.core.store.StoreTestSupport.options;
import static io.lancecontext.core.store.StoreTestSupport.rec;
import static io.lancecontext.core.store.StoreTestSupport.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.maintenance.CompactionResult;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The LSM view against an in-memory model: 5,000 seeded random operations (adds, upserts, duplicate keys
 * in one add, deletes, seals, merges, compactions, garbage collection), the whole view compared after
 * every step, plus a filtered scan and point lookups of the keys the step touched.
 */
class LsmModelTest extends StoreTest {
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"},{\"name\":\"tag\",\"type\":\"string\"}],\"capabilities\":[\"tombstones\"]}";
  private static final int OPERATIONS = 5_000;
  private static final int KEYS = 150;

  @Test
  void randomOperationsMatchAModelAfterEveryStep() {
    long seed = Long.getLong("lancecontext.test.seed", 20261129L);
    Random random = new Random(seed);
    Map<String, Long> model = new TreeMap<>();
    Map<String, String> tags = new TreeMap<>();
    int merges = 0;
    int compactions = 0;
    int deletes = 0;
    try (ContextStore store = ContextStore.open(options(dir, "model", SPEC, "gc.grace", "0s", "shards", "3",
        // merges are steps of the model; a background merge plus a zero-grace collection could remove a
        // generation under a running read, which gc.grace exists to prevent
        "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      for (int step = 0; step < OPERATIONS; step++) {
        int op = random.nextInt(1000);
        List<String> touched = new ArrayList<>();
        String what;
        if (op < 700) {
          int rows = 1 + random.nextInt(6);
          List<Map<String, Object>> batch = new ArrayList<>();
          Map<String, Long> expected = new LinkedHashMap<>();
          for (int i = 0; i < rows; i++) {
            String k = "k" + random.nextInt(KEYS);
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
        } else if (op < 880) {
          List<String> keys = new ArrayList<>();
          for (int i = 0; i < 1 + random.nextInt(3); i++) {
            keys.add("k" + random.nextInt(KEYS));
          }
          store.delete(keys);
          keys.forEach(k -> {
            model.remove(k);
            tags.remove(k);
          });
          touched.addAll(keys);
          deletes++;
          what = "delete " + keys;
        } else if (op < 950) {
          store.seal();
          what = "seal";
        } else if (op < 990) {
          store.merge();
          merges++;
          what = "merge";
        } else if (op < 996) {
          CompactionResult c = store.compact();
          assertTrue(c.ran());
          compactions++;
          what = "compact";
        } else {
          store.gc();
          what = "gc";
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
    System.out.printf("model test: %d operations, %d merges, %d compactions, %d deletes, %d live keys%n", OPERATIONS,
        merges, compactions, deletes, model.size());
    assertTrue(merges > 50 && compactions > 5 && deletes > 100, "the mix exercised every operation");
  }
}
