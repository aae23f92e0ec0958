package io.lancecontext.flink;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;

/**
 * The one mapping between a store's {@link SchemaSpec} and Flink types. A timestamp column is an instant
 * (microseconds, UTC): {@code TIMESTAMP_LTZ(6)}, and a DDL may declare it {@code TIMESTAMP(p)} or
 * {@code TIMESTAMP_LTZ(p)} (read as UTC); a vector column is {@code ARRAY<FLOAT NOT NULL>}; blobs are
 * {@code BYTES}.
 */
public final class FlinkSchemas {
  private FlinkSchemas() {}

  /** The store's columns as a Flink row type. */
  public static DataType toDataType(SchemaSpec spec) {
    List<DataTypes.Field> fields = new ArrayList<>();
    for (ColumnSpec c : spec.columns()) {
      fields.add(DataTypes.FIELD(c.name(), type(c)));
    }
    return DataTypes.ROW(fields).notNull();
  }

  static DataType type(ColumnSpec c) {
    DataType t = switch (c.type()) {
      case BOOL -> DataTypes.BOOLEAN();
      case INT8 -> DataTypes.TINYINT();
      case INT16 -> DataTypes.SMALLINT();
      case INT32 -> DataTypes.INT();
      case INT64 -> DataTypes.BIGINT();
      case FLOAT32 -> DataTypes.FLOAT();
      case FLOAT64 -> DataTypes.DOUBLE();
      case STRING, LARGE_STRING -> DataTypes.STRING();
      case BINARY, LARGE_BINARY -> DataTypes.BYTES();
      case DATE -> DataTypes.DATE();
      case TIMESTAMP -> DataTypes.TIMESTAMP_LTZ(6);
      case LIST -> DataTypes.ARRAY(type(c.item()));
      case STRUCT -> {
        List<DataTypes.Field> fields = new ArrayList<>();
        for (ColumnSpec f : c.fields()) {
          fields.add(DataTypes.FIELD(f.name(), type(f)));
        }
        yield DataTypes.ROW(fields);
      }
      case VECTOR -> DataTypes.ARRAY(DataTypes.FLOAT().notNull());
    };
    return c.nullable() ? t.nullable() : t.notNull();
  }

  /**
   * Checks that every column of {@code declared} (a DDL's physical row type) is a column of the store with a
   * compatible type; the DDL may list a subset of the store's columns, in any order.
   *
   * @throws SchemaException naming the first column that does not fit
   */
  public static void checkDeclared(RowType declared, SchemaSpec spec) {
    for (RowType.RowField f : declared.getFields()) {
      ColumnSpec c = spec.column(f.getName());
      if (c == null) {
        throw new SchemaException("column '" + f.getName() + "' is not a column of the store; its columns are "
            + spec.columnNames());
      }
      if (!compatible(f.getType(), c)) {
        throw new SchemaException("column '" + f.getName() + "' is declared " + f.getType().asSummaryString()
            + " but the store holds " + type(c).getLogicalType().asSummaryString());
      }
    }
  }

  static boolean compatible(LogicalType declared, ColumnSpec c) {
    LogicalType stored = type(c).getLogicalType();
    LogicalTypeRoot d = declared.getTypeRoot();
    if (c.type() == io.lancecontext.core.schema.ColumnType.TIMESTAMP) {
      return d == LogicalTypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE || d == LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE;
    }
    if (d != stored.getTypeRoot()) {
      return false;
    }
    return switch (c.type()) {
      case LIST -> compatible(declared.getChildren().get(0), c.item());
      case VECTOR -> declared.getChildren().get(0).getTypeRoot() == LogicalTypeRoot.FLOAT;
      case STRUCT -> {
        RowType row = (RowType) declared;
        for (RowType.RowField f : row.getFields()) {
          ColumnSpec child = c.fields().stream().filter(x -> x.name().equals(f.getName())).findFirst().orElse(null);
          if (child == null || !compatible(f.getType(), child)) {
            yield false;
          }
        }
        yield true;
      }
      default -> true;
    };
  }
}
