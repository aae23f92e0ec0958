package io.lancecontext.spark;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.ColumnOptions;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.VectorMetric;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
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

  /**
   * The columns of an incremental read ({@code option("since", ...)}): {@code columns} of {@code spec}, all
   * nullable (a deleted key's row holds only the key), and {@link ScanSpec#DELETED}, a non-null boolean, where
   * {@code columns} names it.
   */
  public static StructType toIncrementalStruct(SchemaSpec spec, List<String> columns) {
    List<StructField> fields = new ArrayList<>();
    for (String name : columns) {
      if (name.equals(ScanSpec.DELETED)) {
        fields.add(new StructField(name, DataTypes.BooleanType, false, Metadata.empty()));
      } else {
        StructField f = field(spec.column(name));
        fields.add(new StructField(f.name(), f.dataType(), true, f.metadata()));
      }
    }
    return DataTypes.createStructType(fields);
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
    if (c.type() == ColumnType.VECTOR) {
      metadata = new MetadataBuilder().putLong(VECTOR_DIM, c.dim()).putString(VECTOR_METRIC, c.metric().jsonName())
          .build();
    }
    return new StructField(c.name(), type(c), c.nullable(), metadata);
  }

  /**
   * A store schema derived from Spark columns (a DataFrame or a {@code CREATE TABLE}): the key column
   * {@value SchemaSpec#DEFAULT_KEY} must be a string; a top-level {@code array<float>} column is a vector when
   * {@code options} gives its dimension ({@code vector.<col>.dim}, metric {@code vector.<col>.metric}), otherwise a
   * list; a top-level {@code binary} column is a blob with {@code blob.<col>} = true; other types map one to one
   * (docs/spark.md). Columns keep their nullability. The per-column options are core's ({@link ColumnOptions}):
   * one naming no column or no known property fails.
   *
   * @throws SchemaException naming the column that has no store type
   * @throws io.lancecontext.core.error.BadOptionException naming a per-column option that does not fit
   */
  public static SchemaSpec toSpec(StructType struct, Map<String, String> options) {
    ColumnOptions columnOptions = ColumnOptions.of(options, List.of(struct.fieldNames()));
    SchemaSpec.Builder b = SchemaSpec.builder();
    boolean key = false;
    for (StructField f : struct.fields()) {
      if (f.name().equals(SchemaSpec.DEFAULT_KEY)) {
        if (!(f.dataType() instanceof StringType)) {
          throw new SchemaException("column '" + f.name() + "': the key column must be a string, not "
              + f.dataType().simpleString());
        }
        b.column(ColumnSpec.string(f.name()).withNullable(false));
        key = true;
      } else {
        b.column(topLevel(f, columnOptions));
      }
    }
    if (!key) {
      throw new SchemaException("column '" + SchemaSpec.DEFAULT_KEY + "': a store needs a string key column named '"
          + SchemaSpec.DEFAULT_KEY + "'");
    }
    return b.build();
  }

  /** A top-level column: a vector or blob as the per-column options say, else as its type maps. */
  private static ColumnSpec topLevel(StructField f, ColumnOptions options) {
    DataType t = f.dataType();
    boolean floatList = t instanceof ArrayType a && a.elementType() instanceof FloatType;
    java.util.Optional<ColumnSpec> vector = options.vector(f.name(), floatList, t.simpleString());
    if (vector.isPresent()) {
      return vector.get().withNullable(f.nullable());
    }
    if (options.blob(f.name(), t instanceof org.apache.spark.sql.types.BinaryType, t.simpleString())) {
      return ColumnSpec.blob(f.name(), ColumnType.LARGE_BINARY).withNullable(f.nullable());
    }
    return column(f.name(), t, f.nullable());
  }

  private static ColumnSpec column(String name, DataType t, boolean nullable) {
    ColumnSpec c;
    if (t instanceof ArrayType a) {
      c = ColumnSpec.list(name, column(ColumnSpec.LIST_ITEM_NAME, a.elementType(), a.containsNull()));
    } else if (t instanceof StructType s) {
      List<ColumnSpec> fields = new ArrayList<>();
      for (StructField f : s.fields()) {
        fields.add(column(f.name(), f.dataType(), f.nullable()));
      }
      c = ColumnSpec.struct(name, fields.toArray(new ColumnSpec[0]));
    } else {
      c = ColumnSpec.of(name, scalar(name, t));
    }
    return c.withNullable(nullable);
  }

  private static ColumnType scalar(String name, DataType t) {
    if (t instanceof BooleanType) {
      return ColumnType.BOOL;
    } else if (t instanceof ByteType) {
      return ColumnType.INT8;
    } else if (t instanceof ShortType) {
      return ColumnType.INT16;
    } else if (t instanceof IntegerType) {
      return ColumnType.INT32;
    } else if (t instanceof LongType) {
      return ColumnType.INT64;
    } else if (t instanceof FloatType) {
      return ColumnType.FLOAT32;
    } else if (t instanceof DoubleType) {
      return ColumnType.FLOAT64;
    } else if (t instanceof StringType) {
      return ColumnType.STRING;
    } else if (t instanceof BinaryType) {
      return ColumnType.BINARY;
    } else if (t instanceof DateType) {
      return ColumnType.DATE;
    } else if (t instanceof TimestampType || t instanceof TimestampNTZType) {
      return ColumnType.TIMESTAMP;
    }
    throw new SchemaException("column '" + name + "': Spark type " + t.simpleString() + " has no store type (supported: "
        + ColumnType.supportedNames() + ")");
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
      // elements nullable so that Spark adds no per-element check to writes; SparkRowWriter refuses a null element
      case VECTOR -> new ArrayType(DataTypes.FloatType, true);
    };
  }
}
