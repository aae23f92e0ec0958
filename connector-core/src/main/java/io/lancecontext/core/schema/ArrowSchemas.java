package io.lancecontext.core.schema;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** Maps a {@link SchemaSpec} to the Arrow schema of its Lance dataset. */
final class ArrowSchemas {
  private ArrowSchemas() {}

  /** Field metadata that makes Lance treat a string column as the (unenforced) primary key. */
  public static final String PRIMARY_KEY_METADATA = "lance-schema:unenforced-primary-key";
  /** Field metadata that selects Lance's blob encoding (file format 2.1). */
  public static final String BLOB_METADATA = "lance-encoding:blob";
  /** Field metadata recording a vector column's distance metric. */
  public static final String METRIC_METADATA = "lancecontext:metric";
  /** Schema metadata holding the spec's JSON form; read back when a store is opened. */
  public static final String SPEC_METADATA = "lancecontext.spec";
  /** Schema metadata holding the version of the persisted spec format. */
  public static final String FORMAT_METADATA = "lancecontext.format";
  public static final String FORMAT_VERSION = "1";
  public static final String UTC = "UTC";

  /** The dataset schema: declared columns in order, then system columns; spec in the metadata. */
  static Schema toArrow(SchemaSpec spec) {
    List<Field> fields = new ArrayList<>();
    for (ColumnSpec c : spec.columns()) {
      fields.add(field(c, c.name().equals(spec.key())));
    }
    fields.add(Field.nullable(SystemColumns.SEQUENCE, new ArrowType.Int(64, true)));
    if (spec.has(Capability.TOMBSTONES)) {
      fields.add(Field.nullable(SystemColumns.TOMBSTONE, ArrowType.Bool.INSTANCE));
    }
    Map<String, String> metadata = new LinkedHashMap<>();
    metadata.put(SPEC_METADATA, spec.toJson());
    metadata.put(FORMAT_METADATA, FORMAT_VERSION);
    return new Schema(fields, metadata);
  }

  /** The user schema: declared columns in order, no system column, no schema metadata. */
  static Schema toUserArrow(SchemaSpec spec) {
    List<Field> fields = new ArrayList<>();
    for (ColumnSpec c : spec.columns()) {
      fields.add(field(c, c.name().equals(spec.key())));
    }
    return new Schema(fields);
  }

  static Field field(ColumnSpec c, boolean primaryKey) {
    Map<String, String> metadata = null;
    if (primaryKey || c.blob() || c.type() == ColumnType.VECTOR) {
      metadata = new HashMap<>();
      if (primaryKey) {
        metadata.put(PRIMARY_KEY_METADATA, "true");
      }
      if (c.blob()) {
        metadata.put(BLOB_METADATA, "true");
      }
      if (c.type() == ColumnType.VECTOR) {
        metadata.put(METRIC_METADATA, c.metric().jsonName());
      }
    }
    FieldType fieldType = new FieldType(c.nullable(), arrowType(c), null, metadata);
    List<Field> children = switch (c.type()) {
      case STRUCT -> c.fields().stream().map(f -> field(f, false)).toList();
      case LIST -> List.of(field(c.item(), false));
      case VECTOR -> List.of(Field.nullable(ColumnSpec.LIST_ITEM_NAME, new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
      default -> null;
    };
    return new Field(c.name(), fieldType, children);
  }

  static ArrowType arrowType(ColumnSpec c) {
    return switch (c.type()) {
      case BOOL -> ArrowType.Bool.INSTANCE;
      case INT8 -> new ArrowType.Int(8, true);
      case INT16 -> new ArrowType.Int(16, true);
      case INT32 -> new ArrowType.Int(32, true);
      case INT64 -> new ArrowType.Int(64, true);
      case FLOAT32 -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case FLOAT64 -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case STRING -> ArrowType.Utf8.INSTANCE;
      case LARGE_STRING -> ArrowType.LargeUtf8.INSTANCE;
      case BINARY -> ArrowType.Binary.INSTANCE;
      case LARGE_BINARY -> ArrowType.LargeBinary.INSTANCE;
      case DATE -> new ArrowType.Date(DateUnit.DAY);
      case TIMESTAMP -> new ArrowType.Timestamp(TimeUnit.MICROSECOND, UTC);
      case LIST -> ArrowType.List.INSTANCE;
      case STRUCT -> ArrowType.Struct.INSTANCE;
      case VECTOR -> new ArrowType.FixedSizeList(c.dim());
    };
  }
}
