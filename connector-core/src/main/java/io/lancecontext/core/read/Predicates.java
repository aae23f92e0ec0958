package io.lancecontext.core.read;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Helpers over {@link Predicate}s: the columns they use, validation, and the store's visibility rules. */
public final class Predicates {
  private Predicates() {}

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
    if (p instanceof Predicate.Or o && !o.children().isEmpty()) {
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
    if (spec.column("expires_at") != null) {
      parts.add(Predicate.or(Predicate.isNull("expires_at"), Predicate.compare("expires_at", Predicate.Op.GT, now)));
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
