package io.lancecontext.core.read;

import java.io.Serializable;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * An engine-neutral row filter. Spark's and Flink's filter push-down translate into these; the store
 * renders them as Lance SQL for the base table ({@code LanceSql}) and evaluates them in Java over the
 * fresh tier ({@code PredicateEvaluator}), so both tiers filter identically. Columns are top-level
 * names or dotted paths into structs ({@code state_metadata.step}). Literals are {@link String},
 * {@link Long}, {@link Double}, {@link Boolean}, {@link Instant} (timestamps) and {@link LocalDate}.
 * SQL semantics: a comparison with a null operand is not true. How literals that do not fit their column's
 * type compare is defined once for both tiers (docs/architecture.md, "Filter semantics").
 */
public sealed interface Predicate extends Serializable {

  enum Op {
    EQ("="), NE("!="), LT("<"), LE("<="), GT(">"), GE(">=");

    private final String sql;

    Op(String sql) {
      this.sql = sql;
    }

    /** The operator in Lance SQL. */
    public String sql() {
      return sql;
    }

    /** The operator of the negated comparison ({@code NOT (a < b)} is {@code a >= b}). */
    public Op negated() {
      return switch (this) {
        case EQ -> NE;
        case NE -> EQ;
        case LT -> GE;
        case LE -> GT;
        case GT -> LE;
        case GE -> LT;
      };
    }
  }

  /** {@code column <op> value}. */
  record Compare(String column, Op op, Object value) implements Predicate {
    public Compare {
      Objects.requireNonNull(column, "column");
      Objects.requireNonNull(op, "op");
      checkLiteral(column, value);
    }
  }

  /** {@code column IN (values)}. */
  record In(String column, List<Object> values) implements Predicate {
    public In {
      Objects.requireNonNull(column, "column");
      values = List.copyOf(values);
      values.forEach(v -> checkLiteral(column, v));
    }
  }

  record IsNull(String column) implements Predicate {}

  record IsNotNull(String column) implements Predicate {}

  /** {@code column} starts with {@code prefix} (strings only). */
  record StartsWith(String column, String prefix) implements Predicate {}

  record And(List<Predicate> children) implements Predicate {
    public And {
      children = List.copyOf(children);
    }
  }

  record Or(List<Predicate> children) implements Predicate {
    public Or {
      children = List.copyOf(children);
    }
  }

  record Not(Predicate child) implements Predicate {}

  /** Matches every row. */
  record True() implements Predicate {}

  static Predicate eq(String column, Object value) {
    return new Compare(column, Op.EQ, value);
  }

  static Predicate compare(String column, Op op, Object value) {
    return new Compare(column, op, value);
  }

  static Predicate in(String column, List<?> values) {
    return new In(column, List.copyOf(values));
  }

  static Predicate isNull(String column) {
    return new IsNull(column);
  }

  static Predicate isNotNull(String column) {
    return new IsNotNull(column);
  }

  static Predicate startsWith(String column, String prefix) {
    return new StartsWith(column, prefix);
  }

  static Predicate and(Predicate... children) {
    return and(Arrays.asList(children));
  }

  /** Conjunction, dropping {@link True} children; {@link True} when nothing is left. */
  static Predicate and(List<Predicate> children) {
    List<Predicate> kept = children.stream().filter(c -> !(c instanceof True)).toList();
    return kept.isEmpty() ? new True() : kept.size() == 1 ? kept.get(0) : new And(kept);
  }

  static Predicate or(Predicate... children) {
    return new Or(Arrays.asList(children));
  }

  static Predicate not(Predicate child) {
    return new Not(child);
  }

  static Predicate alwaysTrue() {
    return new True();
  }

  /** Matches no row (an empty disjunction). */
  static Predicate alwaysFalse() {
    return new Or(List.of());
  }

  private static void checkLiteral(String column, Object value) {
    if (!(value instanceof String || value instanceof Long || value instanceof Integer || value instanceof Double
        || value instanceof Float || value instanceof Boolean || value instanceof Instant || value instanceof LocalDate)) {
      throw new IllegalArgumentException("unsupported literal for column '" + column + "': "
          + (value == null ? "null (use IsNull)" : value.getClass().getName()));
    }
  }
}
