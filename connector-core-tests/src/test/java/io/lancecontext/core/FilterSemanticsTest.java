package io.lancecontext.core;

import static io.lancecontext.core.StoreTestSupport.inEveryTier;
import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate.Op;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.StoreTest;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * One filter semantics in every tier (docs/architecture.md, "Filter semantics"): the Java evaluator over the
 * fresh tier and Lance SQL over the base table give the same, documented answers, also for literals that do not
 * fit the column's type; limit 0 and unknown columns behave alike everywhere.
 */
class FilterSemanticsTest extends StoreTest {
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int32\"},{\"name\":\"big\",\"type\":\"int64\"},{\"name\":\"f\",\"type\":\"float32\"},"
      + "{\"name\":\"d\",\"type\":\"float64\"},{\"name\":\"ts\",\"type\":\"timestamp\"},{\"name\":\"day\",\"type\":\"date\"},"
      + "{\"name\":\"s\",\"type\":\"string\"},"
      + "{\"name\":\"st\",\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"int32\"}]}],"
      + "\"capabilities\":[\"tombstones\"]}";

  private static final Set<String> NON_NULL_N = Set.of("r1", "r2", "r3", "r4", "r5");
  private static final Set<String> ALL = Set.of("r0", "r1", "r2", "r3", "r4", "r5");

  private static List<Map<String, Object>> rows() {
    List<Map<String, Object>> rows = new ArrayList<>();
    rows.add(rec("id", "r0"));
    rows.add(rec("id", "r1", "n", -5, "big", -1L, "f", 0.1f, "d", 0.1, "ts", Instant.ofEpochSecond(0, 1_000),
        "day", LocalDate.of(2020, 1, 1), "s", "a", "st", Map.of("a", 1)));
    rows.add(rec("id", "r2", "n", 0, "big", 0L, "f", 0.5f, "d", 2.5, "ts", Instant.EPOCH, "s", "b"));
    rows.add(rec("id", "r3", "n", 7, "big", 9_200_000_000_000_000_001L, "f", -1f, "ts", Instant.ofEpochSecond(0, 2_000)));
    rows.add(rec("id", "r4", "n", Integer.MAX_VALUE, "big", Long.MAX_VALUE, "f", Float.MAX_VALUE));
    rows.add(rec("id", "r5", "n", Integer.MIN_VALUE, "big", Long.MIN_VALUE));
    return rows;
  }

  /** Predicate → the rows it matches, by the documented semantics. */
  private static Map<String, Map.Entry<Predicate, Set<String>>> cases() {
    Map<String, Map.Entry<Predicate, Set<String>>> c = new LinkedHashMap<>();
    put(c, "int32 < 3e9 (long)", Predicate.compare("n", Op.LT, 3_000_000_000L), NON_NULL_N);
    put(c, "int32 > 3e9", Predicate.compare("n", Op.GT, 3e9), Set.of());
    put(c, "int32 >= -3e9", Predicate.compare("n", Op.GE, -3e9), NON_NULL_N);
    put(c, "int32 = 2.147483647E9", Predicate.compare("n", Op.EQ, 2.147483647E9), Set.of("r4"));
    put(c, "int32 = 2.5", Predicate.compare("n", Op.EQ, 2.5), Set.of());
    put(c, "int32 != 2.5", Predicate.compare("n", Op.NE, 2.5), NON_NULL_N);
    put(c, "NOT (int32 = 2.5)", Predicate.not(Predicate.compare("n", Op.EQ, 2.5)), NON_NULL_N);
    put(c, "int32 < 2.5", Predicate.compare("n", Op.LT, 2.5), Set.of("r1", "r2", "r5"));
    put(c, "int32 <= -5.0", Predicate.compare("n", Op.LE, -5.0), Set.of("r1", "r5"));
    put(c, "int32 > -5.5", Predicate.compare("n", Op.GT, -5.5), Set.of("r1", "r2", "r3", "r4"));
    put(c, "int32 IN (2.5, 7)", Predicate.in("n", List.of(2.5, 7L)), Set.of("r3"));
    put(c, "NOT (int32 IN (2.5))", Predicate.not(Predicate.in("n", List.of(2.5))), NON_NULL_N);
    put(c, "NOT (int32 IN (2.5, 7))", Predicate.not(Predicate.in("n", List.of(2.5, 7L))), Set.of("r1", "r2", "r4", "r5"));
    put(c, "int32 = NaN", Predicate.compare("n", Op.EQ, Double.NaN), Set.of());
    put(c, "int32 < NaN", Predicate.compare("n", Op.LT, Double.NaN), NON_NULL_N);
    put(c, "int32 < +inf", Predicate.compare("n", Op.LT, Double.POSITIVE_INFINITY), NON_NULL_N);
    put(c, "int32 > -inf", Predicate.compare("n", Op.GT, Double.NEGATIVE_INFINITY), NON_NULL_N);
    put(c, "int64 > 9.2E18", Predicate.compare("big", Op.GT, 9.2e18), Set.of("r3", "r4"));
    put(c, "int64 = 9.223372036854775807E18", Predicate.compare("big", Op.EQ, 9.223372036854775807E18), Set.of());
    put(c, "int64 < 9.223372036854775807E18", Predicate.compare("big", Op.LT, 9.223372036854775807E18), NON_NULL_N);
    put(c, "int64 < -9223372036854775807", Predicate.compare("big", Op.LT, Long.MIN_VALUE + 1), Set.of("r5"));
    put(c, "int64 <= Long.MIN_VALUE", Predicate.compare("big", Op.LE, Long.MIN_VALUE), Set.of("r5"));
    put(c, "int64 = Long.MIN_VALUE", Predicate.compare("big", Op.EQ, Long.MIN_VALUE), Set.of("r5"));
    put(c, "int64 != Long.MIN_VALUE", Predicate.compare("big", Op.NE, Long.MIN_VALUE), Set.of("r1", "r2", "r3", "r4"));
    put(c, "int64 > Long.MIN_VALUE", Predicate.compare("big", Op.GT, Long.MIN_VALUE), Set.of("r1", "r2", "r3", "r4"));
    put(c, "int64 IN (Long.MIN_VALUE, Long.MAX_VALUE)", Predicate.in("big", List.of(Long.MIN_VALUE, Long.MAX_VALUE)),
        Set.of("r4", "r5"));
    put(c, "NOT (int64 IN (Long.MIN_VALUE, 0))", Predicate.not(Predicate.in("big", List.of(Long.MIN_VALUE, 0L))),
        Set.of("r1", "r3", "r4"));
    put(c, "int64 > 9223372036854775806", Predicate.compare("big", Op.GT, Long.MAX_VALUE - 1), Set.of("r4"));
    put(c, "int64 = Long.MAX_VALUE", Predicate.compare("big", Op.EQ, Long.MAX_VALUE), Set.of("r4"));
    put(c, "int32 = Integer.MIN_VALUE", Predicate.compare("n", Op.EQ, (long) Integer.MIN_VALUE), Set.of("r5"));
    put(c, "int32 < -2147483647", Predicate.compare("n", Op.LT, (long) Integer.MIN_VALUE + 1), Set.of("r5"));
    put(c, "int32 >= Integer.MAX_VALUE", Predicate.compare("n", Op.GE, (long) Integer.MAX_VALUE), Set.of("r4"));
    put(c, "float64 > -Double.MAX_VALUE", Predicate.compare("d", Op.GT, -Double.MAX_VALUE), Set.of("r1", "r2"));
    put(c, "float64 < Double.MAX_VALUE", Predicate.compare("d", Op.LT, Double.MAX_VALUE), Set.of("r1", "r2"));
    put(c, "float64 > Double.MIN_VALUE", Predicate.compare("d", Op.GT, Double.MIN_VALUE), Set.of("r1", "r2"));
    put(c, "float64 < 1e-300", Predicate.compare("d", Op.LT, 1e-300), Set.of());
    put(c, "float64 < +inf", Predicate.compare("d", Op.LT, Double.POSITIVE_INFINITY), Set.of("r1", "r2"));
    put(c, "float64 > -inf", Predicate.compare("d", Op.GT, Double.NEGATIVE_INFINITY), Set.of("r1", "r2"));
    put(c, "float32 = 0.1", Predicate.compare("f", Op.EQ, 0.1), Set.of("r1"));
    put(c, "float32 = 0.1f", Predicate.compare("f", Op.EQ, 0.1f), Set.of("r1"));
    put(c, "float32 IN (0.1, 0.5)", Predicate.in("f", List.of(0.1, 0.5)), Set.of("r1", "r2"));
    put(c, "float64 = 0.1", Predicate.compare("d", Op.EQ, 0.1), Set.of("r1"));
    put(c, "float64 = 0.1f", Predicate.compare("d", Op.EQ, 0.1f), Set.of());
    put(c, "float32 > 3.5e38", Predicate.compare("f", Op.GT, 3.5e38), Set.of());
    put(c, "float32 < 1e39", Predicate.compare("f", Op.LT, 1e39), Set.of("r1", "r2", "r3", "r4"));
    put(c, "ts = 1.5 us", Predicate.compare("ts", Op.EQ, Instant.ofEpochSecond(0, 1_500)), Set.of());
    put(c, "ts > 1.5 us", Predicate.compare("ts", Op.GT, Instant.ofEpochSecond(0, 1_500)), Set.of("r3"));
    put(c, "ts < 1.5 us", Predicate.compare("ts", Op.LT, Instant.ofEpochSecond(0, 1_500)), Set.of("r1", "r2"));
    put(c, "ts <= 1 us", Predicate.compare("ts", Op.LE, Instant.ofEpochSecond(0, 1_000)), Set.of("r1", "r2"));
    put(c, "ts < Instant.MAX", Predicate.compare("ts", Op.LT, Instant.MAX), Set.of("r1", "r2", "r3"));
    put(c, "date >= year 0", Predicate.compare("day", Op.GE, LocalDate.of(0, 1, 1)), Set.of("r1"));
    put(c, "s IN ()", Predicate.in("s", List.of()), Set.of());
    put(c, "NOT (s IN ())", Predicate.not(Predicate.in("s", List.of())), ALL);
    put(c, "NOT (int32 IN ())", Predicate.not(Predicate.in("n", List.of())), ALL);
    put(c, "NOT NOT (int32 = 7)", Predicate.not(Predicate.not(Predicate.eq("n", 7L))), Set.of("r3"));
    put(c, "NOT (int32 > 0 AND s = 'b')", Predicate.not(Predicate.and(Predicate.compare("n", Op.GT, 0L),
        Predicate.eq("s", "b"))), Set.of("r1", "r2", "r5"));
    put(c, "int32 = 7 OR s = 'a'", Predicate.or(Predicate.eq("n", 7L), Predicate.eq("s", "a")), Set.of("r1", "r3"));
    put(c, "NOT (st.a = 1)", Predicate.not(Predicate.eq("st.a", 1L)), Set.of());
    put(c, "st.a IS NULL", Predicate.isNull("st.a"), Set.of("r0", "r2", "r3", "r4", "r5"));
    put(c, "NOT (s IS NULL)", Predicate.not(Predicate.isNull("s")), Set.of("r1", "r2"));
    return c;
  }

  private static void put(Map<String, Map.Entry<Predicate, Set<String>>> c, String name, Predicate p, Set<String> rows) {
    c.put(name, Map.entry(p, rows));
  }

  @Test
  void everyTierGivesTheDocumentedAnswerForOddLiterals() {
    try (ContextStore store = ContextStore.open(options(dir, "f", SPEC))) {
      store.add(rows());
      inEveryTier(store, () -> {
        List<String> wrong = new ArrayList<>();
        cases().forEach((name, c) -> {
          Set<String> got = keys(store, ScanSpec.all().withFilter(c.getKey()));
          if (!got.equals(c.getValue())) {
            wrong.add(name + ": expected " + new TreeSet<>(c.getValue()) + ", got " + got);
          }
          if (store.count(c.getKey()) != c.getValue().size()) {
            wrong.add(name + ": count " + store.count(c.getKey()));
          }
        });
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
      });
    }
  }

  @Test
  void floatsCompareInTotalOrderInEveryTier() {
    String spec = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"d\",\"type\":\"float64\"},"
        + "{\"name\":\"f\",\"type\":\"float32\"}]}";
    try (ContextStore store = ContextStore.open(options(dir, "t", spec))) {
      store.add(List.of(rec("id", "nan", "d", Double.NaN, "f", Float.NaN), rec("id", "negzero", "d", -0.0, "f", -0.0f),
          rec("id", "zero", "d", 0.0, "f", 0.0f), rec("id", "inf", "d", Double.POSITIVE_INFINITY, "f", Float.POSITIVE_INFINITY),
          rec("id", "one", "d", 1.0, "f", 1.0f), rec("id", "null")));
      Map<String, Map.Entry<Predicate, Set<String>>> c = new LinkedHashMap<>();
      put(c, "d = 0.0", Predicate.compare("d", Op.EQ, 0.0), Set.of("zero"));
      put(c, "d < 0.0", Predicate.compare("d", Op.LT, 0.0), Set.of("negzero"));
      put(c, "d <= -0.0", Predicate.compare("d", Op.LE, -0.0), Set.of("negzero"));
      put(c, "d > 1e300", Predicate.compare("d", Op.GT, 1e300), Set.of("inf", "nan"));
      put(c, "d != 1.0", Predicate.compare("d", Op.NE, 1.0), Set.of("inf", "nan", "negzero", "zero"));
      put(c, "f = 0.0", Predicate.compare("f", Op.EQ, 0.0), Set.of("zero"));
      put(c, "f > 1e30", Predicate.compare("f", Op.GT, 1e30), Set.of("inf", "nan"));
      put(c, "d = NaN", Predicate.compare("d", Op.EQ, Double.NaN), Set.of("nan"));
      put(c, "f < NaN", Predicate.compare("f", Op.LT, Double.NaN), Set.of("inf", "negzero", "one", "zero"));
      inEveryTier(store, () -> {
        List<String> wrong = new ArrayList<>();
        c.forEach((name, e) -> {
          Set<String> got = keys(store, ScanSpec.all().withFilter(e.getKey()));
          if (!got.equals(e.getValue())) {
            wrong.add(name + ": expected " + new TreeSet<>(e.getValue()) + ", got " + got);
          }
        });
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
      });
    }
  }

  @Test
  void limitZeroReturnsNothingInEveryTier() {
    try (ContextStore store = ContextStore.open(options(dir, "l", SPEC))) {
      store.add(rows());
      inEveryTier(store, () -> {
        assertEquals(0, store.scanRecords(ScanSpec.all().withLimit(0)).size(), "limit 0");
        assertEquals(0, store.scanRecords(ScanSpec.all().withLimit(0).withOffset(2)).size(), "offset 2 limit 0");
        assertEquals(0, store.scanRecords(ScanSpec.all().withLimit(0).withFilter(Predicate.isNotNull("n"))).size(),
            "filtered, limit 0");
        assertEquals(2, store.scanRecords(ScanSpec.all().withLimit(2)).size(), "limit 2");
        for (ReadSplit split : store.planRead(ScanSpec.all().withLimit(0), 3).splits()) {
          try (StoreReader reader = store.read(split)) {
            assertEquals(0, reader.records().size(), "split " + split.part() + ", limit 0");
          }
        }
      });
    }
  }

  @Test
  void unknownColumnsAreSchemaErrorsAtEveryReadEntryPoint() {
    try (ContextStore store = ContextStore.open(options(dir, "u", SPEC))) {
      store.add(rows());
      inEveryTier(store, () -> {
        expectSchemaError("nope", () -> store.lookup(List.of("r1"), List.of("nope"), false));
        expectSchemaError("nope", () -> store.lookup(List.of("r1", "missing"), List.of("id", "nope"), true));
        expectSchemaError("st.a", () -> store.lookup(List.of("r1"), List.of("st.a"), false));
        expectSchemaError("_lc_seq", () -> store.lookup(List.of("r1"), List.of("_lc_seq"), false));
        expectSchemaError("n", () -> store.lookup(List.of("r1"), List.of("n", "n"), false));
        expectSchemaError("nope", () -> store.scanRecords(ScanSpec.all().withColumns(List.of("id", "nope"))));
        expectSchemaError("nope", () -> store.scanRecords(ScanSpec.all().withFilter(Predicate.eq("nope", 1L))));
        expectSchemaError("nope", () -> store.count(Predicate.isNull("nope")));
        expectSchemaError("nope", () -> store.planRead(ScanSpec.all().withColumns(List.of("nope")), 2).splits());
        // the store is still usable: nothing reached lance-core
        assertEquals(Map.of("id", "r1", "n", -5), store.lookup(List.of("r1"), List.of("id", "n"), false).get(0));
      });
    }
  }

  private static void expectSchemaError(String column, Executable call) {
    SchemaException e = assertThrows(SchemaException.class, call);
    assertEquals(column, e.column().orElse(null), e.getMessage());
  }

  private static Set<String> keys(ContextStore store, ScanSpec scan) {
    Set<String> out = new TreeSet<>();
    for (Map<String, Object> r : store.scanRecords(scan.withColumns(List.of("id")))) {
      assertTrue(out.add((String) r.get("id")), "a key returned twice");
    }
    return out;
  }


}
