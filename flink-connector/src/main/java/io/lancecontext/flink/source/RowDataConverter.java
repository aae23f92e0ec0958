package io.lancecontext.flink.source;

import java.util.List;
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
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;

/**
 * Converts rows of core's Arrow batches (the dataset layout) into Flink {@link RowData} of a declared row
 * type, column by column, with the converters resolved once per batch layout.
 */
public final class RowDataConverter {
  @FunctionalInterface
  interface Getter {
    Object get(int row);
  }

  private final RowType type;

  public RowDataConverter(RowType type) {
    this.type = type;
  }

  /** The converters for {@code root}'s vectors, in the declared field order. */
  public Getter[] bind(VectorSchemaRoot root) {
    List<RowType.RowField> fields = type.getFields();
    Getter[] getters = new Getter[fields.size()];
    for (int i = 0; i < getters.length; i++) {
      getters[i] = getter(root.getVector(fields.get(i).getName()), fields.get(i).getType());
    }
    return getters;
  }

  public static RowData row(Getter[] getters, int row) {
    GenericRowData out = new GenericRowData(getters.length);
    for (int i = 0; i < getters.length; i++) {
      out.setField(i, getters[i].get(row));
    }
    return out;
  }

  static Getter getter(FieldVector v, LogicalType t) {
    Getter value = value(v, t);
    return row -> v.isNull(row) ? null : value.get(row);
  }

  private static Getter value(FieldVector v, LogicalType t) {
    if (v instanceof BitVector b) {
      return row -> b.get(row) != 0;
    } else if (v instanceof TinyIntVector x) {
      return x::get;
    } else if (v instanceof SmallIntVector x) {
      return x::get;
    } else if (v instanceof IntVector x) {
      return x::get;
    } else if (v instanceof BigIntVector x) {
      return x::get;
    } else if (v instanceof Float4Vector x) {
      return x::get;
    } else if (v instanceof Float8Vector x) {
      return x::get;
    } else if (v instanceof VarCharVector x) {
      return row -> StringData.fromBytes(x.get(row));
    } else if (v instanceof LargeVarCharVector x) {
      return row -> StringData.fromBytes(x.get(row));
    } else if (v instanceof VarBinaryVector x) {
      return x::get;
    } else if (v instanceof LargeVarBinaryVector x) {
      return x::get;
    } else if (v instanceof DateDayVector x) {
      return x::get;  // Flink's internal DATE is days since the epoch
    } else if (v instanceof TimeStampVector x) {
      return row -> {
        long micros = x.get(row);
        return TimestampData.fromEpochMillis(Math.floorDiv(micros, 1000L), (int) Math.floorMod(micros, 1000L) * 1000);
      };
    } else if (v instanceof FixedSizeListVector x) {
      Float4Vector values = (Float4Vector) x.getDataVector();
      int dim = x.getListSize();
      return row -> {
        Float[] out = new Float[dim];
        for (int i = 0; i < dim; i++) {
          out[i] = values.get(row * dim + i);
        }
        return new GenericArrayData(out);
      };
    } else if (v instanceof ListVector x) {
      FieldVector items = x.getDataVector();
      Getter item = getter(items, ((ArrayType) t).getElementType());
      return row -> {
        int start = x.getElementStartIndex(row);
        int end = x.getElementEndIndex(row);
        Object[] out = new Object[end - start];
        for (int i = start; i < end; i++) {
          out[i - start] = item.get(i);
        }
        return new GenericArrayData(out);
      };
    } else if (v instanceof StructVector x) {
      RowType rowType = (RowType) t;
      Getter[] children = new Getter[rowType.getFieldCount()];
      for (int i = 0; i < children.length; i++) {
        RowType.RowField f = rowType.getFields().get(i);
        children[i] = getter((FieldVector) x.getChild(f.getName()), f.getType());
      }
      return row -> row(children, row);
    }
    throw new IllegalArgumentException("column '" + v.getName() + "' has Arrow type " + v.getField().getType()
        + ", which has no Flink mapping");
  }
}
