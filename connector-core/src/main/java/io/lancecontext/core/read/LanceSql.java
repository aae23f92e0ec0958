package io.lancecontext.core.read;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Renders a {@link Predicate} as a Lance (DataFusion) SQL filter. Returns empty when some part cannot
 * be expressed (the caller then filters in Java), so a rendered filter is always exact.
 */
public final class LanceSql {
  private LanceSql() {}

  private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);

  public static Optional<String> render(Predicate p) {
    StringBuilder sb = new StringBuilder();
    return append(sb, p) ? Optional.of(sb.toString()) : Optional.empty();
  }

  private static boolean append(StringBuilder sb, Predicate p) {
    if (p instanceof Predicate.True) {
      sb.append("true");
    } else if (p instanceof Predicate.Compare c) {
      String lit = literal(c.value());
      if (lit == null) {
        return false;
      }
      sb.append(column(c.column())).append(' ').append(c.op().sql).append(' ').append(lit);
    } else if (p instanceof Predicate.In in) {
      if (in.values().isEmpty()) {
        sb.append("false");
        return true;
      }
      List<String> lits = new ArrayList<>();
      for (Object v : in.values()) {
        String lit = literal(v);
        if (lit == null) {
          return false;
        }
        lits.add(lit);
      }
      sb.append(column(in.column())).append(" IN (").append(String.join(", ", lits)).append(')');
    } else if (p instanceof Predicate.IsNull n) {
      sb.append(column(n.column())).append(" IS NULL");
    } else if (p instanceof Predicate.IsNotNull n) {
      sb.append(column(n.column())).append(" IS NOT NULL");
    } else if (p instanceof Predicate.StartsWith s) {
      sb.append("starts_with(").append(column(s.column())).append(", ").append(string(s.prefix())).append(')');
    } else if (p instanceof Predicate.And a) {
      return junction(sb, a.children(), " AND ");
    } else if (p instanceof Predicate.Or o) {
      return junction(sb, o.children(), " OR ");
    } else if (p instanceof Predicate.Not n) {
      sb.append("NOT (");
      if (!append(sb, n.child())) {
        return false;
      }
      sb.append(')');
    } else {
      return false;
    }
    return true;
  }

  private static boolean junction(StringBuilder sb, List<Predicate> children, String op) {
    if (children.isEmpty()) {
      sb.append(op.trim().equals("AND") ? "true" : "false");
      return true;
    }
    sb.append('(');
    for (int i = 0; i < children.size(); i++) {
      if (i > 0) {
        sb.append(op);
      }
      sb.append('(');
      if (!append(sb, children.get(i))) {
        return false;
      }
      sb.append(')');
    }
    sb.append(')');
    return true;
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

  public static String string(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  static String literal(Object v) {
    if (v instanceof String s) {
      return string(s);
    }
    if (v instanceof Long || v instanceof Integer) {
      return v.toString();
    }
    if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      return Double.isFinite(d) ? Double.toString(d) : null;
    }
    if (v instanceof Boolean b) {
      return b.toString();
    }
    if (v instanceof Instant i) {
      return "TIMESTAMP '" + TS.format(i) + "'";
    }
    if (v instanceof LocalDate d) {
      return "DATE '" + d + "'";
    }
    return null;
  }
}
