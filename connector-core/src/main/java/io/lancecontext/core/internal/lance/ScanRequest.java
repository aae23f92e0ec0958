package io.lancecontext.core.internal.lance;

import io.lancecontext.core.schema.VectorMetric;
import java.util.List;
import java.util.Optional;
import org.lance.ipc.FullTextQuery;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;

/**
 * What a scan of a {@link LanceDataset} reads: the options lancecontext passes to lance-core's scanner, and
 * only those. An option never set is not passed (lance-core's default applies). Mutable, like the builder it
 * stands for.
 */
public final class ScanRequest {
  private final List<String> columns;
  private String filter;
  private List<Integer> fragmentIds;
  private Boolean rowId;
  private Boolean rowAddress;
  private Long limit;
  private Long offset;
  private Query nearest;
  private FullTextQuery matching;
  private boolean prefilter;

  private ScanRequest(List<String> columns) {
    this.columns = columns;
  }

  /** A scan of {@code columns} (top-level names; empty for none, with a row id or address column). */
  public static ScanRequest of(List<String> columns) {
    return new ScanRequest(columns);
  }

  /** Only the rows matching {@code filter} (Lance SQL, see {@link LanceSql}). */
  public ScanRequest filter(String filter) {
    this.filter = filter;
    return this;
  }

  /** Only the fragments with these ids. */
  public ScanRequest fragments(List<Integer> ids) {
    this.fragmentIds = ids;
    return this;
  }

  /** Whether batches carry {@link RowIds#ROW_ID}. */
  public ScanRequest withRowId(boolean on) {
    this.rowId = on;
    return this;
  }

  /** Whether batches carry {@link RowIds#ROW_ADDRESS}. */
  public ScanRequest withRowAddress(boolean on) {
    this.rowAddress = on;
    return this;
  }

  /** At most {@code rows} rows (lance-core reads a limit of 0 as no limit). */
  public ScanRequest limit(long rows) {
    this.limit = rows;
    return this;
  }

  /** Skips the first {@code rows} rows. */
  public ScanRequest offset(long rows) {
    this.offset = rows;
    return this;
  }

  /**
   * The {@code k} rows nearest to {@code vector} in {@code column} by {@code metric} (a {@code _distance}
   * column is added), through the column's vector index where one covers a fragment ({@code nprobes}
   * partitions probed, {@code refineFactor} × k candidates re-ranked by exact distance) and by exact search
   * over the fragments it does not cover. With {@code prefilter} a filter applies before the search (the k rows
   * returned all match it; lance-core evaluates it over the whole table first), else after it (fewer may come back).
   */
  public ScanRequest nearest(String column, float[] vector, int k, VectorMetric metric, int nprobes, int refineFactor,
      boolean prefilter) {
    this.prefilter = prefilter;
    this.nearest = new Query.Builder().setColumn(column).setKey(vector).setK(k).setDistanceType(VectorIndex.distance(metric))
        .setMinimumNprobes(nprobes).setRefineFactor(refineFactor).build();
    return this;
  }

  /**
   * The rows whose {@code column} holds any of the terms of {@code text} as its inverted index tokenizes them (a
   * {@code _score} column is added), through the column's inverted index ({@link TextIndex}); fragments it does not
   * cover are searched without it. With {@code prefilter} a filter applies first.
   */
  public ScanRequest matching(String column, String text, boolean prefilter) {
    this.prefilter = prefilter;
    this.matching = FullTextQuery.match(text, column, 1.0f, Optional.of(0), 50, FullTextQuery.Operator.OR, 0);
    return this;
  }

  ScanOptions options() {
    ScanOptions.Builder b = new ScanOptions.Builder().columns(columns);
    if (filter != null) {
      b.filter(filter);
    }
    if (fragmentIds != null) {
      b.fragmentIds(fragmentIds);
    }
    if (rowId != null) {
      b.withRowId(rowId);
    }
    if (rowAddress != null) {
      b.withRowAddress(rowAddress);
    }
    if (limit != null) {
      b.limit(limit);
    }
    if (offset != null) {
      b.offset(offset);
    }
    if (nearest != null) {
      b.nearest(nearest).prefilter(prefilter);
    }
    if (matching != null) {
      b.fullTextQuery(matching).prefilter(prefilter);
    }
    return b.build();
  }
}
