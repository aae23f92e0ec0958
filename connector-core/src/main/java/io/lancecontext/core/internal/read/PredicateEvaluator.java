package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.codec.ValueReader;
import io.lancecontext.core.read.Predicate;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Evaluates a {@link Predicate} over rows of an Arrow batch with SQL three-valued logic (a row matches
 * only when the predicate is true, not when it is false or unknown). Bound to one batch; not
 * thread-safe.
 */
public final class PredicateEvaluator {
  private final Predicate predicate;
  private final VectorSchemaRoot batch;
  private final Map<String, FieldVector> columns = new HashMap<>();

  public PredicateEvaluator(Predicate predicate, VectorSchemaRoot batch) {
    this.predicate = predicate;
    this.batch = batch;
  }

  public boolean matches(int row) {
    return eval(predicate, row) == Boolean.TRUE;
  }

  /** TRUE, FALSE or null (unknown). */
  private Boolean eval(Predicate p, int row) {
    if (p instanceof Predicate.True) {
      return true;
    } else if (p instanceof Predicate.Compare c) {
      Object v = value(c.column(), row);
      if (v == null) {
        return null;
      }
      int cmp = compare(v, c.value(), c.column());
      return switch (c.op()) {
        case EQ -> cmp == 0;
        case NE -> cmp != 0;
        case LT -> cmp < 0;
        case LE -> cmp <= 0;
        case GT -> cmp > 0;
        case GE -> cmp >= 0;
      };
    } else if (p instanceof Predicate.In in) {
      if (in.values().isEmpty()) {
        return false;  // as in Lance SQL: an empty IN list is false, also for a null value
      }
      Object v = value(in.column(), row);
      if (v == null) {
        return null;
      }
      for (Object candidate : in.values()) {
        if (compare(v, candidate, in.column()) == 0) {
          return true;
        }
      }
      return false;
    } else if (p instanceof Predicate.IsNull n) {
      return value(n.column(), row) == null;
    } else if (p instanceof Predicate.IsNotNull n) {
      return value(n.column(), row) != null;
    } else if (p instanceof Predicate.StartsWith s) {
      Object v = value(s.column(), row);
      return v == null ? null : ((String) v).startsWith(s.prefix());
    } else if (p instanceof Predicate.And a) {
      Boolean result = true;
      for (Predicate child : a.children()) {
        Boolean r = eval(child, row);
        if (r == Boolean.FALSE) {
          return false;
        }
        if (r == null) {
          result = null;
        }
      }
      return result;
    } else if (p instanceof Predicate.Or o) {
      Boolean result = false;
      for (Predicate child : o.children()) {
        Boolean r = eval(child, row);
        if (r == Boolean.TRUE) {
          return true;
        }
        if (r == null) {
          result = null;
        }
      }
      return result;
    } else if (p instanceof Predicate.Not n) {
      Boolean r = eval(n.child(), row);
      return r == null ? null : !r;
    }
    throw new IllegalStateException("unhandled predicate " + p);
  }

  private Object value(String path, int row) {
    FieldVector v = columns.computeIfAbsent(path, this::resolve);
    if (v == null) {
      throw new IllegalArgumentException("filter column '" + path + "' is not in the batch");
    }
    if (path.indexOf('.') >= 0) {
      // a null parent struct makes the field null
      String[] parts = path.split("\\.");
      FieldVector parent = batch.getVector(parts[0]);
      for (int i = 1; i < parts.length; i++) {
        if (parent.isNull(row)) {
          return null;
        }
        parent = (FieldVector) ((StructVector) parent).getChild(parts[i]);
      }
    }
    return ValueReader.read(v, row, null);
  }

  private FieldVector resolve(String path) {
    String[] parts = path.split("\\.");
    FieldVector v = batch.getVector(parts[0]);
    for (int i = 1; i < parts.length && v != null; i++) {
      v = v instanceof StructVector s ? (FieldVector) s.getChild(parts[i]) : null;
    }
    return v;
  }

  /** Compares a column value with a literal of a compatible type. */
  static int compare(Object value, Object literal, String column) {
    if (value instanceof Number a && literal instanceof Number b) {
      boolean floating = a instanceof Double || a instanceof Float || b instanceof Double || b instanceof Float;
      return floating ? Double.compare(a.doubleValue(), b.doubleValue()) : Long.compare(a.longValue(), b.longValue());
    }
    if (value instanceof String a && literal instanceof String b) {
      return compareCodePoints(a, b);
    }
    if (value instanceof Boolean a && literal instanceof Boolean b) {
      return Boolean.compare(a, b);
    }
    if (value instanceof Instant a && literal instanceof Instant b) {
      return a.compareTo(b);
    }
    if (value instanceof LocalDate a && literal instanceof LocalDate b) {
      return a.compareTo(b);
    }
    throw new IllegalArgumentException("filter on column '" + column + "' compares a "
        + value.getClass().getSimpleName() + " value with a " + literal.getClass().getSimpleName() + " literal");
  }

  /** Code-point order, which is the byte order of UTF-8 (Lance's order for strings). */
  public static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
