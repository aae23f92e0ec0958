package io.lancecontext.flink;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.VectorMetric;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * {@code SparkSchemas.toSpec} and two per-column table options: {@value #VECTOR_PREFIX}{@code <col>.dim} /
 * {@code .metric} and {@value #BLOB_PREFIX}{@code <col>}.
 */
public final class FlinkSchemas {
  /** Prefix of the per-column vector options {@code vector.<col>.dim} and {@code vector.<col>.metric}. */
  public static final String VECTOR_PREFIX = "vector.";
  /** Prefix of the per-column blob option {@code blob.<col>} ({@code true}: a Lance blob column). */
  public static final String BLOB_PREFIX = "blob.";

  private static final Pattern VECTOR_OPTION = Pattern.compile("vector\\.([^.]+)\\.(dim|metric)");

  private FlinkSchemas() {}

  /** {@code vector.<col>.dim}: the dimension of vector column {@code col} when a store is derived from a DDL. */
  public static String vectorDimOption(String column) {
    return VECTOR_PREFIX + column + ".dim";
  }

  /** {@code vector.<col>.metric}: its metric, {@code cosine} (default), {@code l2} or {@code dot}. */
  public static String vectorMetricOption(String column) {
    return VECTOR_PREFIX + column + ".metric";
  }

  /** {@code blob.<col>}: {@code true} makes {@code BYTES} column {@code col} a blob column (large_binary, blob encoding). */
  public static String blobOption(String column) {
    return BLOB_PREFIX + column;
  }

  /** Whether {@code key} is one of the per-column options ({@code vector.*}, {@code blob.*}). */
  public static boolean isColumnOption(String key) {
    return key.startsWith(VECTOR_PREFIX) || key.startsWith(BLOB_PREFIX);
  }

  /**
   * The store schema a DDL declares, for creating a store from it: the primary key must be exactly
   * {@value SchemaSpec#DEFAULT_KEY}, a {@code STRING}; an {@code ARRAY<FLOAT>} column is a vector when
   * {@link #vectorDimOption} gives its dimension (metric {@link #vectorMetricOption}, {@code cosine} by
   * default), otherwise a list; {@code BYTES} is binary, or a large_binary blob with {@link #blobOption};
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
    checkColumnOptionNames(declared, options);
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
        b.column(column(f.getName(), f.getName(), f.getType(), true, options));
      }
    }
    return b.build();
  }

  private static ColumnSpec column(String name, String path, LogicalType t, boolean topLevel, Map<String, String> options) {
    ColumnSpec c;
    String dim = topLevel ? options.get(vectorDimOption(name)) : null;
    boolean blob = topLevel && isTrue(options, blobOption(name));
    if (dim != null) {
      if (!(t instanceof ArrayType a) || a.getElementType().getTypeRoot() != LogicalTypeRoot.FLOAT) {
        throw new BadOptionException(vectorDimOption(name), "column '" + name + "' is " + t.asSummaryString()
            + ", not ARRAY<FLOAT>: only ARRAY<FLOAT> columns can be vectors");
      }
      int d;
      try {
        d = Integer.parseInt(dim.strip());
      } catch (NumberFormatException e) {
        throw new BadOptionException(vectorDimOption(name), "must be a positive integer, not '" + dim + "'");
      }
      if (d <= 0) {
        throw new BadOptionException(vectorDimOption(name), "must be a positive integer, not '" + dim + "'");
      }
      c = ColumnSpec.vector(name, d, metric(name, options));
    } else if (topLevel && options.containsKey(vectorMetricOption(name))) {
      throw new BadOptionException(vectorMetricOption(name), "a vector needs its dimension: set '"
          + vectorDimOption(name) + "' too (without it, ARRAY<FLOAT> column '" + name + "' is a list)");
    } else if (blob) {
      if (t.getTypeRoot() != LogicalTypeRoot.VARBINARY) {
        throw new BadOptionException(blobOption(name), "column '" + name + "' is " + t.asSummaryString()
            + ": only BYTES columns can be blobs");
      }
      c = ColumnSpec.blob(name, ColumnType.LARGE_BINARY);
    } else if (t instanceof ArrayType a) {
      c = ColumnSpec.list(name, column(ColumnSpec.LIST_ITEM_NAME, path + "[]", a.getElementType(), false, options));
    } else if (t instanceof RowType row) {
      List<ColumnSpec> fields = new ArrayList<>();
      for (RowType.RowField f : row.getFields()) {
        fields.add(column(f.getName(), path + "." + f.getName(), f.getType(), false, options));
      }
      c = ColumnSpec.struct(name, fields.toArray(new ColumnSpec[0]));
    } else {
      c = ColumnSpec.of(name, scalar(path, t));
    }
    return c.withNullable(t.isNullable());
  }

  private static VectorMetric metric(String column, Map<String, String> options) {
    String metric = options.getOrDefault(vectorMetricOption(column), VectorMetric.COSINE.jsonName()).strip();
    return VectorMetric.fromJsonName(metric).orElseThrow(() -> new BadOptionException(vectorMetricOption(column),
        "unknown metric '" + metric + "' (l2, cosine or dot)"));
  }

  private static boolean isTrue(Map<String, String> options, String key) {
    String v = options.get(key);
    if (v == null) {
      return false;
    }
    return switch (v.strip().toLowerCase(java.util.Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new BadOptionException(key, "must be true or false, not '" + v + "'");
    };
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

  /** Every per-column option names a column of the DDL and a known property of it. */
  private static void checkColumnOptionNames(RowType declared, Map<String, String> options) {
    for (String key : options.keySet()) {
      if (!isColumnOption(key)) {
        continue;
      }
      String column;
      if (key.startsWith(VECTOR_PREFIX)) {
        Matcher m = VECTOR_OPTION.matcher(key);
        if (!m.matches()) {
          throw new BadOptionException(key, "unknown option; vector columns take 'vector.<col>.dim' and "
              + "'vector.<col>.metric'");
        }
        column = m.group(1);
      } else {
        column = key.substring(BLOB_PREFIX.length());
      }
      if (!declared.getFieldNames().contains(column)) {
        throw new BadOptionException(key, "names column '" + column + "', which the table does not declare; its columns "
            + "are " + declared.getFieldNames());
      }
    }
  }

  /**
   * Checks the table's per-column options against the store's spec (a store that exists, or a preset or JSON
   * spec): each names a declared column that the spec holds as a vector of that dimension and metric, or as a
   * blob, so that a DDL reused after the store was created still says what the store is.
   *
   * @throws BadOptionException naming the option that disagrees
   */
  public static void checkColumnOptions(RowType declared, SchemaSpec spec, Map<String, String> options) {
    checkColumnOptionNames(declared, options);
    for (Map.Entry<String, String> e : options.entrySet()) {
      String key = e.getKey();
      if (!isColumnOption(key)) {
        continue;
      }
      Matcher m = VECTOR_OPTION.matcher(key);
      String column = m.matches() ? m.group(1) : key.substring(BLOB_PREFIX.length());
      ColumnSpec c = spec.column(column);
      if (m.matches()) {
        if (c == null || c.type() != ColumnType.VECTOR) {
          throw new BadOptionException(key, "column '" + column + "' of the store is not a vector"
              + (c == null ? "" : " (it is " + c.type().jsonName() + ")"));
        }
        if (m.group(2).equals("dim")) {
          if (!e.getValue().strip().equals(Integer.toString(c.dim()))) {
            throw new BadOptionException(key, "the store's vector '" + column + "' has dim " + c.dim() + ", not '"
                + e.getValue() + "'");
          }
        } else if (metric(column, options) != c.metric()) {
          throw new BadOptionException(key, "the store's vector '" + column + "' has metric " + c.metric().jsonName()
              + ", not '" + e.getValue() + "'");
        }
      } else if (isTrue(options, key) != (c != null && c.blob())) {
        throw new BadOptionException(key, "column '" + column + "' of the store is " + (c != null && c.blob() ? "" : "not ")
            + "a blob");
      }
    }
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
