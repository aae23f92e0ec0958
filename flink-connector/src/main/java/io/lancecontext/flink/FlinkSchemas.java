package io.lancecontext.flink;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.ColumnOptions;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.RowType;

/**
 * The one mapping between a store's {@link SchemaSpec} and Flink types. A timestamp column is an instant
 * (microseconds, UTC): {@code TIMESTAMP_LTZ(6)}, and a DDL may declare it {@code TIMESTAMP(p)} or
 * {@code TIMESTAMP_LTZ(p)} (read as UTC); a vector column is {@code ARRAY<FLOAT NOT NULL>}; blobs are
 * {@code BYTES}.
 *
 * <p>A store can also be derived from a DDL alone ({@link #toSpec}), with the rules of Spark's
 * {@code SparkSchemas.toSpec} and two per-column table options: {@code vector.<col>.dim} /
 * {@code .metric} and {@code blob.<col>} (core's {@link ColumnOptions}).
 */
public final class FlinkSchemas {
  private FlinkSchemas() {}

  /** Whether {@code key} is one of the per-column options ({@code vector.*}, {@code blob.*}: core's {@link ColumnOptions}). */
  public static boolean isColumnOption(String key) {
    return ColumnOptions.isColumnOption(key);
  }

  /**
   * The store schema a DDL declares, for creating a store from it: the primary key must be exactly
   * {@value SchemaSpec#DEFAULT_KEY}, a {@code STRING}; an {@code ARRAY<FLOAT>} column is a vector when
   * {@code vector.<col>.dim} gives its dimension (metric {@code vector.<col>.metric}, {@code cosine} by
   * default), otherwise a list; {@code BYTES} is binary, or a large_binary blob with {@code blob.<col>};
   * {@code ROW} is a struct, {@code ARRAY} a list (nested as core allows); {@code STRING} is string,
   * {@code TIMESTAMP(p)} and {@code TIMESTAMP_LTZ(p)} are timestamps (UTC); other scalars map one to one.
   * Columns keep their nullability; the spec has no capabilities (a JSON spec in option {@code schema}
   * gives them). Core's rules (reserved names, identifiers, dimensions) then apply.
   *
   * @param primaryKey the DDL's {@code PRIMARY KEY} columns (empty when it has none)
   * @param options the table's options; only the per-column ones are read
   * @throws SchemaException naming the column that does not fit
   * @throws BadOptionException naming the per-column option that does not fit
   */
  public static SchemaSpec toSpec(RowType declared, List<String> primaryKey, Map<String, String> options) {
    ColumnOptions columnOptions = ColumnOptions.of(options, declared.getFieldNames());
    if (primaryKey.isEmpty()) {
      throw new SchemaException("a store created from a DDL needs PRIMARY KEY (" + SchemaSpec.DEFAULT_KEY
          + ") NOT ENFORCED on a STRING column '" + SchemaSpec.DEFAULT_KEY + "' (or option 'schema' naming a preset or "
          + "holding a JSON spec)");
    }
    if (!primaryKey.equals(List.of(SchemaSpec.DEFAULT_KEY))) {
      throw new SchemaException(String.join(",", primaryKey), "the primary key of a store created from a DDL must be "
          + "the single STRING column '" + SchemaSpec.DEFAULT_KEY + "', not " + primaryKey);
    }
    SchemaSpec.Builder b = SchemaSpec.builder();
    for (RowType.RowField f : declared.getFields()) {
      if (f.getName().equals(SchemaSpec.DEFAULT_KEY)) {
        if (f.getType().getTypeRoot() != LogicalTypeRoot.VARCHAR) {
          throw new SchemaException(f.getName(), "the key column must be a STRING, not " + f.getType().asSummaryString());
        }
        b.column(ColumnSpec.string(f.getName()).withNullable(false));
      } else {
        b.column(column(f.getName(), f.getName(), f.getType(), columnOptions));
      }
    }
    return b.build();
  }

  /** A top-level column: a vector or blob as the per-column options say, else as its type maps. */
  private static ColumnSpec column(String name, String path, LogicalType t, ColumnOptions options) {
    boolean floatList = t instanceof ArrayType a && a.getElementType().getTypeRoot() == LogicalTypeRoot.FLOAT;
    Optional<ColumnSpec> vector = options.vector(name, floatList, t.asSummaryString());
    if (vector.isPresent()) {
      return vector.get().withNullable(t.isNullable());
    }
    if (options.blob(name, t.getTypeRoot() == LogicalTypeRoot.VARBINARY, t.asSummaryString())) {
      return ColumnSpec.blob(name, ColumnType.LARGE_BINARY).withNullable(t.isNullable());
    }
    return column(name, path, t);
  }

  private static ColumnSpec column(String name, String path, LogicalType t) {
    ColumnSpec c;
    if (t instanceof ArrayType a) {
      c = ColumnSpec.list(name, column(ColumnSpec.LIST_ITEM_NAME, path + "[]", a.getElementType()));
    } else if (t instanceof RowType row) {
      List<ColumnSpec> fields = new ArrayList<>();
      for (RowType.RowField f : row.getFields()) {
        fields.add(column(f.getName(), path + "." + f.getName(), f.getType()));
      }
      c = ColumnSpec.struct(name, fields.toArray(new ColumnSpec[0]));
    } else {
      c = ColumnSpec.of(name, scalar(path, t));
    }
    return c.withNullable(t.isNullable());
  }

  private static ColumnType scalar(String path, LogicalType t) {
    return switch (t.getTypeRoot()) {
      case BOOLEAN -> ColumnType.BOOL;
      case TINYINT -> ColumnType.INT8;
      case SMALLINT -> ColumnType.INT16;
      case INTEGER -> ColumnType.INT32;
      case BIGINT -> ColumnType.INT64;
      case FLOAT -> ColumnType.FLOAT32;
      case DOUBLE -> ColumnType.FLOAT64;
      case VARCHAR -> ColumnType.STRING;
      case VARBINARY -> ColumnType.BINARY;
      case DATE -> ColumnType.DATE;
      case TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE -> ColumnType.TIMESTAMP;
      case CHAR -> throw new SchemaException(path, "CHAR(n) has no store type: declare it STRING");
      case BINARY -> throw new SchemaException(path, "BINARY(n) has no store type: declare it BYTES");
      default -> throw new SchemaException(path, "Flink type " + t.asSummaryString() + " has no store type (supported: "
          + "BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, BYTES, DATE, TIMESTAMP(p), TIMESTAMP_LTZ(p), "
          + "ARRAY, ROW; ARRAY<FLOAT> with 'vector.<col>.dim' for vectors)");
    };
  }

  /**
   * Checks the table's per-column options against the store's spec (a store that exists, or a preset or JSON
   * spec), core's rule ({@link ColumnOptions#checkAgainst}).
   *
   * @throws BadOptionException naming the option that disagrees
   */
  public static void checkColumnOptions(RowType declared, SchemaSpec spec, Map<String, String> options) {
    ColumnOptions.of(options, declared.getFieldNames()).checkAgainst(spec);
  }

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
