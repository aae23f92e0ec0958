package io.lancecontext.core;

import io.lancecontext.core.internal.codec.RowBuffer;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * Fills rows of a write handle directly in the store's Arrow layout, for adapters that convert row by
 * row (Spark {@code InternalRow}, Flink {@code RowData}) without building a {@code Map} per row. Resolve
 * each column once with {@link #column(String)}, then per row call setters by column index and
 * {@link #endRow()}. Values are copied when they are set: arrays and buffers may be reused at once.
 *
 * <p>Setters accept the values of the column's type ({@code docs/schema.md}): {@link #setInt} and
 * {@link #setLong} any integer column (range-checked) and float columns, {@link #setFloat} and
 * {@link #setDouble} float32/float64, strings string and large_string, bytes binary and large_binary,
 * {@link #setVector} a vector column of exactly {@code dim} elements, {@link #setValue} anything a record
 * may hold (a {@code Map} for a struct, a {@code List} for a list). A value of the wrong type, or a null
 * in a non-nullable column, throws {@link io.lancecontext.core.error.InvalidRecordException} naming the
 * column and the row, and discards the row being built (rows already ended stay). Columns not set are
 * null; a row without its key gets one (see {@link WriterOptions.Builder#idSeed(String)}).
 *
 * <p>Ended rows are buffered by the handle and put by its batching rules ({@code write.batch-rows},
 * {@code write.batch-bytes}), in order with the handle's other writes and deletes. Belongs to its handle:
 * same thread, same lifetime.
 */
public final class RowAppender {
  private final StoreWriter writer;
  private final RowBuffer buffer;

  RowAppender(StoreWriter writer, RowBuffer buffer) {
    this.writer = writer;
    this.buffer = buffer;
  }

  /**
   * The order to set a row's fields in, as indexes into {@code names} (the fields' column names): the store's key
   * first, then the others in their order. A row whose key is set first goes straight into its bucket's batch;
   * one whose key comes later is copied there when it ends.
   */
  public int[] keyFirst(List<String> names) {
    int key = names.indexOf(buffer.spec().key());
    int[] order = new int[names.size()];
    int n = 0;
    if (key >= 0) {
      order[n++] = key;
    }
    for (int i = 0; i < names.size(); i++) {
      if (i != key) {
        order[n++] = i;
      }
    }
    return order;
  }

  /**
   * The index of a column for the setters.
   *
   * @throws io.lancecontext.core.error.SchemaException for an unknown or a system ({@code _lc_*}) column
   */
  public int column(String name) {
    return buffer.column(name);
  }

  public RowAppender setString(int column, String value) {
    return set(column, value);
  }

  /**
   * A string column from UTF-8 bytes (Spark's {@code UTF8String.getBytes()}, Flink's
   * {@code StringData.toBytes()}), copied without decoding. The key is checked to be valid UTF-8; other
   * columns are stored as given, so they must hold valid UTF-8 (as engines' strings do).
   */
  public RowAppender setUtf8(int column, byte[] utf8) {
    writer.check();
    buffer.setUtf8(column, utf8);
    return this;
  }

  /**
   * A string column from {@code length} UTF-8 bytes of {@code utf8} starting at {@code offset} (an engine's string
   * that lives inside a larger array, such as a Spark row's), copied without decoding; as {@link #setUtf8(int,
   * byte[])}.
   */
  public RowAppender setUtf8(int column, byte[] utf8, int offset, int length) {
    writer.check();
    buffer.setUtf8(column, utf8, offset, length);
    return this;
  }

  public RowAppender setLong(int column, long value) {
    return set(column, value);
  }

  public RowAppender setInt(int column, int value) {
    return set(column, value);
  }

  public RowAppender setDouble(int column, double value) {
    return set(column, value);
  }

  public RowAppender setFloat(int column, float value) {
    return set(column, value);
  }

  public RowAppender setBoolean(int column, boolean value) {
    return set(column, value);
  }

  public RowAppender setBytes(int column, byte[] value) {
    return set(column, value);
  }

  public RowAppender setBytes(int column, ByteBuffer value) {
    return set(column, value);
  }

  /** A vector column; {@code value} must have exactly the column's {@code dim} elements. */
  public RowAppender setVector(int column, float[] value) {
    return set(column, value);
  }

  /** A timestamp column from microseconds since the epoch, UTC. */
  public RowAppender setTimestampMicros(int column, long micros) {
    writer.check();
    buffer.setTimestampMicros(column, micros);
    return this;
  }

  /** A date column from days since 1970-01-01. */
  public RowAppender setDate(int column, int epochDay) {
    writer.check();
    buffer.setDateDays(column, epochDay);
    return this;
  }

  public RowAppender setNull(int column) {
    return set(column, null);
  }

  /**
   * Any column from the value a record would hold: a {@link Map} by field name for a struct, a
   * {@link List} for a list, and the types of the other setters.
   */
  public RowAppender setValue(int column, Object value) {
    return set(column, value);
  }

  /**
   * Completes the row: it is buffered, and put when the handle's buffer is full.
   *
   * @throws io.lancecontext.core.error.InvalidRecordException if a non-nullable column was not set (the row
   *     is discarded)
   */
  public void endRow() {
    writer.check();
    buffer.endRow();
    writer.afterRow();
  }

  /** Discards the row being built. */
  public void abandonRow() {
    buffer.abandonRow();
  }

  private RowAppender set(int column, Object value) {
    writer.check();
    buffer.set(column, value);
    return this;
  }
}
