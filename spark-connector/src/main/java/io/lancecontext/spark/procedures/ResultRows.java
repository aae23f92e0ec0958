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
 * one column per record component, booleans and numbers typed, everything else as text.
 */
final class ResultRows {
  private ResultRows() {}

  static LocalScan of(Record result) {
    RecordComponent[] components = result.getClass().getRecordComponents();
    List<StructField> fields = new ArrayList<>();
    Object[] values = new Object[components.length];
    for (int i = 0; i < components.length; i++) {
      RecordComponent c = components[i];
      Object v;
      try {
        v = c.getAccessor().invoke(result);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(e);
      }
      DataType type;
      if (c.getType() == boolean.class) {
        type = DataTypes.BooleanType;
      } else if (c.getType() == int.class) {
        type = DataTypes.IntegerType;
      } else if (c.getType() == long.class) {
        type = DataTypes.LongType;
      } else {
        type = DataTypes.StringType;
        v = v == null ? null : UTF8String.fromString(v.toString());
      }
      fields.add(DataTypes.createStructField(snake(c.getName()), type, true));
      values[i] = v;
    }
    StructType schema = DataTypes.createStructType(fields);
    InternalRow row = new GenericInternalRow(values);
    return new LocalScan() {
      @Override
      public InternalRow[] rows() {
        return new InternalRow[] {row};
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
