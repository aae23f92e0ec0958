package io.lancecontext.core;

import io.lancecontext.core.internal.codec.RecordCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The rows a search returned, nearest (or best scoring) first: the requested columns and the distance
 * ({@code _distance}, vector search) or score ({@code _score}, text search) of each. One Arrow batch; close the
 * result to release it.
 */
public final class SearchResult implements AutoCloseable {
  private final VectorSchemaRoot batch;
  private final RecordCodec codec;

  SearchResult(VectorSchemaRoot batch, RecordCodec codec) {
    this.batch = batch;
    this.codec = codec;
  }

  /** The rows, as one batch owned by this result. */
  public VectorSchemaRoot batch() {
    return batch;
  }

  /** The column names, in order (the distance or score last). */
  public List<String> columns() {
    List<String> out = new ArrayList<>();
    batch.getSchema().getFields().forEach(f -> out.add(f.getName()));
    return out;
  }

  public int size() {
    return batch.getRowCount();
  }

  /** The rows as records, best first; the distance or score (the last column) as a {@code Float}. */
  public List<Map<String, Object>> records() {
    List<String> columns = columns();
    String score = columns.get(columns.size() - 1);
    List<Map<String, Object>> out = codec.decode(batch, columns.subList(0, columns.size() - 1));
    FieldVector scores = batch.getVector(score);
    for (int r = 0; r < out.size(); r++) {
      out.get(r).put(score, scores.getObject(r));
    }
    return out;
  }

  @Override
  public void close() {
    batch.close();
  }
}
