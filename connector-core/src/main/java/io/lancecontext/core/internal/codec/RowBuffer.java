package io.lancecontext.core.internal.codec;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Rows being built in a store's dataset layout, one at a time: values are encoded into Arrow vectors
 * as they are set (nothing of the caller's objects is kept), a row is completed by {@link #endRow()}
 * and a bad value or an incomplete row discards only the row being built. Rows may also be whole
 * records ({@link #addRecord}) or tombstones ({@link #addTombstone}), in any order: they are put in the
 * order they were added. A row without its key gets one from its {@link KeyIds} (the ordinal counts the
 * keyless rows completed so far). Not thread-safe.
 *
 * <p><b>By bucket.</b> A buffer made with a {@link KeyRouter} keeps each bucket's rows in a batch of their own
 * ({@link #takeAll()}), so that a writer need not split a batch by bucket afterwards (a copy of every row). A
 * row whose key is its first value set goes straight into its bucket's batch. Any other row is built in one
 * more batch, of rows of any bucket: a row without a key stays there (its generated key is unique, so its place
 * among the other rows does not matter), and a row whose key comes later is copied into its bucket's batch when
 * it ends (value by value, the slow path). Rows of one key are in one batch, in the order they were added.
 */
public final class RowBuffer implements AutoCloseable {
  private final SchemaSpec spec;
  private final BufferAllocator allocator;
  private final KeyIds ids;
  private final List<ColumnSpec> columns;
  private final java.util.Map<String, Integer> indexByName = new java.util.HashMap<>();
  private final int keyColumn;
  private final boolean[] set;
  /**
   * The columns an unset value must still be written to as null (required ones, which refuse it, lists and
   * structs); the others are left alone: a new batch's validity bits are zero, so they read null (a vector column's
   * values then grow once, when the batch is taken, not row by row: {@code dim} floats each).
   */
  private final int[] explicitNulls;
  private final int[] allColumns;
  /** Null: one batch for every bucket. */
  private final KeyRouter router;
  /** The batches being filled, by bucket (one without a router); null until a row goes there. */
  private final BufferSlot[] slots;
  /** The slot of the row being built, its index there, and that slot's vectors. */
  private int current;
  private int at;
  private FieldVector[] vectors;
  /** The slot of rows of any bucket (the only one without a router). */
  private final int mixed;
  /** Whether the row being built went to its bucket's slot by its key, set first. */
  private boolean routed;
  private int rows;
  private long bytes;
  private long rowBytes;
  private boolean rowStarted;
  private long keylessRows;
  private long rowsBefore;

  /** A buffer of one batch for every bucket. */
  public RowBuffer(SchemaSpec spec, BufferAllocator allocator, KeyIds ids) {
    this(spec, allocator, ids, 1, null);
  }

  /**
   * A buffer of one batch per bucket, of {@code buckets} buckets, routed by {@code router}, and one batch of rows
   * without a key (null router: one batch for every row).
   */
  public RowBuffer(SchemaSpec spec, BufferAllocator allocator, KeyIds ids, int buckets, KeyRouter router) {
    this.spec = spec;
    this.allocator = allocator;
    this.ids = ids;
    this.columns = spec.columns();
    for (int i = 0; i < columns.size(); i++) {
      indexByName.putIfAbsent(columns.get(i).name(), i);
    }
    this.keyColumn = columns.indexOf(spec.column(spec.key()));
    this.set = new boolean[columns.size()];
    this.explicitNulls = java.util.stream.IntStream.range(0, columns.size()).filter(i -> i != keyColumn
        && (!columns.get(i).nullable() || columns.get(i).type() == ColumnType.LIST
            || columns.get(i).type() == ColumnType.STRUCT)).toArray();
    this.allColumns = java.util.stream.IntStream.range(0, columns.size()).toArray();
    this.router = buckets > 1 ? router : null;
    this.slots = new BufferSlot[this.router == null ? 1 : buckets + 1];
    this.mixed = slots.length - 1;
    select(0);
  }

  /** Builds the next row in the slot of {@code bucket}. */
  private void select(int bucket) {
    if (slots[bucket] == null) {
      slots[bucket] = new BufferSlot(spec, columns, allocator);
    }
    current = bucket;
    at = slots[bucket].rows;
    vectors = slots[bucket].vectors;
  }

  /**
   * Before the first value of a row: the key, set first, takes the row to its bucket's slot; any other value to
   * the slot of rows of any bucket.
   */
  private void route(int column, byte[] utf8, int offset, int length) {
    if (router == null || rowStarted) {
      return;
    }
    if (column == keyColumn && utf8 != null) {
      select(router.bucket(utf8, offset, length));
      routed = true;
    } else if (current != mixed) {
      select(mixed);
    }
  }

  /**
   * The index of a column, to pass to the setters.
   *
   * @throws SchemaException for a system column (the store sets those) or a column the store lacks
   */
  public int column(String name) {
    Integer index = name == null ? null : indexByName.get(name);
    if (index != null) {
      return index;
    }
    ColumnSpec c = spec.column(name);
    if (c == null) {
      if (name != null && name.toLowerCase(java.util.Locale.ROOT).startsWith(SystemColumns.SYSTEM_PREFIX)) {
        throw new SchemaException(name, "is a system column: the store sets it, a writer never does");
      }
      throw new SchemaException(name, "unknown column; the store's columns are " + spec.columnNames());
    }
    return columns.indexOf(c);
  }

  public SchemaSpec spec() {
    return spec;
  }

  /** Completed rows buffered. */
  public int rows() {
    return rows;
  }

  /** About how many bytes the buffered rows' values take. */
  public long bytes() {
    return bytes;
  }

  /** Keyless rows completed so far (the next keyless row's ordinal). */
  public long keylessRows() {
    return keylessRows;
  }

  /** Rows taken by {@link #takeAll()} so far: with {@link #rows()}, the row number errors report. */
  private int rowNumber() {
    return (int) Math.min(Integer.MAX_VALUE, rowsBefore + rows);
  }

  // ---------------------------------------------------------------- one row, value by value

  /** Sets a value of the row being built, as a record would hold it (see {@link ValueWriter}). */
  public void set(int column, Object value) {
    ColumnSpec c = columns.get(column);
    try {
      if (router != null && !rowStarted) {
        byte[] utf8 = column == keyColumn && value instanceof String key
            ? key.getBytes(java.nio.charset.StandardCharsets.UTF_8) : null;
        route(column, utf8, 0, utf8 == null ? 0 : utf8.length);
      }
      ValueWriter.write(vectors[column], at, value, c, c.name(), rowNumber());
    } catch (RuntimeException e) {
      abandonRow();
      throw e;
    }
    mark(column, ValueWriter.estimate(value));
  }

  /** Sets a string column (string or large_string) from UTF-8 bytes, which are copied. */
  public void setUtf8(int column, byte[] utf8) {
    if (utf8 == null) {
      set(column, null);
      return;
    }
    setUtf8(column, utf8, 0, utf8.length);
  }

  /** Sets a string column from {@code length} UTF-8 bytes of {@code utf8} at {@code offset} (copied). */
  public void setUtf8(int column, byte[] utf8, int offset, int length) {
    ColumnSpec c = columns.get(column);
    if (!c.type().isString()) {
      abandonRow();
      throw new InvalidRecordException(c.name(), rowNumber(), "UTF-8 text given for a " + c.type() + " column");
    }
    if (column == keyColumn && !Utf8.valid(utf8, offset, length)) {
      abandonRow();
      throw new InvalidRecordException(c.name(), rowNumber(), "the key is not valid UTF-8");
    }
    route(column, utf8, offset, length);
    ((VariableWidthFieldVector) vectors[column]).setSafe(at, utf8, offset, length);
    mark(column, length);
  }

  /** Sets a timestamp column from microseconds since the epoch (UTC). */
  public void setTimestampMicros(int column, long micros) {
    ColumnSpec c = columns.get(column);
    if (c.type() != ColumnType.TIMESTAMP) {
      abandonRow();
      throw new InvalidRecordException(c.name(), rowNumber(), "a timestamp given for a " + c.type() + " column");
    }
    route(column, null, 0, 0);
    ((TimeStampMicroTZVector) vectors[column]).setSafe(at, micros);
    mark(column, 8);
  }

  /** Sets a date column from days since the epoch. */
  public void setDateDays(int column, int days) {
    ColumnSpec c = columns.get(column);
    if (c.type() != ColumnType.DATE) {
      set(column, LocalDate.ofEpochDay(days));  // refused with the column's type named
      return;
    }
    route(column, null, 0, 0);
    ((DateDayVector) vectors[column]).setSafe(at, days);
    mark(column, 4);
  }

  private void mark(int column, long estimate) {
    rowStarted = true;
    if (!set[column]) {
      set[column] = true;
    }
    rowBytes += estimate;
  }

  /**
   * Completes the row being built: columns not set are null (a required one is refused), and a row
   * without its key gets a generated one.
   *
   * @throws InvalidRecordException if a non-nullable column was not set; the row is discarded
   */
  public void endRow() {
    try {
      if (!set[keyColumn]) {
        ColumnSpec c = columns.get(keyColumn);
        ValueWriter.write(vectors[keyColumn], at, ids.key(keylessRows), c, c.name(), rowNumber());
      }
      // a row that moves to another slot (its key set last, or no key and built elsewhere than the slot of any
      // bucket) is copied value by value: every value of it written first
      boolean moving = router != null && !routed && (set[keyColumn] || current != mixed);
      for (int i : moving ? allColumns : explicitNulls) {
        if (!set[i] && i != keyColumn) {
          ValueWriter.write(vectors[i], at, null, columns.get(i), columns.get(i).name(), rowNumber());
        }
      }
      VarCharVector key = (VarCharVector) vectors[keyColumn];
      if (key.isNull(at)) {
        throw new InvalidRecordException(spec.key(), rowNumber(), "the key is null");
      }
      if (key.getValueLength(at) == 0) {
        throw new InvalidRecordException(spec.key(), rowNumber(), "the key is empty");
      }
    } catch (RuntimeException e) {
      abandonRow();
      throw e;
    }
    if (!set[keyColumn]) {
      keylessRows++;
    }
    if (router != null && !routed) {
      // a key set after other values: to its bucket's slot; no key (a unique generated one): the slot of any bucket
      moveTo(set[keyColumn] ? slots[current].keyBucket(keyColumn, router) : mixed);
    }
    BitVector tombstone = slots[current].tombstone;
    if (tombstone != null) {
      tombstone.setNull(at);
    }
    completeRow();
  }

  /** Moves the ended row built in the current slot to slot {@code target}, when that is another. */
  private void moveTo(int target) {
    if (target != current) {
      BufferSlot from = slots[current];
      select(target);
      slots[current].copyRow(from);
      from.clearRow(columns, from.rows);
    }
  }

  /**
   * Discards the row being built: its values are cleared to null (struct fields too), since a later row leaves
   * the columns it does not set as they are (and lance-core 7.0.0 reads struct nulls back from their fields on
   * some paths, see {@code StructNulls}).
   */
  public void abandonRow() {
    slots[current].clearRow(columns, at);
    Arrays.fill(set, false);
    rowBytes = 0;
    rowStarted = false;
    routed = false;
  }

  /** Whether a row is being built (a value was set since the last {@link #endRow()}). */
  public boolean rowStarted() {
    return rowStarted;
  }

  private void completeRow() {
    Arrays.fill(set, false);
    bytes += rowBytes + 16;
    rowBytes = 0;
    rowStarted = false;
    routed = false;
    rows++;
    at = ++slots[current].rows;
  }

  // ---------------------------------------------------------------- whole rows

  /**
   * Encodes a record (by column name) as one row; nothing of the map is kept.
   *
   * @throws InvalidRecordException naming the column, with nothing of the record buffered
   */
  public void addRecord(Map<String, ?> record) {
    if (rowStarted) {
      throw new IllegalStateException("a row is being built: end it (RowAppender.endRow) before writing a record");
    }
    if (record == null) {
      throw new InvalidRecordException(spec.key(), rowNumber(), "the record is null");
    }
    for (String name : record.keySet()) {
      if (spec.column(name) == null) {
        column(name);  // throws, naming it
      }
    }
    Object key = record.get(spec.key());
    if (key != null) {
      set(keyColumn, key);  // first: the row goes straight to its bucket's batch
    }
    for (var e : record.entrySet()) {
      if (key == null || !e.getKey().equals(spec.key())) {
        set(column(e.getKey()), e.getValue());
      }
    }
    endRow();
  }

  /** Adds a tombstone row: the key is deleted when the row is put (needs capability tombstones). */
  public void addTombstone(String key) {
    if (rowStarted) {
      throw new IllegalStateException("a row is being built: end it (RowAppender.endRow) before deleting a key");
    }
    if (!spec.has(io.lancecontext.core.schema.Capability.TOMBSTONES)) {
      throw new IllegalStateException("the spec has no tombstones capability");
    }
    if (key == null || key.isEmpty()) {
      throw new InvalidRecordException(spec.key(), rowNumber(), key == null ? "the key is null" : "the key is empty");
    }
    if (router != null) {
      byte[] utf8 = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      select(router.bucket(utf8, 0, utf8.length));
    }
    try {
      for (int i = 0; i < columns.size(); i++) {
        ColumnSpec c = columns.get(i);
        ValueWriter.write(vectors[i], at, i == keyColumn ? key : null, c, c.name(), rowNumber());
      }
    } catch (RuntimeException e) {
      abandonRow();
      throw e;
    }
    slots[current].tombstone.setSafe(at, 1);
    rowBytes = key.length();
    completeRow();
  }

  // ---------------------------------------------------------------- batches

  /**
   * The completed rows as batches in the dataset schema, one per bucket with rows in bucket order (one without a
   * {@link KeyRouter}); the caller closes them. The buffer starts empty.
   *
   * @throws IllegalStateException if a row is being built
   */
  public List<VectorSchemaRoot> takeAll() {
    if (rows == 0) {
      return List.of();
    }
    if (rowStarted) {
      throw new IllegalStateException("a row is being built: end it (RowAppender.endRow) first");
    }
    List<VectorSchemaRoot> out = new java.util.ArrayList<>();
    for (int b = 0; b < slots.length; b++) {
      if (slots[b] != null && slots[b].rows > 0) {
        out.add(slots[b].take());
        slots[b] = null;
      }
    }
    rowsBefore += rows;
    rows = 0;
    bytes = 0;
    select(current);
    return out;
  }

  /** Discards every buffered row and the row being built. */
  public void clear() {
    abandonRow();
    closeSlots();
    rows = 0;
    bytes = 0;
    select(0);
  }

  private void closeSlots() {
    for (int b = 0; b < slots.length; b++) {
      if (slots[b] != null) {
        slots[b].close();
        slots[b] = null;
      }
    }
  }

  /** Counts {@code n} keyless rows written by another path with this buffer's key ordinals. */
  public void consumeKeyless(long n) {
    keylessRows += n;
  }

  public KeyIds ids() {
    return ids;
  }

  @Override
  public void close() {
    closeSlots();
  }
}
