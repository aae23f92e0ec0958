package io.lancecontext.core.internal.read;

import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A hybrid search over one {@link LsmSnapshot}: a vector search and a full-text search of the same view, their
 * rankings fused by reciprocal rank fusion. Each search ranks its {@link #candidates} best rows (its own filter
 * applied first); a row's relevance is the sum over the rankings holding it of {@code 1 / (60 + rank)}, rank 1 the
 * best, and the {@code k} most relevant rows (ties by key) are read with the requested columns, plus
 * {@value #RELEVANCE}. Both searches see the same snapshot, so what each finds is the LSM view's: the newest row of
 * a key, no deleted row, every acknowledged add.
 */
public final class HybridSearch {
  /** The column holding each row's fused relevance (higher is better). */
  public static final String RELEVANCE = "_relevance_score";
  /** Reciprocal rank fusion's constant: a rank's weight is {@code 1 / (RRF_K + rank)}. */
  static final int RRF_K = 60;

  private HybridSearch() {}

  /** The rows each search ranks for a hybrid search of {@code k}: twice k, at least 20. */
  public static int candidates(int k) {
    return Math.min(VectorQuery.MAX_K, Math.max(2 * k, 20));
  }

  /**
   * Runs both searches over {@code snapshot}, judging expiry at {@code now}; returns one batch, most relevant row first,
   * with the vector query's columns (the text query's when it names none), which the caller closes.
   *
   * @throws IllegalArgumentException if the queries name different snapshots, or {@code k} is out of range
   */
  public static VectorSchemaRoot run(SchemaSpec spec, LsmSnapshot snapshot, VectorQuery vector, TextQuery text, int k,
      Instant now, VectorSearch.Tuning tuning, BufferAllocator allocator) {
    if (!Objects.equals(vector.snapshot(), text.snapshot())) {
      throw new IllegalArgumentException("a hybrid search's vector and text queries name different snapshots ('"
          + vector.snapshot() + "' and '" + text.snapshot() + "')");
    }
    SearchFilter.checkK(k);  // before either search runs
    int n = candidates(k);
    List<String> key = List.of(spec.key());
    Map<String, Double> relevance = new HashMap<>();
    try (VectorSchemaRoot byVector = VectorSearch.run(spec, snapshot,
        VectorQuery.nearest(vector.column(), vector.vector(), n).withFilter(vector.filter()).withColumns(key), now,
        tuning, allocator)) {
      fuse(byVector, spec.key(), relevance);
    }
    try (VectorSchemaRoot byText = TextSearch.run(spec, snapshot,
        TextQuery.matching(text.column(), text.text(), n).withFilter(text.filter()).withColumns(key), now, allocator)) {
      fuse(byText, spec.key(), relevance);
    }
    TopK top = new TopK(k);
    relevance.forEach((row, score) -> top.offer(row, (float) -score));  // TopK keeps the smallest: the best first
    List<String> columns = vector.columns() != null ? vector.columns() : text.columns();
    List<String> output = ScanRules.resolveColumns(spec, ScanSpec.all().withColumns(columns));
    List<String> read = new ArrayList<>(output);
    if (!read.contains(spec.key())) {
      read.add(spec.key());
    }
    return VectorSearch.rows(spec, snapshot, top.nearestFirst(), output, read, null, now, allocator, RELEVANCE, true);
  }

  /** Adds each row's reciprocal rank in {@code ranked} (best first) to its relevance. */
  private static void fuse(VectorSchemaRoot ranked, String keyColumn, Map<String, Double> relevance) {
    VarCharVector keys = (VarCharVector) ranked.getVector(keyColumn);
    for (int r = 0; r < ranked.getRowCount(); r++) {
      relevance.merge(new String(keys.get(r), StandardCharsets.UTF_8), 1.0 / (RRF_K + r + 1), Double::sum);
    }
  }
}
