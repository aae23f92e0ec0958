package io.lancecontext.flink.table;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.table.expressions.CallExpression;
import org.apache.flink.table.expressions.FieldReferenceExpression;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.expressions.ValueLiteralExpression;
import org.apache.flink.table.functions.BuiltInFunctionDefinitions;
import org.apache.flink.table.functions.FunctionDefinition;

/**
 * Flink filter expressions translated into core {@link Predicate}s, only where core evaluates them exactly
 * as Flink would (SQL three-valued logic). Casts, functions, decimals (except against a DOUBLE column, which
 * Flink compares as doubles), {@code LIKE} patterns other than a
 * plain prefix, and comparisons with a floating-point zero (Flink treats -0.0 and 0.0 as equal; core
 * orders them) stay with Flink.
 */
final class FlinkFilters {
  private FlinkFilters() {}

  static Optional<Predicate> translate(ResolvedExpression e, SchemaSpec spec) {
    try {
      return Optional.ofNullable(convert(e, spec));
    } catch (IllegalArgumentException | ClassCastException ex) {
      return Optional.empty();
    }
  }

  private static Predicate convert(ResolvedExpression e, SchemaSpec spec) {
    if (!(e instanceof CallExpression call)) {
      return null;
    }
    FunctionDefinition f = call.getFunctionDefinition();
    List<ResolvedExpression> args = call.getResolvedChildren();
    if (f == BuiltInFunctionDefinitions.AND || f == BuiltInFunctionDefinitions.OR) {
      List<Predicate> children = new ArrayList<>();
      for (ResolvedExpression a : args) {
        Predicate p = convert(a, spec);
        if (p == null) {
          return null;
        }
        children.add(p);
      }
      return f == BuiltInFunctionDefinitions.AND ? Predicate.and(children)
          : Predicate.or(children.toArray(new Predicate[0]));
    }
    if (f == BuiltInFunctionDefinitions.NOT) {
      Predicate p = convert(args.get(0), spec);
      return p == null ? null : Predicate.not(p);
    }
    if (f == BuiltInFunctionDefinitions.IS_NULL || f == BuiltInFunctionDefinitions.IS_NOT_NULL) {
      String col = column(args.get(0), spec);
      if (col == null) {
        return null;
      }
      return f == BuiltInFunctionDefinitions.IS_NULL ? Predicate.isNull(col) : Predicate.isNotNull(col);
    }
    if (f == BuiltInFunctionDefinitions.LIKE && args.size() == 2) {
      String col = column(args.get(0), spec);
      Object pattern = literal(args.get(1));
      if (col != null && pattern instanceof String s && s.endsWith("%")) {
        String prefix = s.substring(0, s.length() - 1);
        if (!prefix.contains("%") && !prefix.contains("_") && !prefix.contains("\\")) {
          return Predicate.startsWith(col, prefix);
        }
      }
      return null;
    }
    Predicate.Op op = op(f);
    if (op == null || args.size() != 2) {
      return null;
    }
    String col = column(args.get(0), spec);
    ResolvedExpression lit = args.get(1);
    if (col == null) {
      col = column(args.get(1), spec);
      lit = args.get(0);
      op = flip(op);
    }
    if (col == null || !(lit instanceof ValueLiteralExpression)) {
      return null;
    }
    Object value = literal(lit);
    if (value instanceof BigDecimal d) {
      // Flink compares a DOUBLE column with a DECIMAL literal as doubles; for other columns it stays in Flink
      if (spec.column(col).type() != ColumnType.FLOAT64) {
        return null;
      }
      value = d.doubleValue();
    }
    if (value == null || value instanceof Double d && d == 0.0 || value instanceof Float x && x == 0.0f) {
      return null;
    }
    return Predicate.compare(col, op, value);
  }

  private static Predicate.Op op(FunctionDefinition f) {
    if (f == BuiltInFunctionDefinitions.EQUALS) {
      return Predicate.Op.EQ;
    } else if (f == BuiltInFunctionDefinitions.NOT_EQUALS) {
      return Predicate.Op.NE;
    } else if (f == BuiltInFunctionDefinitions.LESS_THAN) {
      return Predicate.Op.LT;
    } else if (f == BuiltInFunctionDefinitions.LESS_THAN_OR_EQUAL) {
      return Predicate.Op.LE;
    } else if (f == BuiltInFunctionDefinitions.GREATER_THAN) {
      return Predicate.Op.GT;
    } else if (f == BuiltInFunctionDefinitions.GREATER_THAN_OR_EQUAL) {
      return Predicate.Op.GE;
    }
    return null;
  }

  private static Predicate.Op flip(Predicate.Op op) {
    return switch (op) {
      case LT -> Predicate.Op.GT;
      case LE -> Predicate.Op.GE;
      case GT -> Predicate.Op.LT;
      case GE -> Predicate.Op.LE;
      default -> op;
    };
  }

  private static String column(ResolvedExpression e, SchemaSpec spec) {
    return e instanceof FieldReferenceExpression ref && spec.column(ref.getName()) != null ? ref.getName() : null;
  }

  /** The literal as a core value; null for a null literal; throws for types core does not compare. */
  private static Object literal(ResolvedExpression e) {
    if (!(e instanceof ValueLiteralExpression lit) || lit.isNull()) {
      return null;
    }
    Class<?> c = lit.getOutputDataType().getConversionClass();
    Object v = lit.getValueAs(c).orElseThrow(() -> new IllegalArgumentException("no value"));
    if (v instanceof String || v instanceof Boolean || v instanceof Double || v instanceof Float
        || v instanceof LocalDate || v instanceof Instant) {
      return v;
    }
    if (v instanceof Byte || v instanceof Short || v instanceof Integer || v instanceof Long) {
      return ((Number) v).longValue();
    }
    if (v instanceof BigDecimal) {
      return v;
    }
    if (v instanceof LocalDateTime t) {
      return t.toInstant(ZoneOffset.UTC);  // TIMESTAMP columns hold UTC instants
    }
    throw new IllegalArgumentException("literal of " + c.getName());
  }
}
