package io.lancecontext.core.internal.codec;

import io.lancecontext.core.schema.ColumnSpec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Reads one Arrow slot as a Java value, by the vector's own type: {@link Boolean}, {@link Byte},
 * {@link Short}, {@link Integer}, {@link Long}, {@link Float}, {@link Double}, {@link String},
 * {@code byte[]}, {@link LocalDate}, {@link Instant}, {@link List}, {@link Map} (struct fields by
 * name, in declared order, missing fields as nulls) and {@code float[]} for vectors.
 */
public final class ValueReader {
  private ValueReader() {}

  public static Object read(FieldVector v, int index, ColumnSpec c) {
    if (v.isNull(index)) {
      return null;
    }
    if (v instanceof BitVector b) {
      return b.get(index) != 0;
    } else if (v instanceof TinyIntVector x) {
      return x.get(index);
    } else if (v instanceof SmallIntVector x) {
      return x.get(index);
    } else if (v instanceof IntVector x) {
      return x.get(index);
    } else if (v instanceof BigIntVector x) {
      return x.get(index);
    } else if (v instanceof Float4Vector x) {
      return x.get(index);
    } else if (v instanceof Float8Vector x) {
      return x.get(index);
    } else if (v instanceof VarCharVector x) {
      return new String(x.get(index), StandardCharsets.UTF_8);
    } else if (v instanceof LargeVarCharVector x) {
      return new String(x.get(index), StandardCharsets.UTF_8);
    } else if (v instanceof VarBinaryVector x) {
      return x.get(index);
    } else if (v instanceof LargeVarBinaryVector x) {
      return x.get(index);
    } else if (v instanceof DateDayVector x) {
      return LocalDate.ofEpochDay(x.get(index));
    } else if (v instanceof TimeStampMicroTZVector x) {
      return instant(x.get(index));
    } else if (v instanceof TimeStampMicroVector x) {
      return instant(x.get(index));
    } else if (v instanceof FixedSizeListVector x) {
      return readFixedSizeList(x, index);
    } else if (v instanceof ListVector x) {
      FieldVector data = x.getDataVector();
      int start = x.getElementStartIndex(index);
      int end = x.getElementEndIndex(index);
      ColumnSpec item = c == null ? null : c.item();
      List<Object> out = new ArrayList<>(end - start);
      for (int i = start; i < end; i++) {
        out.add(read(data, i, item));
      }
      return out;
    } else if (v instanceof LargeListVector x) {
      FieldVector data = x.getDataVector();
      long start = x.getElementStartIndex(index);
      long end = x.getElementEndIndex(index);
      ColumnSpec item = c == null ? null : c.item();
      List<Object> out = new ArrayList<>();
      for (long i = start; i < end; i++) {
        out.add(read(data, Math.toIntExact(i), item));
      }
      return out;
    } else if (v instanceof StructVector x) {
      Map<String, Object> out = new LinkedHashMap<>();
      if (c != null) {
        for (ColumnSpec f : c.fields()) {
          FieldVector child = (FieldVector) x.getChild(f.name());
          out.put(f.name(), child == null ? null : read(child, index, f));
        }
      } else {
        for (FieldVector child : x.getChildrenFromFields()) {
          out.put(child.getName(), read(child, index, null));
        }
      }
      return out;
    }
    throw new UnsupportedOperationException("cannot decode Arrow vector type " + v.getField().getType()
        + " of '" + v.getName() + "'");
  }

  private static Object readFixedSizeList(FixedSizeListVector x, int index) {
    int size = x.getListSize();
    FieldVector data = x.getDataVector();
    if (data instanceof Float4Vector f) {
      float[] out = new float[size];
      for (int i = 0; i < size; i++) {
        out[i] = f.isNull(index * size + i) ? Float.NaN : f.get(index * size + i);
      }
      return out;
    }
    List<Object> out = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      out.add(read(data, index * size + i, null));
    }
    return out;
  }

  private static Instant instant(long micros) {
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }
}
