package io.lancecontext.core;

import static io.lancecontext.core.StoreTestSupport.inEveryTier;
import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.testing.RecordAssertions.difference;
import static io.lancecontext.core.testing.RecordAssertions.render;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Every read path returns what was written: null structs (top-level and nested), structs whose fields are all null, null and empty lists, null list items — in every
 * tier, through full scans, filtered scans that select one row or only null rows, lookups and read splits.
 */
class NullValuesTest extends StoreTest {
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int32\"},"
      + "{\"name\":\"st\",\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"int32\"},{\"name\":\"b\",\"type\":\"string\"},"
      + "{\"name\":\"in\",\"type\":\"struct\",\"fields\":[{\"name\":\"c\",\"type\":\"int32\"}]}]},"
      + "{\"name\":\"two\",\"type\":\"struct\",\"fields\":[{\"name\":\"x\",\"type\":\"int32\"},"
      + "{\"name\":\"y\",\"type\":\"string\"}]},"
      + "{\"name\":\"l\",\"type\":\"list\",\"item\":{\"type\":\"string\"}},"
      + "{\"name\":\"ls\",\"type\":\"list\",\"item\":{\"type\":\"struct\",\"fields\":[{\"name\":\"c\",\"type\":\"int32\"}]}},"
      + "{\"name\":\"v\",\"type\":\"vector\",\"dim\":2,\"metric\":\"l2\"}],"
      + "\"capabilities\":[\"tombstones\"]}";
  private static final int ROWS = 24;

  @Test
  void nullStructsAndListsReadBackAsWrittenOnEveryReadPath() {
    Map<String, Map<String, Object>> expected = new TreeMap<>();
    for (int i = 0; i < ROWS; i++) {
      expected.put(key(i), record(i));
    }
    try (ContextStore store = ContextStore.open(options(dir, "n", SPEC))) {
      store.add(new ArrayList<>(expected.values()));
      inEveryTier(store, () -> checkEveryPath(store, expected));
      // a second version of half the rows, so the base holds replaced rows and the fresh tier newer ones
      List<Map<String, Object>> upserts = new ArrayList<>();
      for (int i = 0; i < ROWS; i += 2) {
        Map<String, Object> r = record(i + 1);
        r.put("id", key(i));
        r.put("n", i);
        expected.put(key(i), r);
        upserts.add(r);
      }
      store.add(upserts);
      inEveryTier(store, () -> checkEveryPath(store, expected));
    }
  }

  @Test
  void aNullableStructWithANonNullableFieldIsRefusedAtCreation() {
    String spec = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
        + "{\"name\":\"ls\",\"type\":\"list\",\"item\":{\"type\":\"struct\",\"fields\":["
        + "{\"name\":\"x\",\"type\":\"int32\",\"nullable\":false}]}}]}";
    SchemaException e = assertThrows(SchemaException.class, () -> ContextStore.open(options(dir, "r", spec)));
    assertEquals("ls[].x", e.column().orElse(null), e.getMessage());
    assertFalse(java.nio.file.Files.exists(dir.resolve("r")), "nothing was created");
  }

  private static String key(int i) {
    return String.format("k%02d", i);
  }

  private static Map<String, Object> record(int i) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("id", key(i));
    r.put("n", i);
    r.put("st", switch (i % 4) {
      case 0 -> null;
      case 1 -> struct("a", null, "b", null, "in", null);  // a valid struct whose fields are all null
      case 2 -> struct("a", i, "b", "b" + i, "in", i % 3 == 0 ? null : struct("c", i));
      default -> struct("a", null, "b", null, "in", struct("c", null));
    });
    r.put("two", i % 3 == 0 ? null : struct("x", i, "y", null));
    r.put("l", i % 5 == 0 ? null : i % 5 == 1 ? List.of() : Arrays.asList("x" + i, null));
    r.put("ls", i % 6 == 0 ? null : Arrays.asList(i % 2 == 0 ? null : struct("c", i), struct("c", null)));
    r.put("v", i % 7 == 0 ? null : new float[] {i, -i});
    return r;
  }

  private static Map<String, Object> struct(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  private static void checkEveryPath(ContextStore store, Map<String, Map<String, Object>> expected) {
    List<String> wrong = new ArrayList<>();
    compare(wrong, "full scan", expected, store.scanRecords(ScanSpec.all()));
    for (int i = 0; i < ROWS; i++) {
      compare(wrong, "filter n = " + i, only(expected, i), store.scanRecords(ScanSpec.all().withFilter(Predicate.eq("n", (long) i))));
      compare(wrong, "get " + key(i), only(expected, i), store.get(key(i)).map(List::of).orElse(List.of()));
      compare(wrong, "filter id = " + key(i), only(expected, i),
          store.scanRecords(ScanSpec.all().withFilter(Predicate.eq("id", key(i)))));
    }
    // several rows at once (at first, only rows whose structs are all null)
    List<Object> nullStructs = List.of(0L, 12L);
    Map<String, Map<String, Object>> both = new TreeMap<>();
    both.put(key(0), expected.get(key(0)));
    both.put(key(12), expected.get(key(12)));
    compare(wrong, "filter n IN (0, 12)", both, store.scanRecords(ScanSpec.all().withFilter(Predicate.in("n", nullStructs))));
    compare(wrong, "get of every key", expected, store.get(expected.keySet()));
    List<Map<String, Object>> fromSplits = new ArrayList<>();
    for (ReadSplit split : store.planRead(ScanSpec.all().withFilter(Predicate.compare("n", Predicate.Op.LT, 1L)), 3).splits()) {
      try (StoreReader reader = store.read(split)) {
        fromSplits.addAll(reader.records());
      }
    }
    compare(wrong, "read splits, n < 1", only(expected, 0), fromSplits);
    assertTrue(wrong.isEmpty(), String.join("\n", wrong));
  }

  private static Map<String, Map<String, Object>> only(Map<String, Map<String, Object>> expected, int i) {
    return Map.of(key(i), expected.get(key(i)));
  }

  private static void compare(List<String> wrong, String path, Map<String, Map<String, Object>> expected,
      List<Map<String, Object>> actual) {
    Map<String, Map<String, Object>> byKey = new TreeMap<>();
    actual.forEach(r -> byKey.put((String) r.get("id"), r));
    if (!byKey.keySet().equals(expected.keySet()) || byKey.size() != actual.size()) {
      wrong.add(path + ": keys " + byKey.keySet() + ", expected " + expected.keySet());
      return;
    }
    expected.forEach((k, e) -> {
      String d = difference(e, byKey.get(k), k);
      if (d != null) {
        wrong.add(path + ": " + d + "\n   expected " + render(e) + "\n   actual   " + render(byKey.get(k)));
      }
    });
  }


}
