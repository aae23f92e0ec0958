package io.lancecontext.spark.read;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark V2 predicates translated into core {@link Predicate}s. A predicate is translated only when core
 * evaluates it exactly as Spark would (SQL three-valued logic: a comparison with null is not true, and
 * neither is its negation; null-safe equality {@code c <=> v} is never null, so it becomes
 * {@code c IS NOT NULL AND c = v}, whose negation holds for a null {@code c}), so a translated predicate is
 * not evaluated again by Spark, neither in a read nor in a DELETE's condition. Everything else
 * (functions, casts, decimals, arithmetic, null-safe equality with null, comparisons with a floating-point
 * zero, which Spark treats as equal to negative zero) is left to Spark.
 */
public final class SparkFilters {
  private SparkFilters() {}

  public static Optional<Predicate> translate(org.apache.spark.sql.connector.expressions.filter.Predicate p, SchemaSpec spec) {
    try {
      return Optional.ofNullable(convert(p, spec));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static Predicate convert(org.apache.spark.sql.connector.expressions.filter.Predicate p, SchemaSpec spec) {
    Expression[] c = p.children();
    switch (p.name()) {
      case "ALWAYS_TRUE":
        return Predicate.alwaysTrue();
      case "ALWAYS_FALSE":
        return Predicate.alwaysFalse();
      case "AND":
        return both(c, spec, true);
      case "OR":
        return both(c, spec, false);
      case "NOT": {
        Predicate child = convert((org.apache.spark.sql.connector.expressions.filter.Predicate) c[0], spec);
        return child == null ? null : Predicate.not(child);
      }
      case "IS_NULL":
        return column(c[0], spec).map(Predicate::isNull).orElse(null);
      case "IS_NOT_NULL":
        return column(c[0], spec).map(Predicate::isNotNull).orElse(null);
      case "STARTS_WITH": {
        Optional<String> col = column(c[0], spec);
        Object prefix = literal(c[1]);
        return col.isPresent() && prefix instanceof String s ? Predicate.startsWith(col.get(), s) : null;
      }
      case "IN": {
        Optional<String> col = column(c[0], spec);
        if (col.isEmpty()) {
          return null;
        }
        List<Object> values = new ArrayList<>();
        for (int i = 1; i < c.length; i++) {
          Object v = literal(c[i]);
          if (v == null || isZero(v)) {
            return null;  // IN with a null literal is never true in Spark but may be null: leave it to Spark
          }
          values.add(v);
        }
        return Predicate.in(col.get(), values);
      }
      case "=", "<>", "<", "<=", ">", ">=", "<=>":
        return comparison(p.name(), c, spec);
      default:
        return null;
    }
  }

  private static Predicate both(Expression[] c, SchemaSpec spec, boolean and) {
    Predicate l = convert((org.apache.spark.sql.connector.expressions.filter.Predicate) c[0], spec);
    Predicate r = convert((org.apache.spark.sql.connector.expressions.filter.Predicate) c[1], spec);
    if (l == null || r == null) {
      return null;
    }
    return and ? Predicate.and(l, r) : Predicate.or(l, r);
  }

  private static Predicate comparison(String name, Expression[] c, SchemaSpec spec) {
    Optional<String> col = column(c[0], spec);
    boolean flipped = false;
    Expression lit = c[1];
    if (col.isEmpty()) {
      col = column(c[1], spec);
      lit = c[0];
      flipped = true;
    }
    if (col.isEmpty() || !(lit instanceof Literal<?>)) {
      return null;
    }
    Object value = literal(lit);
    if (value == null) {
      return null;  // "<=> null" is IS NULL and "= null" is never true: Spark handles both
    }
    if (isZero(value)) {
      return null;
    }
    if (name.equals("<=>")) {
      // true or false, never null: c <=> v (v not null) is (c IS NOT NULL AND c = v), so its negation holds for null c
      return Predicate.and(Predicate.isNotNull(col.get()), Predicate.compare(col.get(), Predicate.Op.EQ, value));
    }
    Predicate.Op op = switch (name) {
      case "=" -> Predicate.Op.EQ;
      case "<>" -> Predicate.Op.NE;
      case "<" -> flipped ? Predicate.Op.GT : Predicate.Op.LT;
      case "<=" -> flipped ? Predicate.Op.GE : Predicate.Op.LE;
      case ">" -> flipped ? Predicate.Op.LT : Predicate.Op.GT;
      case ">=" -> flipped ? Predicate.Op.LE : Predicate.Op.GE;
      default -> throw new IllegalArgumentException(name);
    };
    return Predicate.compare(col.get(), op, value);
  }

  /** Spark treats -0.0 and 0.0 as equal; core orders them (IEEE total order): such comparisons stay in Spark. */
  private static boolean isZero(Object v) {
    return v instanceof Double d && d == 0.0 || v instanceof Float f && f == 0.0f;
  }

  private static Optional<String> column(Expression e, SchemaSpec spec) {
    if (!(e instanceof NamedReference ref)) {
      return Optional.empty();
    }
    String[] names = ref.fieldNames();
    if (spec.column(names[0]) == null) {
      return Optional.empty();
    }
    return Optional.of(String.join(".", names));
  }

  /** The literal as a core value, null for a null literal; types core does not compare throw. */
  private static Object literal(Expression e) {
    if (!(e instanceof Literal<?> lit)) {
      throw new IllegalArgumentException("not a literal");
    }
    Object v = lit.value();
    if (v == null) {
      return null;
    }
    DataType t = lit.dataType();
    if (t.equals(DataTypes.StringType)) {
      return ((UTF8String) v).toString();
    }
    if (t.equals(DataTypes.LongType) || t.equals(DataTypes.IntegerType) || t.equals(DataTypes.ShortType)
        || t.equals(DataTypes.ByteType)) {
      return ((Number) v).longValue();
    }
    if (t.equals(DataTypes.DoubleType)) {
      return v;
    }
    if (t.equals(DataTypes.FloatType)) {
      return v;
    }
    if (t.equals(DataTypes.BooleanType)) {
      return v;
    }
    if (t.equals(DataTypes.TimestampType)) {
      long micros = (Long) v;
      return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }
    if (t.equals(DataTypes.DateType)) {
      return LocalDate.ofEpochDay((Integer) v);
    }
    throw new IllegalArgumentException("literal of type " + t.simpleString());
  }
}
