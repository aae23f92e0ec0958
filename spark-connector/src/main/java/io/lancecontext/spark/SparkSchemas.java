package io.lancecontext.spark;

import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A store's columns as Spark types: the one mapping between {@link SchemaSpec} and {@link StructType}.
 * A vector column is {@code array<float>} (not null elements) whose field metadata holds its dimension
 * ({@value #VECTOR_DIM}) and metric ({@value #VECTOR_METRIC}); a blob column is {@code binary}.
 */
public final class SparkSchemas {
  public static final String VECTOR_DIM = "lancecontext.vector.dim";
  public static final String VECTOR_METRIC = "lancecontext.vector.metric";

  private SparkSchemas() {}

  /** The user-facing columns of {@code spec} (no system columns), in spec order. */
  public static StructType toStruct(SchemaSpec spec) {
    return toStruct(spec.columns());
  }

  /** The columns named by {@code columns}, in that order. */
  public static StructType toStruct(SchemaSpec spec, List<String> columns) {
    List<ColumnSpec> cols = new ArrayList<>();
    for (String name : columns) {
      cols.add(spec.column(name));
    }
    return toStruct(cols);
  }

  private static StructType toStruct(List<ColumnSpec> columns) {
    List<StructField> fields = new ArrayList<>();
    for (ColumnSpec c : columns) {
      fields.add(field(c));
    }
    return DataTypes.createStructType(fields);
  }

  static StructField field(ColumnSpec c) {
    Metadata metadata = Metadata.empty();
    if (c.type() == io.lancecontext.core.schema.ColumnType.VECTOR) {
      metadata = new MetadataBuilder().putLong(VECTOR_DIM, c.dim()).putString(VECTOR_METRIC, c.metric().jsonName())
          .build();
    }
    return new StructField(c.name(), type(c), c.nullable(), metadata);
  }

  static DataType type(ColumnSpec c) {
    return switch (c.type()) {
      case BOOL -> DataTypes.BooleanType;
      case INT8 -> DataTypes.ByteType;
      case INT16 -> DataTypes.ShortType;
      case INT32 -> DataTypes.IntegerType;
      case INT64 -> DataTypes.LongType;
      case FLOAT32 -> DataTypes.FloatType;
      case FLOAT64 -> DataTypes.DoubleType;
      case STRING, LARGE_STRING -> DataTypes.StringType;
      case BINARY, LARGE_BINARY -> DataTypes.BinaryType;
      case DATE -> DataTypes.DateType;
      case TIMESTAMP -> DataTypes.TimestampType;
      case LIST -> new ArrayType(type(c.item()), c.item().nullable());
      case STRUCT -> toStruct(c.fields());
      case VECTOR -> new ArrayType(DataTypes.FloatType, false);
    };
  }
}
