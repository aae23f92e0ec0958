package io.lancecontext.spark.read;

import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A vector column (Arrow {@code FixedSizeList<float32>}) as Spark {@code array<float>}, zero-copy:
 * Spark 4.1's {@link ArrowColumnVector} has no accessor for fixed-size lists. Each row's array is a window
 * of {@code dim} floats over the child vector.
 */
final class FixedSizeListColumnVector extends ColumnVector {
  private final FixedSizeListVector vector;
  private final ArrowColumnVector values;
  private final int dim;

  FixedSizeListColumnVector(FixedSizeListVector vector) {
    super(new ArrayType(DataTypes.FloatType, true)); // as SparkSchemas reports vectors
    this.vector = vector;
    this.values = new ArrowColumnVector(vector.getDataVector());
    this.dim = vector.getListSize();
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    return new ColumnarArray(values, rowId * dim, dim);
  }

  @Override
  public boolean hasNull() {
    return vector.getNullCount() > 0;
  }

  @Override
  public int numNulls() {
    return vector.getNullCount();
  }

  @Override
  public boolean isNullAt(int rowId) {
    return vector.isNull(rowId);
  }

  @Override
  public void close() {
    // the Arrow vectors belong to the store's reader
  }

  @Override
  public boolean getBoolean(int rowId) {
    throw unsupported();
  }

  @Override
  public byte getByte(int rowId) {
    throw unsupported();
  }

  @Override
  public short getShort(int rowId) {
    throw unsupported();
  }

  @Override
  public int getInt(int rowId) {
    throw unsupported();
  }

  @Override
  public long getLong(int rowId) {
    throw unsupported();
  }

  @Override
  public float getFloat(int rowId) {
    throw unsupported();
  }

  @Override
  public double getDouble(int rowId) {
    throw unsupported();
  }

  @Override
  public ColumnarMap getMap(int ordinal) {
    throw unsupported();
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    throw unsupported();
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    throw unsupported();
  }

  @Override
  public byte[] getBinary(int rowId) {
    throw unsupported();
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw unsupported();
  }

  private static UnsupportedOperationException unsupported() {
    return new UnsupportedOperationException("a vector column is array<float>: read it with getArray");
  }
}
