package io.lancecontext.core.internal.codec;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Writes one Java value into an Arrow vector slot, checking it against its {@link ColumnSpec}.
 *
 * <p>Accepted values: bool: {@link Boolean}; int8..int64: {@link Byte}, {@link Short}, {@link Integer},
 * {@link Long} (range-checked); float32/float64: any of those or {@link Float}, {@link Double};
 * string/large_string: {@link CharSequence} (well-formed UTF-16: an unpaired surrogate is refused); binary/large_binary: {@code byte[]} or {@link ByteBuffer};
 * date: {@link LocalDate}; timestamp: {@link Instant}, {@link OffsetDateTime}, {@link ZonedDateTime}
 * (stored as UTC microseconds); list: {@link List} (or a primitive array of a numeric item type);
 * struct: {@link Map} by field name; vector: {@code float[]}, {@code double[]} or a {@link List} of
 * numbers, of exactly {@code dim} elements.
 */
final class ValueWriter {
  private ValueWriter() {}

  static void write(FieldVector v, int index, Object value, ColumnSpec c, String path, int row) {
    if (value == null) {
      if (!c.nullable()) {
        throw new InvalidRecordException(path, row, "null in a non-nullable " + c.type() + " column");
      }
      v.setNull(index);
      if (c.type() == ColumnType.STRUCT) {
        // Lance checks non-nullable children even under a null parent: give them placeholder values
        fillNonNullableChildren((StructVector) v, index, c);
      }
      return;
    }
    switch (c.type()) {
      case BOOL -> ((BitVector) v).setSafe(index, bool(value, c, path, row) ? 1 : 0);
      case INT8 -> ((TinyIntVector) v).setSafe(index, (byte) integer(value, Byte.MIN_VALUE, Byte.MAX_VALUE, c, path, row));
      case INT16 -> ((SmallIntVector) v).setSafe(index, (short) integer(value, Short.MIN_VALUE, Short.MAX_VALUE, c, path, row));
      case INT32 -> ((IntVector) v).setSafe(index, (int) integer(value, Integer.MIN_VALUE, Integer.MAX_VALUE, c, path, row));
      case INT64 -> ((BigIntVector) v).setSafe(index, integer(value, Long.MIN_VALUE, Long.MAX_VALUE, c, path, row));
      case FLOAT32 -> ((Float4Vector) v).setSafe(index, (float) floating(value, c, path, row));
      case FLOAT64 -> ((Float8Vector) v).setSafe(index, floating(value, c, path, row));
      case STRING -> ((VarCharVector) v).setSafe(index, string(value, c, path, row));
      case LARGE_STRING -> ((LargeVarCharVector) v).setSafe(index, string(value, c, path, row));
      case BINARY -> ((VarBinaryVector) v).setSafe(index, bytes(value, c, path, row));
      case LARGE_BINARY -> ((LargeVarBinaryVector) v).setSafe(index, bytes(value, c, path, row));
      case DATE -> {
        if (!(value instanceof LocalDate d)) {
          throw wrongType(value, c, path, row, "java.time.LocalDate");
        }
        ((DateDayVector) v).setSafe(index, Math.toIntExact(d.toEpochDay()));
      }
      case TIMESTAMP -> ((TimeStampMicroTZVector) v).setSafe(index, micros(value, c, path, row));
      case LIST -> writeList((ListVector) v, index, value, c, path, row);
      case STRUCT -> writeStruct((StructVector) v, index, value, c, path, row);
      case VECTOR -> writeVector((FixedSizeListVector) v, index, value, c, path, row);
      default -> throw new IllegalStateException("unhandled type " + c.type());
    }
  }

  private static void fillNonNullableChildren(StructVector v, int index, ColumnSpec c) {
    for (ColumnSpec f : c.fields()) {
      if (!f.nullable()) {
        writePlaceholder((FieldVector) v.getChild(f.name()), index, f);
      }
    }
  }

  /** Writes the zero value of a non-nullable field that sits under a null struct (never read back). */
  private static void writePlaceholder(FieldVector v, int index, ColumnSpec c) {
    switch (c.type()) {
      case BOOL -> ((BitVector) v).setSafe(index, 0);
      case INT8 -> ((TinyIntVector) v).setSafe(index, 0);
      case INT16 -> ((SmallIntVector) v).setSafe(index, 0);
      case INT32 -> ((IntVector) v).setSafe(index, 0);
      case INT64 -> ((BigIntVector) v).setSafe(index, 0);
      case FLOAT32 -> ((Float4Vector) v).setSafe(index, 0);
      case FLOAT64 -> ((Float8Vector) v).setSafe(index, 0);
      case STRING, LARGE_STRING, BINARY, LARGE_BINARY -> ((VariableWidthFieldVector) v).setSafe(index, new byte[0]);
      case DATE -> ((DateDayVector) v).setSafe(index, 0);
      case TIMESTAMP -> ((TimeStampMicroTZVector) v).setSafe(index, 0);
      case LIST -> {
        ListVector list = (ListVector) v;
        list.startNewValue(index);
        list.endValue(index, 0);
      }
      case STRUCT -> {
        ((StructVector) v).setIndexDefined(index);
        fillNonNullableChildren((StructVector) v, index, c);
      }
      case VECTOR -> throw new IllegalStateException("vectors are top-level columns");
      default -> throw new IllegalStateException("unhandled type " + c.type());
    }
  }

  private static boolean bool(Object value, ColumnSpec c, String path, int row) {
    if (value instanceof Boolean b) {
      return b;
    }
    throw wrongType(value, c, path, row, "java.lang.Boolean");
  }

  private static long integer(Object value, long min, long max, ColumnSpec c, String path, int row) {
    if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
      long l = ((Number) value).longValue();
      if (l < min || l > max) {
        throw new InvalidRecordException(path, row, "value " + l + " is out of range for " + c.type());
      }
      return l;
    }
    throw wrongType(value, c, path, row, "an integral number (Byte, Short, Integer, Long)");
  }

  private static double floating(Object value, ColumnSpec c, String path, int row) {
    if (value instanceof Double || value instanceof Float || value instanceof Long || value instanceof Integer
        || value instanceof Short || value instanceof Byte) {
      return ((Number) value).doubleValue();
    }
    throw wrongType(value, c, path, row, "a number (Float, Double or an integral type)");
  }

  private static byte[] string(Object value, ColumnSpec c, String path, int row) {
    if (value instanceof CharSequence s) {
      String text = s.toString();
      int bad = Text.unpairedSurrogate(text);
      if (bad >= 0) {
        // UTF-8 cannot hold it: the encoder would store '?' and the value would not round-trip
        throw new InvalidRecordException(path, row, "the string has an unpaired surrogate (U+"
            + Integer.toHexString(text.charAt(bad)).toUpperCase(java.util.Locale.ROOT) + ") at index " + bad
            + "; it is not valid Unicode text");
      }
      return text.getBytes(StandardCharsets.UTF_8);
    }
    throw wrongType(value, c, path, row, "java.lang.String");
  }


  private static byte[] bytes(Object value, ColumnSpec c, String path, int row) {
    if (value instanceof byte[] b) {
      return b;
    }
    if (value instanceof ByteBuffer buf) {
      ByteBuffer d = buf.duplicate();
      byte[] b = new byte[d.remaining()];
      d.get(b);
      return b;
    }
    throw wrongType(value, c, path, row, "byte[] or java.nio.ByteBuffer");
  }

  private static long micros(Object value, ColumnSpec c, String path, int row) {
    Instant i;
    if (value instanceof Instant x) {
      i = x;
    } else if (value instanceof OffsetDateTime o) {
      i = o.toInstant();
    } else if (value instanceof ZonedDateTime z) {
      i = z.toInstant();
    } else {
      throw wrongType(value, c, path, row, "java.time.Instant, OffsetDateTime or ZonedDateTime");
    }
    try {
      return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1_000);
    } catch (ArithmeticException e) {
      throw new InvalidRecordException(path, row, "timestamp " + i + " is out of range for microseconds");
    }
  }

  private static void writeList(ListVector v, int index, Object value, ColumnSpec c, String path, int row) {
    List<?> items = asList(value, c, path, row);
    int start = v.startNewValue(index);
    FieldVector data = v.getDataVector();
    ColumnSpec item = c.item();
    for (int i = 0; i < items.size(); i++) {
      write(data, start + i, items.get(i), item, path + "[" + i + "]", row);
    }
    v.endValue(index, items.size());
  }

  private static List<?> asList(Object value, ColumnSpec c, String path, int row) {
    if (value instanceof List<?> l) {
      return l;
    }
    if (value instanceof int[] a) {
      return java.util.Arrays.stream(a).boxed().toList();
    }
    if (value instanceof long[] a) {
      return java.util.Arrays.stream(a).boxed().toList();
    }
    if (value instanceof double[] a) {
      return java.util.Arrays.stream(a).boxed().toList();
    }
    if (value instanceof float[] a) {
      Float[] boxed = new Float[a.length];
      for (int i = 0; i < a.length; i++) {
        boxed[i] = a[i];
      }
      return List.of(boxed);
    }
    throw wrongType(value, c, path, row, "a java.util.List");
  }

  private static void writeStruct(StructVector v, int index, Object value, ColumnSpec c, String path, int row) {
    if (!(value instanceof Map<?, ?> m)) {
      throw wrongType(value, c, path, row, "a java.util.Map of field name to value");
    }
    for (Object k : m.keySet()) {
      if (!(k instanceof String name) || c.field(name) == null) {
        throw new InvalidRecordException(path + "." + k, row, "unknown struct field; the fields of '" + path + "' are "
            + c.fields().stream().map(ColumnSpec::name).toList());
      }
    }
    v.setIndexDefined(index);
    for (ColumnSpec f : c.fields()) {
      write((FieldVector) v.getChild(f.name()), index, m.get(f.name()), f, path + "." + f.name(), row);
    }
  }

  private static void writeVector(FixedSizeListVector v, int index, Object value, ColumnSpec c, String path, int row) {
    Float4Vector data = (Float4Vector) v.getDataVector();
    int dim = c.dim();
    int base = index * dim;
    if (value instanceof float[] a) {
      checkLength(a.length, dim, path, row);
      v.setNotNull(index);
      reserve(data, base + dim);  // once per vector, not a capacity check per element
      for (int i = 0; i < dim; i++) {
        data.set(base + i, a[i]);
      }
    } else if (value instanceof double[] a) {
      checkLength(a.length, dim, path, row);
      v.setNotNull(index);
      reserve(data, base + dim);
      for (int i = 0; i < dim; i++) {
        data.set(base + i, (float) a[i]);
      }
    } else if (value instanceof List<?> l) {
      checkLength(l.size(), dim, path, row);
      for (int i = 0; i < dim; i++) {
        if (!(l.get(i) instanceof Number n)) {
          throw new InvalidRecordException(path, row, "vector element " + i + " is "
              + (l.get(i) == null ? "null" : "a " + l.get(i).getClass().getName()) + ", expected a number");
        }
        data.setSafe(base + i, n.floatValue());
      }
      v.setNotNull(index);
    } else {
      throw wrongType(value, c, path, row, "float[], double[] or a List of numbers");
    }
  }

  /** Grows {@code data} until it holds at least {@code slots} values. */
  private static void reserve(Float4Vector data, int slots) {
    while (data.getValueCapacity() < slots) {
      data.reAlloc();
    }
  }

  private static void checkLength(int length, int dim, String path, int row) {
    if (length != dim) {
      throw new InvalidRecordException(path, row, "vector has " + length + " elements, the column's dim is " + dim);
    }
  }

  private static InvalidRecordException wrongType(Object value, ColumnSpec c, String path, int row, String expected) {
    return new InvalidRecordException(path, row, "expected " + expected + " for a " + c.type() + " column, got "
        + value.getClass().getName());
  }

  /** About how many bytes {@code value} takes encoded (a row buffer's batching estimate). */
  static long estimate(Object value) {
    if (value instanceof CharSequence s) {
      return s.length();
    } else if (value instanceof byte[] a) {
      return a.length;
    } else if (value instanceof float[] f) {
      return 4L * f.length;
    } else if (value instanceof java.nio.ByteBuffer b) {
      return b.remaining();
    } else if (value instanceof java.util.List<?> l) {
      return 8L * l.size();
    }
    return 8;
  }
}
