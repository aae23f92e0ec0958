package io.lancecontext.core.internal.codec;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Converts records ({@code Map<String, Object>} by column name) to and from Arrow batches in a store's
 * dataset schema. Nested structs are maps by field name, lists are {@link List}s, vectors are
 * {@code float[]}; the Java types accepted and produced per column type are listed in
 * {@link ValueWriter} and {@link ValueReader}.
 *
 * <p>Encoding rejects unknown columns, wrong types, wrong vector lengths, nulls in non-nullable
 * columns and a null or empty key, with an {@link InvalidRecordException} naming the column and row;
 * nothing is returned for a batch with a bad record. A record without its key column gets a
 * time-ordered UUIDv7 key. Decoding matches columns by name, so it tolerates reordered columns and
 * columns missing from older data (decoded as nulls). Thread-safe.
 */
public final class RecordCodec {
  private final SchemaSpec spec;

  public RecordCodec(SchemaSpec spec) {
    this.spec = spec;
  }

  public SchemaSpec spec() {
    return spec;
  }

  /**
   * Encodes records into a new batch in the dataset schema ({@link SchemaSpec#toArrowSchema()}). The
   * caller owns (and closes) the returned root. The input maps are not modified.
   */
  public VectorSchemaRoot encode(List<? extends Map<String, ?>> records, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(spec.toArrowSchema(), allocator);
    try {
      allocateFor(root, records.size());
      for (int row = 0; row < records.size(); row++) {
        Map<String, ?> record = records.get(row);
        if (record == null) {
          throw new InvalidRecordException(spec.key(), row, "the record is null");
        }
        for (String name : record.keySet()) {
          if (spec.column(name) == null) {
            throw new InvalidRecordException(name, row, "unknown column; the store's columns are " + spec.columnNames());
          }
        }
        for (ColumnSpec c : spec.columns()) {
          FieldVector v = root.getVector(c.name());
          Object value = record.get(c.name());
          if (value == null && c.name().equals(spec.key()) && !record.containsKey(c.name())) {
            value = Uuid7.nextString();
          }
          ValueWriter.write(v, row, value, c, c.name(), row);
        }
      }
      root.setRowCount(records.size());
      BatchValidator.validate(spec, root);
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /**
   * Encodes tombstones (deletions) for the given keys; only for specs with the {@code tombstones}
   * capability. Every other column is null.
   */
  public VectorSchemaRoot encodeTombstones(List<String> keys, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(spec.toArrowSchema(), allocator);
    try {
      FieldVector marker = root.getVector(SystemColumns.TOMBSTONE);
      if (marker == null) {
        throw new IllegalStateException("the spec has no tombstones capability");
      }
      allocateFor(root, keys.size());
      VarCharVector key = (VarCharVector) root.getVector(spec.key());
      for (int row = 0; row < keys.size(); row++) {
        ValueWriter.write(key, row, keys.get(row), spec.column(spec.key()), spec.key(), row);
        ((BitVector) marker).setSafe(row, 1);
      }
      root.setRowCount(keys.size());
      BatchValidator.validate(spec, root);
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /**
   * Allocates every vector for {@code rows} rows rather than Arrow's default of about 4,000: lance-core
   * keeps each put's buffers at their allocated capacity until the generation is sealed, so a one-row add
   * at the default capacity pinned about 1.6 MB (docs/lance-core-7.md). Writes past it still grow the
   * vectors ({@code setSafe}).
   */
  private static void allocateFor(VectorSchemaRoot root, int rows) {
    for (FieldVector v : root.getFieldVectors()) {
      v.setInitialCapacity(Math.max(1, rows));
    }
    root.allocateNew();
  }

  /** Decodes every row; each map holds every declared column (null where the batch lacks it). */
  public List<Map<String, Object>> decode(VectorSchemaRoot root) {
    return decode(root, spec.columnNames());
  }

  /** Decodes every row, keeping only {@code columns} (in that order). */
  public List<Map<String, Object>> decode(VectorSchemaRoot root, List<String> columns) {
    List<Map<String, Object>> out = new ArrayList<>(root.getRowCount());
    FieldVector[] vectors = new FieldVector[columns.size()];
    ColumnSpec[] specs = new ColumnSpec[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      vectors[i] = root.getVector(columns.get(i));
      specs[i] = spec.column(columns.get(i));
    }
    for (int row = 0; row < root.getRowCount(); row++) {
      Map<String, Object> record = new LinkedHashMap<>();
      for (int i = 0; i < vectors.length; i++) {
        record.put(columns.get(i), vectors[i] == null ? null : ValueReader.read(vectors[i], row, specs[i]));
      }
      out.add(record);
    }
    return out;
  }

  /** Decodes one row. */
  public Map<String, Object> decodeRow(VectorSchemaRoot root, int row) {
    Map<String, Object> record = new LinkedHashMap<>();
    for (ColumnSpec c : spec.columns()) {
      FieldVector v = root.getVector(c.name());
      record.put(c.name(), v == null ? null : ValueReader.read(v, row, c));
    }
    return record;
  }
}
