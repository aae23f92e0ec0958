package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.spark.catalog.LanceContextCatalog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Filters return exactly what Spark would: for a few hundred random conditions (NOT, AND and OR over nullable
 * columns; IN, IS NULL, null-safe equality, comparisons with the types' edge values, NaN and infinities) a
 * read of the store returns the keys that Spark's own WHERE returns over an in-memory view of the same rows,
 * with the rows in every tier; and a DELETE deletes exactly the rows that Spark's WHERE selects.
 */
class SparkFilterSemanticsTest extends SparkTest {
  private static final String CATALOG = "lcf";
  private static final String REFERENCE = "filter_semantics_reference";
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int32\"},{\"name\":\"big\",\"type\":\"int64\"},"
      + "{\"name\":\"d\",\"type\":\"float64\"},{\"name\":\"s\",\"type\":\"string\"}],"
      + "\"capabilities\":[\"tombstones\"]}";
  private static final long SEED = 20261203L;
  private static final int ROWS = 90;
  private static final int PREDICATES = 150;
  /** Conditions per Spark job (a UNION ALL of one filtered scan each). */
  private static final int BATCH = 50;

  private static final Object[] N = {null, Integer.MIN_VALUE, Integer.MIN_VALUE + 1, -7, -1, 0, 1, 7,
      Integer.MAX_VALUE - 1, Integer.MAX_VALUE};
  private static final Object[] BIG = {null, Long.MIN_VALUE, Long.MIN_VALUE + 1, (long) Integer.MIN_VALUE, -1L, 0L,
      1L, 42L, 3_000_000_000L, Long.MAX_VALUE - 1, Long.MAX_VALUE};
  private static final Object[] D = {null, Double.NaN, Double.NEGATIVE_INFINITY, -Double.MAX_VALUE, -1.5, -0.0, 0.0,
      Double.MIN_VALUE, 0.5, 2.5, 1e300, Double.MAX_VALUE, Double.POSITIVE_INFINITY};
  private static final Object[] S = {null, "", "a", "ab", "b", "it's", "z", "é"};
  private static final Map<String, Object[]> POOLS = new LinkedHashMap<>();

  static {
    POOLS.put("n", N);
    POOLS.put("big", BIG);
    POOLS.put("d", D);
    POOLS.put("s", S);
  }

  /** id -> column -> value (absent: null), in key order. */
  private static final Map<String, Map<String, Object>> rows = new TreeMap<>();

  @BeforeAll
  static void rowsAndReference() {
    spark.conf().set("spark.sql.catalog." + CATALOG, LanceContextCatalog.class.getName());
    spark.conf().set("spark.sql.catalog." + CATALOG + ".warehouse", dir.resolve("wh").toString());
    spark.sql("CREATE NAMESPACE IF NOT EXISTS " + CATALOG + ".f");
    Random random = new Random(SEED);
    for (int i = 0; i < ROWS; i++) {
      Map<String, Object> row = new HashMap<>();
      for (Map.Entry<String, Object[]> c : POOLS.entrySet()) {
        // one row of nulls only, one row of each column's non-null edges
        Object v = i == 0 ? null : i <= c.getValue().length - 1 ? c.getValue()[i] : pick(random, c.getValue());
        if (v != null) {
          row.put(c.getKey(), v);
        }
      }
      rows.put(String.format("k%03d", i), row);
    }
    StructType schema = new StructType().add("id", DataTypes.StringType, false).add("n", DataTypes.IntegerType)
        .add("big", DataTypes.LongType).add("d", DataTypes.DoubleType).add("s", DataTypes.StringType);
    List<Row> sparkRows = new ArrayList<>();
    rows.forEach((id, r) -> sparkRows.add(RowFactory.create(id, r.get("n"), r.get("big"), r.get("d"), r.get("s"))));
    // not cached: the partition statistics of a cached relation skip batches for d = NaN (NaN is no bound)
    spark.createDataFrame(sparkRows, schema).createOrReplaceTempView(REFERENCE);
  }

  private static Object pick(Random random, Object[] pool) {
    return pool[random.nextInt(pool.length)];
  }

  /** The rows written as in the test's tier: {@code store} receives records, the store is closed after. */
  private static String store(String name, Consumer<ContextStore> fill) {
    String path = dir.resolve("wh").resolve("f").resolve(name).toString();
    try (ContextStore store = ContextStore.open(Map.of("path", path, "schema", SPEC, "shards", "1"))) {
      fill.accept(store);
    }
    return CATALOG + ".f." + name;
  }

  private static List<Map<String, Object>> records(int from, int to, boolean decoy) {
    List<Map<String, Object>> out = new ArrayList<>();
    Random random = new Random(SEED + from);
    int i = 0;
    for (Map.Entry<String, Map<String, Object>> e : rows.entrySet()) {
      if (i >= from && i < to) {
        Map<String, Object> r = new HashMap<>(decoy ? Map.of() : e.getValue());
        if (decoy) {  // a version the real one replaces, which may match where the real one does not
          POOLS.forEach((c, pool) -> {
            Object v = pick(random, pool);
            if (v != null) {
              r.put(c, v);
            }
          });
        }
        r.put("id", e.getKey());
        out.add(r);
      }
      i++;
    }
    return out;
  }

  /** A store per tier, each holding {@link #rows}: table name -> tier. */
  private static Map<String, String> tiers(String prefix) {
    Map<String, String> t = new LinkedHashMap<>();
    t.put(store(prefix + "wal", s -> s.add(records(0, ROWS, false))), "the WAL tail");
    t.put(store(prefix + "generation", s -> {
      s.add(records(0, ROWS, false));
      s.seal();
    }), "a generation");
    t.put(store(prefix + "base", s -> {
      s.add(records(0, ROWS, false));
      assertTrue(s.merge().merged());
    }), "the base table");
    t.put(store(prefix + "compacted", s -> {
      for (int part = 0; part < 3; part++) {
        s.add(records(part * ROWS / 3, (part + 1) * ROWS / 3, false));
        assertTrue(s.merge().merged());
      }
      CompactionResult c = s.compact();
      assertTrue(c.ran() && c.fragmentsAfter() < c.fragmentsBefore(), c.toString());
    }), "the base table after a compaction");
    t.put(store(prefix + "mixed", s -> {
      s.add(records(0, ROWS, true));
      assertTrue(s.merge().merged());
      s.add(records(0, ROWS / 3, false));
      assertTrue(s.merge().merged());
      s.add(records(ROWS / 3, 2 * ROWS / 3, false));
      s.seal();
      s.add(records(2 * ROWS / 3, ROWS, false));
    }), "every tier, replacing older versions");
    return t;
  }

  @Test
  void everyConditionReturnsTheRowsSparkReturnsInEveryTier() {
    Random random = new Random(SEED);
    List<String> conditions = new ArrayList<>();
    for (int i = 0; i < PREDICATES; i++) {
      conditions.add(condition(random, 3));
    }
    Map<Integer, Set<String>> want = reference(conditions);
    List<String> wrong = new ArrayList<>();
    tiers("t_").forEach((table, tier) -> {
      Map<Integer, Set<String>> got = matches(table, conditions);
      for (int i = 0; i < conditions.size(); i++) {
        if (!want.get(i).equals(got.get(i))) {
          wrong.add("in " + tier + ": WHERE " + conditions.get(i) + "\n    Spark: " + want.get(i) + "\n    store: "
              + got.get(i));
        }
      }
    });
    assertTrue(wrong.isEmpty(), wrong.size() + " conditions differ, first ones:\n"
        + String.join("\n", wrong.subList(0, Math.min(8, wrong.size()))));
  }

  @Test
  void deleteDeletesExactlyTheRowsSparkSelects() {
    List<String> deletes = List.of(
        "s IS DISTINCT FROM 'a' AND n IS NULL",
        "NOT (big <=> 42) AND d IS NULL",
        "big IS DISTINCT FROM 1L AND n < 0 AND s IS NOT DISTINCT FROM 'b'",
        "length(s) IS DISTINCT FROM 1 AND n > 5",  // core cannot evaluate length: Spark selects the rows
        "NOT (d <=> 0.5D OR s IS DISTINCT FROM 'z')");
    List<String> wrong = new ArrayList<>();
    tiers("del_").forEach((table, tier) -> {
      List<String> done = new ArrayList<>();
      for (String condition : deletes) {
        done.add("NOT coalesce((" + condition + "), false)");
        spark.sql("DELETE FROM " + table + " WHERE " + condition);
        Set<String> want = ids("SELECT id FROM " + REFERENCE + " WHERE " + String.join(" AND ", done));
        Set<String> got = ids("SELECT id FROM " + table);
        if (!want.equals(got)) {
          wrong.add("in " + tier + ", after DELETE WHERE " + condition + ":\n    Spark keeps: " + want
              + "\n    store keeps: " + got);
          return;
        }
      }
      assertFalse(ids("SELECT id FROM " + table).isEmpty(), "some rows are left to tell deletes apart");
    });
    assertTrue(wrong.isEmpty(), String.join("\n", wrong));
  }

  private static Set<String> ids(String sql) {
    return new TreeSet<>(spark.sql(sql).as(org.apache.spark.sql.Encoders.STRING()).collectAsList());
  }

  /** Condition index -> the keys Spark's WHERE keeps from the reference view (where the condition is true). */
  private static Map<Integer, Set<String>> reference(List<String> conditions) {
    Map<Integer, Set<String>> out = new HashMap<>();
    List<String> columns = new ArrayList<>(List.of("id"));
    for (int i = 0; i < conditions.size(); i++) {
      out.put(i, new TreeSet<>());
      columns.add("coalesce((" + conditions.get(i) + "), false)");
    }
    for (Row r : spark.sql("SELECT " + String.join(", ", columns) + " FROM " + REFERENCE).collectAsList()) {
      for (int i = 0; i < conditions.size(); i++) {
        if (r.getBoolean(i + 1)) {
          out.get(i).add(r.getString(0));
        }
      }
    }
    return out;
  }

  /** Condition index -> the keys {@code SELECT id FROM table WHERE condition} returns. */
  private static Map<Integer, Set<String>> matches(String table, List<String> conditions) {
    Map<Integer, Set<String>> out = new HashMap<>();
    for (int from = 0; from < conditions.size(); from += BATCH) {
      List<String> union = new ArrayList<>();
      for (int i = from; i < Math.min(from + BATCH, conditions.size()); i++) {
        out.put(i, new TreeSet<>());
        union.add("SELECT " + i + " AS q, id FROM " + table + " WHERE " + conditions.get(i));
      }
      for (Row r : spark.sql(String.join(" UNION ALL ", union)).collectAsList()) {
        out.get(r.getInt(0)).add(r.getString(1));
      }
    }
    return out;
  }

  private static String condition(Random random, int depth) {
    if (depth == 0 || random.nextInt(3) == 0) {
      return atom(random);
    }
    return switch (random.nextInt(3)) {
      case 0 -> "NOT (" + condition(random, depth - 1) + ")";
      case 1 -> "(" + condition(random, depth - 1) + ") AND (" + condition(random, depth - 1) + ")";
      default -> "(" + condition(random, depth - 1) + ") OR (" + condition(random, depth - 1) + ")";
    };
  }

  private static final String[] OPS = {"=", "<>", "<", "<=", ">", ">=", "<=>"};

  private static String atom(Random random) {
    List<String> columns = new ArrayList<>(POOLS.keySet());
    String c = columns.get(random.nextInt(columns.size()));
    switch (random.nextInt(10)) {
      case 0:
        return c + " IS NULL";
      case 1:
        return c + " IS NOT NULL";
      case 2:
      case 3: {
        List<String> values = new ArrayList<>();
        for (int k = 1 + random.nextInt(3); k > 0; k--) {
          values.add(literal(random, c));
        }
        return c + (random.nextBoolean() ? " NOT IN (" : " IN (") + String.join(", ", values) + ")";
      }
      case 4:
        return c + " IS DISTINCT FROM " + literal(random, c);
      case 5:
        return c + " IS NOT DISTINCT FROM " + literal(random, c);
      default: {
        String op = OPS[random.nextInt(OPS.length)];
        String lit = literal(random, c);
        return random.nextInt(4) == 0 ? lit + " " + op + " " + c : c + " " + op + " " + lit;
      }
    }
  }

  /** A SQL literal for column {@code c}: mostly one of its own values, sometimes null or another numeric type. */
  private static String literal(Random random, String c) {
    int roll = random.nextInt(20);
    if (roll == 0) {
      return "NULL";
    }
    if (roll == 1 && !c.equals("s")) {  // a numeric literal of another type (Spark casts one side)
      String other = List.of("n", "big", "d").get(random.nextInt(3));
      return sql(other, pick(random, POOLS.get(other)), random);
    }
    Object v = pick(random, POOLS.get(c));
    return v == null ? sql(c, POOLS.get(c)[1], random) : sql(c, v, random);
  }

  private static String sql(String column, Object v, Random random) {
    if (v == null) {
      return "NULL";
    }
    switch (column) {
      case "n":
        return v.toString();
      case "big":
        return v + (random.nextInt(4) == 0 && (long) v == (int) (long) v ? "" : "L");
      case "d": {
        double d = (Double) v;
        if (Double.isNaN(d)) {
          return "CAST('NaN' AS DOUBLE)";
        }
        if (Double.isInfinite(d)) {
          return d > 0 ? "CAST('Infinity' AS DOUBLE)" : "CAST('-Infinity' AS DOUBLE)";
        }
        return d + "D";
      }
      default:
        return "'" + ((String) v).replace("\\", "\\\\").replace("'", "\\'") + "'";
    }
  }
}
