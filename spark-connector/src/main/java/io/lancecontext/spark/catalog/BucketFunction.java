package io.lancecontext.spark.catalog;

import io.lancecontext.core.ContextStore;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code bucket(shards, key)}: the bucket a store of {@code shards} buckets puts {@code key} in
 * ({@link ContextStore#bucketOf(String, int)}), for SQL ({@code SELECT lc.system.bucket(4, id)}). Writes
 * cluster their rows by {@link BucketTaskFunction}, which places whole buckets in tasks.
 */
public final class BucketFunction implements UnboundFunction {
  public static final String NAME = "bucket";

  @Override
  public BoundFunction bind(StructType inputType) {
    if (inputType.size() != 2 || !(inputType.fields()[0].dataType() instanceof IntegerType)
        || !(inputType.fields()[1].dataType() instanceof StringType)) {
      throw new UnsupportedOperationException("bucket takes (shards INT, key STRING), not " + inputType.simpleString());
    }
    return new Bound();
  }

  @Override
  public String description() {
    return "bucket(shards INT, key STRING): the store bucket of a key";
  }

  @Override
  public String name() {
    return NAME;
  }

  /** The bound function; {@code invoke} is Spark's fast path (no row object). */
  public static final class Bound implements ScalarFunction<Integer> {
    @Override
    public DataType[] inputTypes() {
      return new DataType[] {DataTypes.IntegerType, DataTypes.StringType};
    }

    @Override
    public DataType resultType() {
      return DataTypes.IntegerType;
    }

    @Override
    public String name() {
      return NAME;
    }

    @Override
    public String canonicalName() {
      return "lancecontext.bucket";
    }

    @Override
    public String toString() {
      return canonicalName();
    }

    public int invoke(int shards, UTF8String key) {
      return bucketOf(key, shards);
    }

    @Override
    public Integer produceResult(InternalRow input) {
      return invoke(input.getInt(0), input.getUTF8String(1));
    }
  }

  /** The bucket of {@code key} ({@link ContextStore#bucketOf(byte[], int, int, int)}), from its UTF-8 bytes. */
  static int bucketOf(UTF8String key, int shards) {
    byte[] utf8 = key.getBytes();
    return ContextStore.bucketOf(utf8, 0, utf8.length, shards);
  }
}
