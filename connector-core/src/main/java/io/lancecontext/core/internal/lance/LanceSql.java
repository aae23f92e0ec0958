package io.lancecontext.core.internal.lance;

import io.lancecontext.core.read.Predicate;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Renders a {@link Predicate} as a Lance (DataFusion) SQL filter.
 *
 * <p>lance-core 7.0.0 receives filter text through JNI's modified UTF-8, in which NUL and characters
 * outside the Basic Multilingual Plane are not valid UTF-8: a filter holding such a literal fails the
 * whole scan ({@code invalid utf-8 sequence}). Such literals are never sent. Where a predicate holds one,
 * {@link #renderSuperset} sends a filter that matches at least the rows the predicate matches (an equality
 * becomes a key range over the literal's sendable prefix, so an index still serves it) and reports it
 * inexact; the caller then evaluates the predicate itself in Java over what Lance returns.
 */
public final class LanceSql {
  private LanceSql() {}

  private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);
  private static final String TRUE = "true";
  /** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the years SQL timestamp literals hold. */
  private static final long MIN_SECOND = -62_135_596_800L;
  private static final long MAX_SECOND = 253_402_300_799L;

  /**
   * A Lance filter for a predicate.
   *
   * @param sql the filter text ({@code "true"} when nothing could be sent)
   * @param exact whether it matches exactly the predicate's rows; otherwise a superset of them
   */
  public record Rendered(String sql, boolean exact) {}

  /** The exact filter, or empty when some part cannot be sent to Lance as it is. */
  public static Optional<String> render(Predicate p) {
    Rendered r = renderSuperset(p);
    return r.exact() ? Optional.of(r.sql()) : Optional.empty();
  }

  /** A filter that matches every row {@code p} matches, exactly those when {@link Rendered#exact()}. */
  public static Rendered renderSuperset(Predicate p) {
    if (p instanceof Predicate.True) {
      return new Rendered(TRUE, true);
    } else if (p instanceof Predicate.Compare c) {
      String lit = literal(c.value());
      if (lit != null) {
        return new Rendered(column(c.column()) + ' ' + c.op().sql() + ' ' + lit, true);
      }
      if (c.op() == Predicate.Op.EQ && c.value() instanceof String s) {
        return new Rendered(range(c.column(), s), false);
      }
      return new Rendered(TRUE, false);
    } else if (p instanceof Predicate.In in) {
      if (in.values().isEmpty()) {
        return new Rendered("false", true);
      }
      List<String> lits = new ArrayList<>();
      List<String> ranges = new ArrayList<>();
      for (Object v : in.values()) {
        String lit = literal(v);
        if (lit != null) {
          lits.add(lit);
        } else if (v instanceof String s) {
          ranges.add(range(in.column(), s));
        } else {
          return new Rendered(TRUE, false);
        }
      }
      List<String> parts = new ArrayList<>();
      if (!lits.isEmpty()) {
        parts.add(column(in.column()) + " IN (" + String.join(", ", lits) + ')');
      }
      parts.addAll(ranges);
      if (ranges.contains(TRUE)) {
        return new Rendered(TRUE, false);
      }
      return new Rendered(parts.size() == 1 ? parts.get(0) : join(parts, " OR "), ranges.isEmpty());
    } else if (p instanceof Predicate.IsNull n) {
      return new Rendered(column(n.column()) + " IS NULL", true);
    } else if (p instanceof Predicate.IsNotNull n) {
      return new Rendered(column(n.column()) + " IS NOT NULL", true);
    } else if (p instanceof Predicate.StartsWith s) {
      if (passable(s.prefix())) {
        return new Rendered("starts_with(" + column(s.column()) + ", " + string(s.prefix()) + ')', true);
      }
      String prefix = passablePrefix(s.prefix());
      return new Rendered(prefix.isEmpty() ? TRUE : "starts_with(" + column(s.column()) + ", " + string(prefix) + ')', false);
    } else if (p instanceof Predicate.And a) {
      if (a.children().isEmpty()) {
        return new Rendered(TRUE, true);
      }
      List<String> parts = new ArrayList<>();
      boolean exact = true;
      for (Predicate child : a.children()) {
        Rendered r = renderSuperset(child);
        exact &= r.exact();
        if (!r.sql().equals(TRUE)) {
          parts.add(r.sql());
        }
      }
      return new Rendered(parts.isEmpty() ? TRUE : join(parts, " AND "), exact);
    } else if (p instanceof Predicate.Or o) {
      if (o.children().isEmpty()) {
        return new Rendered("false", true);
      }
      List<String> parts = new ArrayList<>();
      boolean exact = true;
      for (Predicate child : o.children()) {
        Rendered r = renderSuperset(child);
        if (r.sql().equals(TRUE)) {
          return new Rendered(TRUE, r.exact());
        }
        exact &= r.exact();
        parts.add(r.sql());
      }
      return new Rendered(join(parts, " OR "), exact);
    } else if (p instanceof Predicate.Not n) {
      Rendered r = renderSuperset(n.child());
      // the negation of a superset is no superset of the negation
      return r.exact() ? new Rendered("NOT (" + r.sql() + ")", true) : new Rendered(TRUE, false);
    }
    return new Rendered(TRUE, false);
  }

  private static String join(List<String> parts, String op) {
    StringBuilder sb = new StringBuilder("(");
    for (int i = 0; i < parts.size(); i++) {
      if (i > 0) {
        sb.append(op);
      }
      sb.append('(').append(parts.get(i)).append(')');
    }
    return sb.append(')').toString();
  }

  /**
   * A range of the strings that {@code s} (which holds a character Lance cannot be sent) can equal, bounded by
   * sendable strings: UTF-8 byte order is code-point order, NUL is the smallest code point and every
   * supplementary character sorts above U+FFFF.
   */
  private static String range(String column, String s) {
    String prefix = passablePrefix(s);
    int next = s.codePointAt(prefix.length());
    String col = column(column);
    if (next == 0) {
      return col + " >= " + string(prefix) + " AND " + col + " < " + string(prefix + '\u0001');
    }
    if (next < Character.MIN_SUPPLEMENTARY_CODE_POINT) {
      return TRUE;  // a lone surrogate: no stored string equals it
    }
    String lower = col + " > " + string(prefix + '\uFFFF');
    String upper = successor(prefix);
    return upper == null ? lower : lower + " AND " + col + " < " + string(upper);
  }

  /** The smallest sendable string above every string that starts with {@code prefix}; null if none. */
  private static String successor(String prefix) {
    if (prefix.isEmpty()) {
      return null;
    }
    char last = prefix.charAt(prefix.length() - 1);
    if (last == '\uFFFF') {
      return null;
    }
    char next = (char) (last + 1);
    if (Character.isSurrogate(next)) {
      next = '\uE000';
    }
    return prefix.substring(0, prefix.length() - 1) + next;
  }

  /** Whether {@code s} can be passed to lance-core in filter text (see the class comment). */
  public static boolean passable(String s) {
    return passablePrefix(s).length() == s.length();
  }

  /**
   * {@link #passable(String)} of a valid UTF-8 key from its bytes: no NUL, and no character above U+FFFF (a
   * 4-byte sequence, the only way valid UTF-8 holds what Java holds as a surrogate pair).
   */
  public static boolean passableUtf8(byte[] utf8) {
    for (byte b : utf8) {
      if (b == 0 || (b & 0xF8) == 0xF0) {
        return false;
      }
    }
    return true;
  }

  private static String passablePrefix(String s) {
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == 0 || Character.isSurrogate(ch)) {
        return s.substring(0, i);
      }
    }
    return s;
  }

  /** A column path with every segment quoted. */
  public static String column(String path) {
    StringBuilder sb = new StringBuilder();
    for (String part : path.split("\\.")) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append('`').append(part).append('`');
    }
    return sb.toString();
  }

  /** A quoted string literal; {@code s} must be {@link #passable}. */
  public static String string(String s) {
    if (!passable(s)) {
      throw new IllegalArgumentException("string cannot be sent to lance-core in filter text");
    }
    return "'" + s.replace("'", "''") + "'";
  }

  /** The SQL literal of a value, or null when it cannot be sent exactly. */
  static String literal(Object v) {
    if (v instanceof String s) {
      return passable(s) ? string(s) : null;
    }
    if (v instanceof Long || v instanceof Integer) {
      long l = ((Number) v).longValue();
      // Lance parses "-9223372036854775808" as the negation of a number beyond int64, a float64 it then cannot
      // compare with an int64 column; an int64 expression folds to the exact value
      return l == Long.MIN_VALUE ? "(-9223372036854775807 - 1)" : Long.toString(l);
    }
    if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      return Double.isFinite(d) ? Double.toString(d) : null;
    }
    if (v instanceof Boolean b) {
      return b.toString();
    }
    if (v instanceof Instant i) {
      return i.getEpochSecond() >= MIN_SECOND && i.getEpochSecond() <= MAX_SECOND ? "TIMESTAMP '" + TS.format(i) + "'" : null;
    }
    if (v instanceof LocalDate d) {
      return d.getYear() >= 1 && d.getYear() <= 9999 ? "DATE '" + d + "'" : null;
    }
    return null;
  }
}
