package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static io.lancecontext.core.StoreTestSupport.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * Keys and string values that SQL text and JNI handle badly ({@code '}, {@code \}, NUL, newline, {@code %},
 * {@code _}, emoji, a musical symbol outside the Basic Multilingual Plane, right-to-left text) round-trip
 * through every operation in every tier, and never make the rest of the store unreadable.
 */
class HostileKeysTest extends StoreTest {
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"},{\"name\":\"s\",\"type\":\"string\"}],\"capabilities\":[\"tombstones\"]}";

  static final List<String> HOSTILE = List.of("it's", "''", "back\\slash", "nul\u0000byte", "\u0000", "new\nline",
      "100%", "under_score", "%_", "emoji\uD83D\uDE00", "\uD83D\uDE00", "clef\uD834\uDD1E", "\uD834\uDD1E\u0000x",
      "\u05E9\u05DC\u05D5\u05DD \u05E2\u05D5\u05DC\u05DD", "\u202Eevil", "\uFFFF\uD83D\uDE00", "a\uFFFF", "\uE000\u0000");

  private final Map<String, Long> model = new TreeMap<>();

  @Test
  void hostileKeysRoundTripThroughAddGetFiltersDeleteAndMergeInEveryTier() {
    try (ContextStore store = ContextStore.open(options(dir, "h", SPEC, "gc.grace", "0s"))) {
      // plain rows in the base table first: reads then push a fresh-key exclusion to Lance
      List<Map<String, Object>> plain = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        plain.add(row("plain" + i, i));
      }
      add(store, plain);
      store.seal();
      store.merge();

      List<Map<String, Object>> hostile = new ArrayList<>();
      for (int i = 0; i < HOSTILE.size(); i++) {
        hostile.add(row(HOSTILE.get(i), 100 + i));
      }
      add(store, hostile);
      inEveryTier(store, "added", () -> checkEverything(store));

      // upserts of merged keys: the base row is stale, the fresh one wins
      List<Map<String, Object>> upserts = new ArrayList<>();
      for (int i = 0; i < HOSTILE.size(); i += 2) {
        upserts.add(row(HOSTILE.get(i), 200 + i));
      }
      add(store, upserts);
      inEveryTier(store, "upserted", () -> checkEverything(store));

      List<String> deleted = new ArrayList<>();
      for (int i = 1; i < HOSTILE.size(); i += 3) {
        deleted.add(HOSTILE.get(i));
      }
      store.delete(deleted);
      deleted.forEach(model::remove);
      inEveryTier(store, "deleted", () -> checkEverything(store));

      add(store, List.of(row(deleted.get(0), 999)));
      inEveryTier(store, "re-added", () -> checkEverything(store));
    }
  }

  @Test
  void hostileStringValuesFilterAlikeInEveryTier() {
    try (ContextStore store = ContextStore.open(options(dir, "v", SPEC))) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (int i = 0; i < HOSTILE.size(); i++) {
        rows.add(rec("id", "k" + i, "n", (long) i, "s", HOSTILE.get(i)));
      }
      store.add(rows);
      inEveryTier(store, "values", () -> {
        for (int i = 0; i < HOSTILE.size(); i++) {
          String s = HOSTILE.get(i);
          assertEquals(Map.of("k" + i, (long) i), view(store, "n", ScanSpec.all().withFilter(Predicate.eq("s", s))),
              "s = " + printable(s));
          assertEquals(HOSTILE.size() - 1, store.count(Predicate.compare("s", Predicate.Op.NE, s)), "s != " + printable(s));
          assertEquals(HOSTILE.size() - 1, store.count(Predicate.not(Predicate.in("s", List.of(s)))), "NOT s IN " + printable(s));
          assertEquals(HOSTILE.stream().filter(o -> o.startsWith(s)).count(), store.count(Predicate.startsWith("s", s)),
              "starts_with " + printable(s));
        }
        assertEquals(HOSTILE.size(), store.count(Predicate.in("s", HOSTILE)));
      });
    }
  }

  @Test
  void unpairedSurrogatesAreRefusedAtAddWithTheRowAndColumnNamed() {
    try (ContextStore store = ContextStore.open(options(dir, "u", SPEC))) {
      InvalidRecordException key = assertThrows(InvalidRecordException.class,
          () -> store.add(List.of(row("fine", 1), row("bad\uD800", 2))));
      assertEquals("id", key.column());
      assertEquals(1, key.row());
      InvalidRecordException value = assertThrows(InvalidRecordException.class,
          () -> store.add(List.of(rec("id", "x", "s", "\uDC00tail"))));
      assertEquals("s", value.column());
      assertEquals(0, store.count(), "nothing was written");
      store.add(List.of(row("fine", 1)));
      store.seal();
      store.merge();
      // reads may name such a string: nothing equals it
      assertTrue(store.get("bad\uD800").isEmpty());
      assertEquals(0, store.count(Predicate.eq("id", "bad\uD800")));
      assertEquals(1, store.count(Predicate.compare("s", Predicate.Op.NE, "\uDC00tail")));
      assertEquals(1, store.count(Predicate.in("id", List.of("fine", "\uDFFF"))));
    }
  }

  @Test
  void aKeyThatIsNotUtf8IsRefusedInArrowBatches() {
    try (ContextStore store = ContextStore.open(options(dir, "b", SPEC));
        RootAllocator allocator = new RootAllocator();
        VectorSchemaRoot batch = new RecordCodec(store.spec()).encode(List.of(row("a", 1), row("b", 2)), allocator)) {
      ((VarCharVector) batch.getVector("id")).setSafe(1, new byte[] {(byte) 0xC3, (byte) 0x28});
      InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> store.add(batch));
      assertEquals(1, e.row());
      assertTrue(e.getMessage().contains("UTF-8"), e.getMessage());
      assertEquals(0, store.count());
    }
  }

  private Map<String, Object> row(String key, long n) {
    return rec("id", key, "n", n, "s", "v-" + key);
  }

  private void add(ContextStore store, List<Map<String, Object>> rows) {
    store.add(rows);
    rows.forEach(r -> model.put((String) r.get("id"), (Long) r.get("n")));
  }

  private void checkEverything(ContextStore store) {
    assertEquals(model, view(store, "n"), "full scan");
    assertEquals(model.size(), store.count(), "count");
    for (String k : HOSTILE) {
      Long expected = model.get(k);
      String what = " of " + printable(k);
      assertEquals(expected, store.get(k).map(r -> (Long) r.get("n")).orElse(null), "get" + what);
      assertEquals(expected == null ? Map.of() : Map.of(k, expected),
          view(store, "n", ScanSpec.all().withFilter(Predicate.eq("id", k))), "id = " + what);
      assertEquals(expected == null ? Map.of() : Map.of(k, "v-" + k),
          view(store, "s", ScanSpec.all().withFilter(Predicate.eq("s", "v-" + k))), "s = " + what);
    }
    Map<String, Long> live = new TreeMap<>(model);
    live.keySet().retainAll(HOSTILE);
    assertEquals(live, view(store, "n", ScanSpec.all().withFilter(Predicate.in("id", HOSTILE))), "id IN");
    assertEquals(live.size(), store.get(HOSTILE).size(), "get of many keys");
    Map<String, Long> plain = new TreeMap<>(model);
    plain.keySet().removeAll(HOSTILE);
    assertEquals(plain, view(store, "n", ScanSpec.all().withFilter(Predicate.not(Predicate.in("id", HOSTILE)))),
        "NOT id IN");
  }

  private static String printable(String s) {
    StringBuilder sb = new StringBuilder("\"");
    s.codePoints().forEach(cp -> sb.append(cp < 0x20 || cp > 0x7E ? String.format("\\u{%X}", cp) : Character.toString(cp)));
    return sb.append('"').toString();
  }

  /** Runs {@code check} with the latest rows in the WAL tail, then in a generation, then in the base table. */
  private static void inEveryTier(ContextStore store, String stage, Runnable check) {
    run(stage + ", in the WAL tail", check);
    store.seal();
    run(stage + ", in a generation", check);
    store.merge();
    run(stage + ", in the base table", check);
  }

  private static void run(String where, Runnable check) {
    try {
      check.run();
    } catch (AssertionError e) {
      throw new AssertionError(where + ": " + e.getMessage(), e);
    }
  }
}
