package io.lancecontext.spark.procedures;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A core result record ({@code MergeResult}, {@code FlushResult}, ...) as one row of a procedure's output:
 * one column per record component, booleans and numbers typed, everything else as text (several results:
 * one row each).
 */
final class ResultRows {
  private ResultRows() {}

  static LocalScan of(Record result) {
    return of(List.of(result), result.getClass());
  }

  /** Rows of {@code results}, all of record class {@code type} (its components are the columns, also for none). */
  static LocalScan of(List<? extends Record> results, Class<? extends Record> type) {
    RecordComponent[] components = type.getRecordComponents();
    List<StructField> fields = new ArrayList<>();
    for (RecordComponent c : components) {
      DataType t;
      if (c.getType() == boolean.class) {
        t = DataTypes.BooleanType;
      } else if (c.getType() == int.class) {
        t = DataTypes.IntegerType;
      } else if (c.getType() == long.class) {
        t = DataTypes.LongType;
      } else {
        t = DataTypes.StringType;
      }
      fields.add(DataTypes.createStructField(snake(c.getName()), t, true));
    }
    StructType schema = DataTypes.createStructType(fields);
    InternalRow[] rows = new InternalRow[results.size()];
    for (int r = 0; r < rows.length; r++) {
      Object[] values = new Object[components.length];
      for (int i = 0; i < components.length; i++) {
        Object v;
        try {
          v = components[i].getAccessor().invoke(results.get(r));
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException(e);
        }
        values[i] = schema.fields()[i].dataType() == DataTypes.StringType && v != null
            ? UTF8String.fromString(v.toString()) : v;
      }
      rows[r] = new GenericInternalRow(values);
    }
    return of(schema, rows);
  }

  /** {@code rows} of {@code schema} as a procedure's result. */
  static LocalScan of(StructType schema, InternalRow[] rows) {
    return new LocalScan() {
      @Override
      public InternalRow[] rows() {
        return rows;
      }

      @Override
      public StructType readSchema() {
        return schema;
      }
    };
  }

  private static String snake(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
  }
}
