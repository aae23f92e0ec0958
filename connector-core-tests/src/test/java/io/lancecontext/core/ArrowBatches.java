package io.lancecontext.core;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Builds Arrow batches the way engines' Arrow writers do, with Arrow alone (core stays free of
 * engines): rows of Java values by column name, set with each vector's own setter. Timestamps are given
 * as longs in the field's unit, dates as epoch days, strings as {@code String}, binaries as
 * {@code byte[]}, lists as {@link List}, structs as {@link Map}.
 */
final class ArrowBatches {
  private ArrowBatches() {}

  static VectorSchemaRoot batch(Schema schema, List<Map<String, Object>> rows, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    root.allocateNew();
    for (int r = 0; r < rows.size(); r++) {
      for (FieldVector v : root.getFieldVectors()) {
        set(v, r, rows.get(r).get(v.getName()));
      }
    }
    root.setRowCount(rows.size());
    return root;
  }

  static void set(FieldVector v, int i, Object value) {
    if (value == null) {
      if (v instanceof BaseFixedWidthVector f) {
        f.setNull(i);
      } else if (v instanceof VariableWidthFieldVector f) {
        f.setNull(i);
      } else if (v instanceof ListVector l) {
        l.setNull(i);
      } else if (v instanceof LargeListVector l) {
        l.setNull(i);
      } else if (v instanceof FixedSizeListVector l) {
        l.setNull(i);
      } else if (v instanceof StructVector s) {
        s.setNull(i);
      }
      return;
    }
    if (v instanceof TimeStampVector t) {
      t.setSafe(i, ((Number) value).longValue());
    } else if (v instanceof BitVector b) {
      b.setSafe(i, (Boolean) value ? 1 : 0);
    } else if (v instanceof DateDayVector d) {
      d.setSafe(i, ((Number) value).intValue());
    } else if (v instanceof BaseIntVector n) {
      n.setWithPossibleTruncate(i, ((Number) value).longValue());
    } else if (v instanceof Float4Vector f) {
      f.setSafe(i, ((Number) value).floatValue());
    } else if (v instanceof Float8Vector f) {
      f.setSafe(i, ((Number) value).doubleValue());
    } else if (v instanceof VariableWidthFieldVector s) {
      s.setSafe(i, value instanceof String str ? str.getBytes(StandardCharsets.UTF_8) : (byte[]) value);
    } else if (v instanceof ListVector l) {
      List<?> items = (List<?>) value;
      int start = l.startNewValue(i);
      for (int k = 0; k < items.size(); k++) {
        set(l.getDataVector(), start + k, items.get(k));
      }
      l.endValue(i, items.size());
    } else if (v instanceof LargeListVector l) {
      List<?> items = (List<?>) value;
      long start = l.startNewValue(i);
      for (int k = 0; k < items.size(); k++) {
        set(l.getDataVector(), (int) start + k, items.get(k));
      }
      l.endValue(i, items.size());
    } else if (v instanceof FixedSizeListVector l) {
      List<?> items = (List<?>) value;
      l.setNotNull(i);
      for (int k = 0; k < items.size(); k++) {
        set(l.getDataVector(), i * l.getListSize() + k, items.get(k));
      }
    } else if (v instanceof StructVector s) {
      Map<?, ?> m = (Map<?, ?>) value;
      s.setIndexDefined(i);
      for (FieldVector child : s.getChildrenFromFields()) {
        set(child, i, m.get(child.getName()));
      }
    } else {
      throw new IllegalArgumentException("no setter for " + v.getClass().getSimpleName());
    }
  }

  // ---------------------------------------------------------------- fields as engines write them

  static Field utf8(String name) {
    return Field.nullable(name, ArrowType.Utf8.INSTANCE);
  }

  static Field largeUtf8(String name) {
    return Field.nullable(name, ArrowType.LargeUtf8.INSTANCE);
  }

  static Field binary(String name) {
    return Field.nullable(name, ArrowType.Binary.INSTANCE);
  }

  static Field largeBinary(String name) {
    return Field.nullable(name, ArrowType.LargeBinary.INSTANCE);
  }

  static Field int64(String name) {
    return Field.nullable(name, new ArrowType.Int(64, true));
  }

  static Field int32(String name) {
    return Field.nullable(name, new ArrowType.Int(32, true));
  }

  static Field int16(String name) {
    return Field.nullable(name, new ArrowType.Int(16, true));
  }

  static Field float64(String name) {
    return Field.nullable(name, new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE));
  }

  static Field float32(String name) {
    return Field.nullable(name, new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE));
  }

  static Field bool(String name) {
    return Field.nullable(name, ArrowType.Bool.INSTANCE);
  }

  static Field date(String name) {
    return Field.nullable(name, new ArrowType.Date(org.apache.arrow.vector.types.DateUnit.DAY));
  }

  static Field timestamp(String name, TimeUnit unit, String zone) {
    return Field.nullable(name, new ArrowType.Timestamp(unit, zone));
  }

  static Field list(String name, Field item) {
    return new Field(name, FieldType.nullable(ArrowType.List.INSTANCE), List.of(item));
  }

  static Field largeList(String name, Field item) {
    return new Field(name, FieldType.nullable(ArrowType.LargeList.INSTANCE), List.of(item));
  }

  static Field fixedList(String name, int size, Field item) {
    return new Field(name, FieldType.nullable(new ArrowType.FixedSizeList(size)), List.of(item));
  }

  static Field struct(String name, Field... fields) {
    return new Field(name, FieldType.nullable(ArrowType.Struct.INSTANCE), List.of(fields));
  }
}
