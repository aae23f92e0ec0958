package io.lancecontext.core.internal.codec;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Conforms an Arrow batch in a <em>user</em> schema (what Spark's and Flink's Arrow writers produce, or
 * any caller's) to a store's dataset layout, matching columns by name:
 * <ul>
 *   <li>column order is free; struct fields are matched by name too;</li>
 *   <li>Utf8 and LargeUtf8 are interchangeable, and so are Binary, LargeBinary and FixedSizeBinary;</li>
 *   <li>a vector column takes a List, LargeList or FixedSizeList of float32; every row must hold exactly
 *       {@code dim} non-null elements;</li>
 *   <li>a list column takes a List, LargeList or FixedSizeList whose items conform;</li>
 *   <li>a timestamp column takes a Timestamp of any unit, with any zone or none (a zone-less value is
 *       read as UTC), stored as microseconds (nanoseconds are truncated towards negative infinity);
 *       a date column takes Date(DAY) or Date(MILLISECOND);</li>
 *   <li>integers and floats widen where no value can change: a signed or unsigned integer into a wider
 *       signed one, float16/float32 into float32/float64, int8/int16 into float32, int8..int32 into
 *       float64; anything narrower is refused by type, before any row is read;</li>
 *   <li>a nullable source column may feed a non-nullable one (the key included): each value is checked,
 *       and a null is refused naming the row and column;</li>
 *   <li>a missing nullable column is filled with nulls, a missing required one is refused; a missing key
 *       column gets keys from the writer's {@link KeyIds};</li>
 *   <li>a system column ({@code _lc_*}) or any other reserved or unknown column is refused, naming it.</li>
 * </ul>
 * The result then goes through {@link BatchValidator}. On any refusal nothing is returned and the
 * input is untouched. Thread-safe (stateless).
 */
public final class BatchConformer {
  private BatchConformer() {}

  /** A conformed batch (the caller closes it) and the key ordinals it used. */
  public record Conformed(VectorSchemaRoot batch, long keylessRows) {}

  /**
   * Conforms {@code input} (not closed, not modified) into a new batch in {@code spec}'s dataset schema.
   *
   * @param firstKeyless the ordinal of the first generated key, when the batch has no key column
   * @throws SchemaException if a column is reserved, unknown, missing while required, or of a type
   *     that cannot be stored without loss
   * @throws InvalidRecordException if a value cannot be stored (null in a required column, a vector of
   *     the wrong length), naming its row and column
   */
  public static Conformed conform(SchemaSpec spec, VectorSchemaRoot input, KeyIds ids, long firstKeyless,
      BufferAllocator allocator) {
    Map<String, FieldVector> byName = sources(spec, input);
    for (ColumnSpec c : spec.columns()) {
      FieldVector src = byName.get(c.name());
      if (src == null) {
        if (!c.nullable() && !c.name().equals(spec.key())) {
          throw new SchemaException(c.name(), "the batch lacks this required (non-nullable) column");
        }
      } else {
        checkType(src.getField(), c, c.name());
      }
    }
    int rows = input.getRowCount();
    VectorSchemaRoot out = VectorSchemaRoot.create(spec.toArrowSchema(), allocator);
    try {
      for (FieldVector v : out.getFieldVectors()) {
        v.setInitialCapacity(Math.max(1, rows));
      }
      out.allocateNew();
      long keyless = 0;
      for (ColumnSpec c : spec.columns()) {
        FieldVector src = byName.get(c.name());
        FieldVector dst = out.getVector(c.name());
        if (src == null && c.name().equals(spec.key())) {
          for (int r = 0; r < rows; r++) {
            ValueWriter.write(dst, r, ids.key(firstKeyless + r), c, c.name(), r);
          }
          keyless = rows;
        } else if (src == null) {
          for (int r = 0; r < rows; r++) {
            ValueWriter.write(dst, r, null, c, c.name(), r);
          }
        } else {
          for (int r = 0; r < rows; r++) {
            copy(src, r, dst, r, c, c.name(), r);
          }
        }
      }
      out.setRowCount(rows);
      BatchValidator.validate(spec, out);
      return new Conformed(out, keyless);
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
  }

  /** The input's columns by name, refusing reserved, unknown and repeated ones. */
  private static Map<String, FieldVector> sources(SchemaSpec spec, VectorSchemaRoot input) {
    Map<String, FieldVector> byName = new HashMap<>();
    List<String> unknown = new ArrayList<>();
    for (FieldVector v : input.getFieldVectors()) {
      String name = v.getName();
      if (name.toLowerCase(Locale.ROOT).startsWith(SystemColumns.SYSTEM_PREFIX)) {
        throw new SchemaException(name, "is a system column: the store sets it, a batch may not carry it");
      }
      if (spec.column(name) == null) {
        String reserved = SystemColumns.reservation(name);
        if (reserved != null) {
          throw new SchemaException(name, "is a reserved name (" + reserved + "); a batch may not carry it");
        }
        unknown.add(name);
        continue;
      }
      if (byName.put(name, v) != null) {
        throw new SchemaException(name, "the batch has this column twice");
      }
    }
    if (!unknown.isEmpty()) {
      throw new SchemaException(unknown.get(0), "unknown column(s) " + unknown + "; the store's columns are "
          + spec.columnNames());
    }
    return byName;
  }

  // ---------------------------------------------------------------- type compatibility

  private static void checkType(Field f, ColumnSpec c, String path) {
    ArrowType t = f.getType();
    String why = switch (c.type()) {
      case BOOL -> t instanceof ArrowType.Bool ? null : "";
      case INT8, INT16, INT32, INT64 -> integerInto(t, bits(c.type()));
      case FLOAT32 -> floatInto(t, 32);
      case FLOAT64 -> floatInto(t, 64);
      case STRING, LARGE_STRING -> t instanceof ArrowType.Utf8 || t instanceof ArrowType.LargeUtf8 ? null : "";
      case BINARY, LARGE_BINARY -> t instanceof ArrowType.Binary || t instanceof ArrowType.LargeBinary
          || t instanceof ArrowType.FixedSizeBinary ? null : "";
      case DATE -> t instanceof ArrowType.Date ? null : "";
      case TIMESTAMP -> t instanceof ArrowType.Timestamp ? null : "";
      case VECTOR -> {
        if (!isListLike(t)) {
          yield "";
        }
        if (t instanceof ArrowType.FixedSizeList fl && fl.getListSize() != c.dim()) {
          yield " (fixed size " + fl.getListSize() + ", the column's dim is " + c.dim() + ")";
        }
        ArrowType item = f.getChildren().get(0).getType();
        yield item instanceof ArrowType.FloatingPoint fp && fp.getPrecision() != FloatingPointPrecision.DOUBLE ? null
            : " (vector elements must be float32 or float16)";
      }
      case LIST -> {
        if (!isListLike(t)) {
          yield "";
        }
        checkType(f.getChildren().get(0), c.item(), path + "[]");
        yield null;
      }
      case STRUCT -> {
        if (!(t instanceof ArrowType.Struct)) {
          yield "";
        }
        Map<String, Field> children = new HashMap<>();
        for (Field child : f.getChildren()) {
          if (c.field(child.getName()) == null) {
            throw new SchemaException(path + "." + child.getName(), "unknown struct field; the fields of '" + path
                + "' are " + c.fields().stream().map(ColumnSpec::name).toList());
          }
          children.put(child.getName(), child);
        }
        for (ColumnSpec fc : c.fields()) {
          Field child = children.get(fc.name());
          if (child == null) {
            if (!fc.nullable()) {
              throw new SchemaException(path + "." + fc.name(), "the batch lacks this required struct field");
            }
          } else {
            checkType(child, fc, path + "." + fc.name());
          }
        }
        yield null;
      }
    };
    if (why != null) {
      throw new SchemaException(path, "cannot store Arrow type " + t + " in a " + c.type() + " column" + why);
    }
  }

  private static boolean isListLike(ArrowType t) {
    return t instanceof ArrowType.List || t instanceof ArrowType.LargeList || t instanceof ArrowType.FixedSizeList;
  }

  private static int bits(ColumnType t) {
    return switch (t) {
      case INT8 -> 8;
      case INT16 -> 16;
      case INT32 -> 32;
      default -> 64;
    };
  }

  /** Null if an integer of type {@code t} always fits a signed integer of {@code bits}. */
  private static String integerInto(ArrowType t, int bits) {
    if (!(t instanceof ArrowType.Int i)) {
      return "";
    }
    boolean fits = i.getIsSigned() ? i.getBitWidth() <= bits : i.getBitWidth() < bits;
    return fits ? null : " (narrowing: not every " + (i.getIsSigned() ? "" : "unsigned ") + i.getBitWidth()
        + "-bit value fits " + bits + " signed bits)";
  }

  /** Null if every value of type {@code t} is exactly a float of {@code bits}. */
  private static String floatInto(ArrowType t, int bits) {
    if (t instanceof ArrowType.FloatingPoint fp) {
      int w = switch (fp.getPrecision()) {
        case HALF -> 16;
        case SINGLE -> 32;
        case DOUBLE -> 64;
      };
      return w <= bits ? null : " (narrowing: float" + w + " into float" + bits + ")";
    }
    if (t instanceof ArrowType.Int i) {
      int mantissa = bits == 32 ? 24 : 53;
      int needed = i.getIsSigned() ? i.getBitWidth() - 1 : i.getBitWidth();
      return needed <= mantissa ? null : " (narrowing: not every " + i.getBitWidth() + "-bit integer is exact in float"
          + bits + ")";
    }
    return "";
  }

  // ---------------------------------------------------------------- values

  private static void copy(FieldVector src, int i, FieldVector dst, int j, ColumnSpec c, String path, int row) {
    if (src.isNull(i)) {
      ValueWriter.write(dst, j, null, c, path, row);
      return;
    }
    switch (c.type()) {
      case BOOL -> ((BitVector) dst).setSafe(j, ((BitVector) src).get(i));
      case INT8 -> ((TinyIntVector) dst).setSafe(j, (byte) integer(src, i));
      case INT16 -> ((SmallIntVector) dst).setSafe(j, (short) integer(src, i));
      case INT32 -> ((IntVector) dst).setSafe(j, (int) integer(src, i));
      case INT64 -> ((BigIntVector) dst).setSafe(j, integer(src, i));
      case FLOAT32 -> ((Float4Vector) dst).setSafe(j, (float) floating(src, i));
      case FLOAT64 -> ((Float8Vector) dst).setSafe(j, floating(src, i));
      case STRING, LARGE_STRING, BINARY, LARGE_BINARY ->
          ((VariableWidthFieldVector) dst).setSafe(j, bytes(src, i));
      case DATE -> ((DateDayVector) dst).setSafe(j, src instanceof DateMilliVector m
          ? Math.toIntExact(Math.floorDiv(m.get(i), 86_400_000L)) : ((DateDayVector) src).get(i));
      case TIMESTAMP -> ((TimeStampMicroTZVector) dst).setSafe(j, micros((TimeStampVector) src, i, path, row));
      case VECTOR -> copyVector(src, i, (FixedSizeListVector) dst, j, c, path, row);
      case LIST -> copyList(src, i, (ListVector) dst, j, c, path, row);
      case STRUCT -> copyStruct((StructVector) src, i, (StructVector) dst, j, c, path, row);
    }
  }

  private static long integer(FieldVector src, int i) {
    if (src instanceof UInt1Vector u) {
      return UInt1Vector.getNoOverflow(u.getDataBuffer(), i);
    }
    if (src instanceof UInt2Vector u) {
      return u.get(i);
    }
    if (src instanceof UInt4Vector u) {
      return UInt4Vector.getNoOverflow(u.getDataBuffer(), i);
    }
    return ((BaseIntVector) src).getValueAsLong(i);
  }

  private static double floating(FieldVector src, int i) {
    if (src instanceof Float4Vector f) {
      return f.get(i);
    }
    if (src instanceof Float8Vector f) {
      return f.get(i);
    }
    if (src instanceof Float2Vector f) {
      return f.getValueAsFloat(i);
    }
    return integer(src, i);
  }

  private static byte[] bytes(FieldVector src, int i) {
    if (src instanceof VariableWidthFieldVector v) {
      return v.get(i);
    }
    return ((org.apache.arrow.vector.FixedSizeBinaryVector) src).get(i);
  }

  private static long micros(TimeStampVector src, int i, String path, int row) {
    long v = src.get(i);
    var unit = ((ArrowType.Timestamp) src.getField().getType()).getUnit();
    try {
      return switch (unit) {
        case SECOND -> Math.multiplyExact(v, 1_000_000L);
        case MILLISECOND -> Math.multiplyExact(v, 1_000L);
        case MICROSECOND -> v;
        case NANOSECOND -> Math.floorDiv(v, 1_000L);
      };
    } catch (ArithmeticException e) {
      throw new InvalidRecordException(path, row, "timestamp " + v + " " + unit + " is out of range for microseconds");
    }
  }

  /** The element range [start, end) of a list-like slot, and its data vector. */
  private static long[] range(FieldVector src, int i) {
    if (src instanceof ListVector l) {
      return new long[] {l.getElementStartIndex(i), l.getElementEndIndex(i)};
    }
    if (src instanceof LargeListVector l) {
      return new long[] {l.getElementStartIndex(i), l.getElementEndIndex(i)};
    }
    int size = ((FixedSizeListVector) src).getListSize();
    return new long[] {(long) i * size, (long) i * size + size};
  }

  private static FieldVector items(FieldVector src) {
    if (src instanceof ListVector l) {
      return l.getDataVector();
    }
    if (src instanceof LargeListVector l) {
      return l.getDataVector();
    }
    return ((FixedSizeListVector) src).getDataVector();
  }

  private static void copyVector(FieldVector src, int i, FixedSizeListVector dst, int j, ColumnSpec c, String path,
      int row) {
    long[] r = range(src, i);
    long length = r[1] - r[0];
    if (length != c.dim()) {
      throw new InvalidRecordException(path, row, "vector has " + length + " elements, the column's dim is " + c.dim());
    }
    FieldVector items = items(src);
    Float4Vector data = (Float4Vector) dst.getDataVector();
    int base = j * c.dim();
    for (int k = 0; k < c.dim(); k++) {
      int at = Math.toIntExact(r[0] + k);
      if (items.isNull(at)) {
        throw new InvalidRecordException(path, row, "vector element " + k + " is null");
      }
      data.setSafe(base + k, (float) floating(items, at));
    }
    dst.setNotNull(j);
  }

  private static void copyList(FieldVector src, int i, ListVector dst, int j, ColumnSpec c, String path, int row) {
    long[] r = range(src, i);
    FieldVector items = items(src);
    int start = dst.startNewValue(j);
    FieldVector data = dst.getDataVector();
    int n = Math.toIntExact(r[1] - r[0]);
    for (int k = 0; k < n; k++) {
      copy(items, Math.toIntExact(r[0] + k), data, start + k, c.item(), path + "[" + k + "]", row);
    }
    dst.endValue(j, n);
  }

  private static void copyStruct(StructVector src, int i, StructVector dst, int j, ColumnSpec c, String path, int row) {
    dst.setIndexDefined(j);
    for (ColumnSpec f : c.fields()) {
      FieldVector from = (FieldVector) src.getChild(f.name());
      FieldVector to = (FieldVector) dst.getChild(f.name());
      if (from == null) {
        ValueWriter.write(to, j, null, f, path + "." + f.name(), row);
      } else {
        copy(from, i, to, j, f, path + "." + f.name(), row);
      }
    }
  }
}
