package io.lancecontext.benchmarks.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.FragmentOperation;
import org.lance.WriteParams;

/**
 * The fragment-append baseline (lance-spark's write shape): each task converts its rows to Arrow and writes
 * Lance fragments with {@code Fragment.create}; the driver commits every task's fragments in one Lance
 * transaction. Plain Lance: no key, no upsert, no index, no MemWAL. Write-only; used as
 * {@code df.write().format(FragmentAppendSource.class.getName()).option("vector.dim", "64").save(path)} on a
 * path that does not exist yet. Types: string, int, bigint, double, float, boolean and {@code array<float>}
 * (a fixed-size list of {@code vector.dim}).
 */
@SuppressWarnings("deprecation")  // Fragment.create + Dataset.commit(FragmentOperation): the baseline's own shape
public final class FragmentAppendSource implements TableProvider {
  /** One allocator per JVM for the tasks' Arrow buffers. */
  static final BufferAllocator ROOT = new RootAllocator(Long.MAX_VALUE);

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    throw new UnsupportedOperationException("write-only: pass the DataFrame's schema");
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    CaseInsensitiveStringMap options = new CaseInsensitiveStringMap(properties);
    return new FragmentTable(options.get("path"), schema, options.getInt("vector.dim", 0));
  }

  static final class FragmentTable implements SupportsWrite {
    private final String path;
    private final StructType schema;
    private final int dim;

    FragmentTable(String path, StructType schema, int dim) {
      this.path = path;
      this.schema = schema;
      this.dim = dim;
    }

    @Override
    public String name() {
      return "fragment-append:" + path;
    }

    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_WRITE);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
      StructType writeSchema = info.schema();
      return new WriteBuilder() {
        @Override
        public Write build() {
          return new Write() {
            @Override
            public BatchWrite toBatch() {
              return new FragmentBatchWrite(path, writeSchema, dim);
            }
          };
        }
      };
    }
  }

  static final class FragmentBatchWrite implements BatchWrite {
    private final String path;
    private final StructType schema;
    private final int dim;

    FragmentBatchWrite(String path, StructType schema, int dim) {
      this.path = path;
      this.schema = schema;
      this.dim = dim;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return new Factory(path, schema, dim);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      List<FragmentMetadata> fragments = new ArrayList<>();
      for (WriterCommitMessage m : messages) {
        fragments.addAll(((Fragments) m).fragments);
      }
      try (BufferAllocator a = ROOT.newChildAllocator("commit", 0, Long.MAX_VALUE);
          Dataset ds = Dataset.commit(a, path, new FragmentOperation.Overwrite(fragments, arrowSchema(schema, dim)),
              Optional.empty())) {
        ds.version();
      }
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      // the fragments' files stay unreferenced; nothing is visible
    }
  }

  record Fragments(List<FragmentMetadata> fragments) implements WriterCommitMessage {}

  record Factory(String path, StructType schema, int dim) implements DataWriterFactory, Serializable {
    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new FragmentWriter(path, schema, dim);
    }
  }

  /** Buffers {@link #BATCH} rows in Arrow, writes them as fragments, and reports every fragment at commit. */
  static final class FragmentWriter implements DataWriter<InternalRow> {
    static final int BATCH = 131_072;
    private final String path;
    private final StructType schema;
    private final BufferAllocator allocator = ROOT.newChildAllocator("fragment-writer", 0, Long.MAX_VALUE);
    private final VectorSchemaRoot root;
    private final List<FragmentMetadata> written = new ArrayList<>();
    private int rows;

    FragmentWriter(String path, StructType schema, int dim) {
      this.path = path;
      this.schema = schema;
      this.root = VectorSchemaRoot.create(arrowSchema(schema, dim), allocator);
    }

    @Override
    public void write(InternalRow row) {
      StructField[] fields = schema.fields();
      for (int i = 0; i < fields.length; i++) {
        set(root.getVector(i), rows, row, i);
      }
      if (++rows == BATCH) {
        flush();
      }
    }

    private void flush() {
      if (rows > 0) {
        root.setRowCount(rows);
        written.addAll(Fragment.create(path, allocator, root, new WriteParams.Builder().build()));
        root.clear();
        rows = 0;
      }
    }

    @Override
    public WriterCommitMessage commit() {
      flush();
      return new Fragments(written);
    }

    @Override
    public void abort() {}

    @Override
    public void close() {
      root.close();
      allocator.close();
    }
  }

  static Schema arrowSchema(StructType schema, int dim) {
    List<Field> fields = new ArrayList<>();
    for (StructField f : schema.fields()) {
      DataType t = f.dataType();
      if (t instanceof ArrayType at && at.elementType().equals(DataTypes.FloatType) && dim > 0) {
        Field item = new Field("item", FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null);
        fields.add(new Field(f.name(), new FieldType(f.nullable(), new ArrowType.FixedSizeList(dim), null), List.of(item)));
      } else {
        fields.add(new Field(f.name(), new FieldType(f.nullable(), arrowType(f.name(), t), null), null));
      }
    }
    return new Schema(fields);
  }

  private static ArrowType arrowType(String column, DataType t) {
    if (t.equals(DataTypes.StringType)) {
      return ArrowType.Utf8.INSTANCE;
    } else if (t.equals(DataTypes.LongType)) {
      return new ArrowType.Int(64, true);
    } else if (t.equals(DataTypes.IntegerType)) {
      return new ArrowType.Int(32, true);
    } else if (t.equals(DataTypes.DoubleType)) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    } else if (t.equals(DataTypes.FloatType)) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
    } else if (t.equals(DataTypes.BooleanType)) {
      return ArrowType.Bool.INSTANCE;
    }
    throw new IllegalArgumentException("fragment-append baseline: unsupported type " + t + " of column " + column);
  }

  private static void set(FieldVector v, int row, InternalRow r, int ord) {
    if (r.isNullAt(ord)) {
      v.setNull(row);
    } else if (v instanceof VarCharVector s) {
      s.setSafe(row, r.getUTF8String(ord).getBytes());
    } else if (v instanceof BigIntVector b) {
      b.setSafe(row, r.getLong(ord));
    } else if (v instanceof IntVector i) {
      i.setSafe(row, r.getInt(ord));
    } else if (v instanceof Float8Vector d) {
      d.setSafe(row, r.getDouble(ord));
    } else if (v instanceof Float4Vector f) {
      f.setSafe(row, r.getFloat(ord));
    } else if (v instanceof BitVector b) {
      b.setSafe(row, r.getBoolean(ord) ? 1 : 0);
    } else if (v instanceof FixedSizeListVector list) {
      ArrayData a = r.getArray(ord);
      int dim = list.getListSize();
      if (a.numElements() != dim) {
        throw new IllegalArgumentException("vector of " + a.numElements() + " elements, expected " + dim);
      }
      Float4Vector items = (Float4Vector) list.getDataVector();
      int base = list.startNewValue(row);
      for (int k = 0; k < dim; k++) {
        items.setSafe(base + k, a.getFloat(k));
      }
    } else {
      throw new IllegalArgumentException("fragment-append baseline: unsupported vector " + v.getField());
    }
  }
}
