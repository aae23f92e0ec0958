package io.lancecontext.spark.catalog;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.hash.Murmur3_x86_32;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code bucket_task(tasks, shards, key)}: what batch writes cluster their rows by, so that Spark's hash
 * partitioning into {@code tasks} partitions sends every row of bucket {@code b} ({@link BucketFunction}) to task
 * {@code b mod tasks}: one task per bucket with the default {@code write.tasks} (= shards), and buckets spread
 * evenly over fewer tasks.
 *
 * <p>Clustering by {@code bucket(shards, key)} itself left that to the hash of the bucket number: with 4 shards
 * into 4 tasks, Spark's {@code pmod(murmur3(b, 42), 4)} sends buckets 0, 1 and 3 to task 3 and bucket 2 to task 2,
 * so two tasks were empty and one wrote three quarters of the rows. The value returned is therefore not the
 * bucket but, for task {@code t}, the smallest non-negative int that Spark's hash partitioning (Murmur3 with seed
 * 42, as {@code HashPartitioning} computes it for one int column) puts in partition {@code t}.
 */
public final class BucketTaskFunction implements UnboundFunction {
  public static final String NAME = "bucket_task";
  /** The seed of Spark's {@code HashPartitioning} ({@code Murmur3Hash}'s default). */
  private static final int SPARK_HASH_SEED = 42;

  @Override
  public BoundFunction bind(StructType inputType) {
    if (inputType.size() != 3 || !(inputType.fields()[0].dataType() instanceof IntegerType)
        || !(inputType.fields()[1].dataType() instanceof IntegerType)
        || !(inputType.fields()[2].dataType() instanceof StringType)) {
      throw new UnsupportedOperationException("bucket_task takes (tasks INT, shards INT, key STRING), not "
          + inputType.simpleString());
    }
    return new Bound();
  }

  @Override
  public String description() {
    return "bucket_task(tasks INT, shards INT, key STRING): a value that Spark's hash partitioning into `tasks` "
        + "partitions sends to task bucket(shards, key) mod tasks";
  }

  @Override
  public String name() {
    return NAME;
  }

  /** For each task {@code t} of {@code tasks}, the smallest non-negative int Spark hash-partitions to {@code t}. */
  static int[] partitionValues(int tasks) {
    if (tasks <= 0) {
      throw new IllegalArgumentException("bucket_task: tasks must be positive, not " + tasks);
    }
    int[] values = new int[tasks];
    java.util.Arrays.fill(values, -1);
    int found = 0;
    for (int v = 0; found < tasks; v++) {
      int t = Math.floorMod(Murmur3_x86_32.hashInt(v, SPARK_HASH_SEED), tasks);
      if (values[t] < 0) {
        values[t] = v;
        found++;
      }
    }
    return values;
  }

  /** The bound function; {@code invoke} is Spark's fast path (no row object). */
  public static final class Bound implements ScalarFunction<Integer> {
    /** The values of the last {@code tasks} seen (a literal of the write, so computed once per task). */
    private volatile int[] values = new int[0];

    @Override
    public DataType[] inputTypes() {
      return new DataType[] {DataTypes.IntegerType, DataTypes.IntegerType, DataTypes.StringType};
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
      return "lancecontext.bucket_task";
    }

    @Override
    public String toString() {
      return canonicalName();
    }

    public int invoke(int tasks, int shards, UTF8String key) {
      int[] v = values;
      if (v.length != tasks) {
        v = partitionValues(tasks);
        values = v;
      }
      return v[BucketFunction.bucketOf(key, shards) % tasks];
    }

    @Override
    public Integer produceResult(InternalRow input) {
      return invoke(input.getInt(0), input.getInt(1), input.getUTF8String(2));
    }
  }
}
