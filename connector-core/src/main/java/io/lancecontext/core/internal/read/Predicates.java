package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.internal.codec.Text;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Helpers over {@link Predicate}s: the columns they use, validation, and the store's visibility rules. */
public final class Predicates {
  private Predicates() {}

  /** The column whose time, once passed, hides a row under the {@code lifecycle} capability. */
  static final String EXPIRES_AT = "expires_at";

  /** Statuses the {@code lifecycle} capability hides by default. */
  public static final List<Object> RETIRED_STATUSES = List.of("archived", "deleted", "expired");

  /** Column paths a predicate reads. */
  public static Set<String> columns(Predicate p) {
    Set<String> out = new LinkedHashSet<>();
    collect(p, out);
    return out;
  }

  private static void collect(Predicate p, Set<String> out) {
    if (p instanceof Predicate.Compare c) {
      out.add(c.column());
    } else if (p instanceof Predicate.In in) {
      out.add(in.column());
    } else if (p instanceof Predicate.IsNull n) {
      out.add(n.column());
    } else if (p instanceof Predicate.IsNotNull n) {
      out.add(n.column());
    } else if (p instanceof Predicate.StartsWith s) {
      out.add(s.column());
    } else if (p instanceof Predicate.And a) {
      a.children().forEach(c -> collect(c, out));
    } else if (p instanceof Predicate.Or o) {
      o.children().forEach(c -> collect(c, out));
    } else if (p instanceof Predicate.Not n) {
      collect(n.child(), out);
    }
  }

  /** Top-level columns a predicate reads. */
  public static Set<String> topLevelColumns(Predicate p) {
    Set<String> out = new LinkedHashSet<>();
    for (String c : columns(p)) {
      int dot = c.indexOf('.');
      out.add(dot < 0 ? c : c.substring(0, dot));
    }
    return out;
  }

  /**
   * Most keys a read confined to keys reads by key (the fresh tier through its index, the base through its
   * key hashes); above it the fresh tier is scanned.
   */
  static final int MAX_KEYS_READ_BY_KEY = 10_000;

  /**
   * The keys {@code filter} confines a read of {@code spec} to when they are few enough to be read by key
   * (at most {@value #MAX_KEYS_READ_BY_KEY}), else null.
   */
  public static Set<String> keysReadByKey(io.lancecontext.core.schema.SchemaSpec spec, Predicate filter) {
    return keys(spec.key(), filter).filter(k -> k.size() <= MAX_KEYS_READ_BY_KEY).orElse(null);
  }

  /**
   * The keys a filter confines rows to, when it does ({@code key = 'a'}, {@code key IN (...)}, a
   * conjunction with such a term, a disjunction of such terms); empty when any key may match.
   */
  public static java.util.Optional<Set<String>> keys(String key, Predicate p) {
    if (p instanceof Predicate.Compare c && c.column().equals(key) && c.op() == Predicate.Op.EQ
        && c.value() instanceof String v) {
      return java.util.Optional.of(Set.of(v));
    }
    if (p instanceof Predicate.In in && in.column().equals(key)
        && in.values().stream().allMatch(v -> v instanceof String)) {
      Set<String> out = new java.util.TreeSet<>();
      in.values().forEach(v -> out.add((String) v));
      return java.util.Optional.of(out);
    }
    if (p instanceof Predicate.And a) {
      java.util.Optional<Set<String>> best = java.util.Optional.empty();
      for (Predicate c : a.children()) {
        java.util.Optional<Set<String>> k = keys(key, c);
        if (k.isPresent()) {
          if (best.isEmpty()) {
            best = k;
          } else {
            Set<String> both = new java.util.TreeSet<>(best.get());
            both.retainAll(k.get());
            best = java.util.Optional.of(both);
          }
        }
      }
      return best;
    }
    if (p instanceof Predicate.Or o) {
      Set<String> out = new java.util.TreeSet<>();
      for (Predicate c : o.children()) {
        java.util.Optional<Set<String>> k = keys(key, c);
        if (k.isEmpty()) {
          return java.util.Optional.empty();
        }
        out.addAll(k.get());
      }
      return java.util.Optional.of(out);
    }
    return java.util.Optional.empty();
  }

  /**
   * The predicate both tiers evaluate: {@code p} (already {@linkplain #validate validated}) in negation normal
   * form (NOT only in front of IN and starts-with), with every comparison literal stated in its column's type:
   * <ul>
   *   <li>integer, date and timestamp columns compare exact values: a literal between two representable values,
   *       or beyond the type's range, becomes the equivalent bound, or a predicate true for every non-null
   *       value ({@code int32 < 3e9}) or for none ({@code int32 = 2.5}); NaN counts as above every number;</li>
   *   <li>float32 and float64 columns compare with the literal rounded to the column's type (to nearest);</li>
   *   <li>{@code col IN ()} is false for every row (so its negation is true for every row, null or not); an IN
   *       whose literals all fail to fit is false for every non-null value.</li>
   * </ul>
   * In negation normal form a row matches exactly when the predicate is true, so an atom that is unknown on
   * null rows may be replaced by one that is false there without changing which rows match.
   */
  public static Predicate normalize(SchemaSpec spec, Predicate p) {
    return normalize(spec, p, false);
  }

  private static Predicate normalize(SchemaSpec spec, Predicate p, boolean negate) {
    if (p instanceof Predicate.True) {
      return negate ? Predicate.alwaysFalse() : p;
    } else if (p instanceof Predicate.Not n) {
      return normalize(spec, n.child(), !negate);
    } else if (p instanceof Predicate.And a) {
      List<Predicate> children = a.children().stream().map(c -> normalize(spec, c, negate)).toList();
      return negate ? new Predicate.Or(children) : Predicate.and(children);
    } else if (p instanceof Predicate.Or o) {
      List<Predicate> children = o.children().stream().map(c -> normalize(spec, c, negate)).toList();
      return negate ? Predicate.and(children) : new Predicate.Or(children);
    } else if (p instanceof Predicate.IsNull n) {
      return negate ? Predicate.isNotNull(n.column()) : p;
    } else if (p instanceof Predicate.IsNotNull n) {
      return negate ? Predicate.isNull(n.column()) : p;
    } else if (p instanceof Predicate.StartsWith) {
      return negate ? Predicate.not(p) : p;
    } else if (p instanceof Predicate.Compare c) {
      return fit(resolve(spec, c.column()).type(), c.column(), negate ? c.op().negated() : c.op(), c.value());
    } else if (p instanceof Predicate.In in) {
      if (in.values().isEmpty()) {
        return negate ? Predicate.alwaysTrue() : Predicate.alwaysFalse();
      }
      ColumnType type = resolve(spec, in.column()).type();
      List<Object> fitting = new ArrayList<>();
      for (Object v : in.values()) {
        if (fit(type, in.column(), Predicate.Op.EQ, v) instanceof Predicate.Compare eq && !fitting.contains(eq.value())) {
          fitting.add(eq.value());
        }
      }
      if (fitting.isEmpty()) {
        return negate ? Predicate.isNotNull(in.column()) : Predicate.alwaysFalse();
      }
      Predicate fitted = Predicate.in(in.column(), fitting);
      return negate ? Predicate.not(fitted) : fitted;
    }
    throw new IllegalStateException("unhandled predicate " + p);
  }

  /** {@code column op value} with the literal in the column's type (see {@link #normalize}). */
  private static Predicate fit(ColumnType type, String column, Predicate.Op op, Object value) {
    switch (type) {
      case INT8:
        return fitExact(column, op, exact(value), Byte.MIN_VALUE, Byte.MAX_VALUE, b -> b);
      case INT16:
        return fitExact(column, op, exact(value), Short.MIN_VALUE, Short.MAX_VALUE, b -> b);
      case INT32:
        return fitExact(column, op, exact(value), Integer.MIN_VALUE, Integer.MAX_VALUE, b -> b);
      case INT64:
        return fitExact(column, op, exact(value), Long.MIN_VALUE, Long.MAX_VALUE, b -> b);
      case FLOAT32:
        return Predicate.compare(column, op, ((Number) value).floatValue());
      case FLOAT64:
        return Predicate.compare(column, op, ((Number) value).doubleValue());
      case DATE:
        return fitExact(column, op, BigDecimal.valueOf(((LocalDate) value).toEpochDay()), Integer.MIN_VALUE,
            Integer.MAX_VALUE, LocalDate::ofEpochDay);
      case TIMESTAMP: {
        Instant i = (Instant) value;
        BigDecimal micros = BigDecimal.valueOf(i.getEpochSecond()).multiply(MICROS_PER_SECOND)
            .add(BigDecimal.valueOf(i.getNano(), 3));
        return fitExact(column, op, micros, Long.MIN_VALUE, Long.MAX_VALUE,
            m -> Instant.ofEpochSecond(Math.floorDiv(m, 1_000_000L), Math.floorMod(m, 1_000_000L) * 1_000L));
      }
      case STRING:
      case LARGE_STRING:
        if ((op == Predicate.Op.EQ || op == Predicate.Op.NE) && !Text.isText((String) value)) {
          // no stored value equals it: the store holds valid UTF-8 only (no unpaired surrogates)
          return op == Predicate.Op.EQ ? Predicate.alwaysFalse() : Predicate.isNotNull(column);
        }
        return Predicate.compare(column, op, value);
      default:
        return Predicate.compare(column, op, value);
    }
  }


  private static final BigDecimal MICROS_PER_SECOND = BigDecimal.valueOf(1_000_000L);
  /** Stands for NaN and +infinity (above every number) and -infinity (below), which BigDecimal lacks. */
  private static final BigDecimal ABOVE = null;
  private static final BigDecimal BELOW = new BigDecimal("-1E+400");

  private static BigDecimal exact(Object value) {
    if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      if (Double.isNaN(d) || d == Double.POSITIVE_INFINITY) {
        return ABOVE;
      }
      return d == Double.NEGATIVE_INFINITY ? BELOW : new BigDecimal(d);
    }
    return BigDecimal.valueOf(((Number) value).longValue());
  }

  /**
   * {@code column op x} over a column holding the integers {@code [min, max]}, {@code x} exact (or
   * {@link #ABOVE}/{@link #BELOW}), stated with an in-range integer literal ({@code literal} maps it to the
   * literal's Java type) or as "every non-null value" / "none".
   */
  private static Predicate fitExact(String column, Predicate.Op op, BigDecimal x, long min, long max,
      java.util.function.LongFunction<Object> literal) {
    Predicate all = Predicate.isNotNull(column);
    Predicate none = Predicate.alwaysFalse();
    if (x == ABOVE) {
      return op == Predicate.Op.EQ || op == Predicate.Op.GT || op == Predicate.Op.GE ? none : all;
    }
    if (x == BELOW) {
      return op == Predicate.Op.EQ || op == Predicate.Op.LT || op == Predicate.Op.LE ? none : all;
    }
    BigDecimal low = BigDecimal.valueOf(min);
    BigDecimal high = BigDecimal.valueOf(max);
    BigDecimal bound = x;
    boolean integral = x.stripTrailingZeros().scale() <= 0;
    switch (op) {
      case EQ:
      case NE: {
        boolean representable = integral && bound.compareTo(low) >= 0 && bound.compareTo(high) <= 0;
        if (!representable) {
          return op == Predicate.Op.EQ ? none : all;
        }
        return Predicate.compare(column, op, literal.apply(bound.longValueExact()));
      }
      case LT:
      case LE: {
        // column <= b, b the largest integer satisfying the comparison
        BigDecimal b = op == Predicate.Op.LE ? bound.setScale(0, RoundingMode.FLOOR)
            : bound.setScale(0, RoundingMode.CEILING).subtract(BigDecimal.ONE);
        if (b.compareTo(high) >= 0) {
          return all;
        }
        if (b.compareTo(low) < 0) {
          return none;
        }
        return Predicate.compare(column, Predicate.Op.LE, literal.apply(b.longValueExact()));
      }
      default: {
        // column >= b, b the smallest integer satisfying the comparison
        BigDecimal b = op == Predicate.Op.GE ? bound.setScale(0, RoundingMode.CEILING)
            : bound.setScale(0, RoundingMode.FLOOR).add(BigDecimal.ONE);
        if (b.compareTo(low) <= 0) {
          return all;
        }
        if (b.compareTo(high) > 0) {
          return none;
        }
        return Predicate.compare(column, Predicate.Op.GE, literal.apply(b.longValueExact()));
      }
    }
  }

  /** Checks that every column exists and every literal fits its column's type. */
  public static void validate(SchemaSpec spec, Predicate p) {
    if (p instanceof Predicate.Compare c) {
      checkLiteral(spec, c.column(), c.value());
    } else if (p instanceof Predicate.In in) {
      ColumnSpec col = filterable(spec, in.column());
      in.values().forEach(v -> checkLiteral(col, in.column(), v));
    } else if (p instanceof Predicate.IsNull n) {
      filterable(spec, n.column());
    } else if (p instanceof Predicate.IsNotNull n) {
      filterable(spec, n.column());
    } else if (p instanceof Predicate.StartsWith s) {
      ColumnSpec col = filterable(spec, s.column());
      if (!col.type().isString()) {
        throw new SchemaException(s.column(), "starts-with filters need a string column, not " + col.type());
      }
    } else if (p instanceof Predicate.And a) {
      a.children().forEach(c -> validate(spec, c));
    } else if (p instanceof Predicate.Or o) {
      o.children().forEach(c -> validate(spec, c));
    } else if (p instanceof Predicate.Not n) {
      validate(spec, n.child());
    }
  }

  private static void checkLiteral(SchemaSpec spec, String column, Object value) {
    checkLiteral(filterable(spec, column), column, value);
  }

  private static void checkLiteral(ColumnSpec col, String column, Object value) {
    ColumnType t = col.type();
    boolean ok = switch (t) {
      case BOOL -> value instanceof Boolean;
      case INT8, INT16, INT32, INT64, FLOAT32, FLOAT64 -> value instanceof Number;
      case STRING, LARGE_STRING -> value instanceof String;
      case TIMESTAMP -> value instanceof Instant;
      case DATE -> value instanceof LocalDate;
      default -> false;
    };
    if (!ok) {
      throw new SchemaException(column, "cannot filter a " + t + " column with a "
          + value.getClass().getSimpleName() + " value");
    }
  }

  /** The column a filter names; blob columns cannot be filtered. */
  private static ColumnSpec filterable(SchemaSpec spec, String path) {
    ColumnSpec c = resolve(spec, path);
    if (c.blob()) {
      throw new SchemaException(path, "blob columns cannot be used in filters");
    }
    if (c.type() == ColumnType.VECTOR || c.type() == ColumnType.LIST || c.type() == ColumnType.STRUCT) {
      throw new SchemaException(path, "cannot filter on a " + c.type() + " column");
    }
    return c;
  }

  /** The column a (possibly dotted) path names. */
  static ColumnSpec resolve(SchemaSpec spec, String path) {
    String[] parts = path.split("\\.");
    ColumnSpec c = spec.column(parts[0]);
    for (int i = 1; i < parts.length && c != null; i++) {
      c = c.type() == ColumnType.STRUCT ? c.field(parts[i]) : null;
    }
    if (c == null) {
      throw new SchemaException(path, "no such column; the store's columns are " + spec.columnNames());
    }
    return c;
  }

  /** Rows the lifecycle capability hides: a retired status, or an expiry at or before {@code now}. */
  public static Predicate lifecycleVisible(SchemaSpec spec, Instant now) {
    List<Predicate> parts = new ArrayList<>();
    if (spec.column("lifecycle_status") != null) {
      parts.add(Predicate.or(Predicate.isNull("lifecycle_status"),
          Predicate.not(Predicate.in("lifecycle_status", RETIRED_STATUSES))));
    }
    if (spec.column(EXPIRES_AT) != null) {
      parts.add(Predicate.or(Predicate.isNull(EXPIRES_AT), Predicate.compare(EXPIRES_AT, Predicate.Op.GT, now)));
    }
    return Predicate.and(parts);
  }

  /** Base-table rows that are not tombstones (tombstones merged but not yet purged). */
  public static Predicate notTombstone(SchemaSpec spec) {
    if (!spec.has(Capability.TOMBSTONES)) {
      return Predicate.alwaysTrue();
    }
    return Predicate.or(Predicate.isNull(SystemColumns.TOMBSTONE),
        Predicate.eq(SystemColumns.TOMBSTONE, Boolean.FALSE));
  }
}
