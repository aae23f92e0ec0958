package io.lancecontext.core.read;

import java.io.Serializable;
import java.util.List;

/**
 * A full-text search: the {@code k} rows of the LSM view whose text {@code column} best matches the terms of
 * {@code text}, each with its {@code _score} (higher is better). Terms are the runs of letters and digits of the
 * text, lower-cased; a row matches when its column holds one of them as a term. Only rows matching {@code filter}
 * are searched (a prefilter). See docs/search.md for the score.
 *
 * @param column a string column of the store
 * @param text the query; one without a term matches no row
 * @param k rows to return, 1 to {@link VectorQuery#MAX_K}
 * @param filter rows to search; never null (true searches every row)
 * @param columns columns to return besides the score, in order; null for every declared column
 * @param snapshot search the snapshot this token or tag names ({@link ScanSpec#atSnapshot}); null for now
 */
public record TextQuery(String column, String text, int k, Predicate filter, List<String> columns, String snapshot)
    implements Serializable {

  public TextQuery {
    filter = filter == null ? Predicate.alwaysTrue() : filter;
    columns = columns == null ? null : List.copyOf(columns);
  }

  /** The {@code k} rows whose {@code column} best matches the terms of {@code text}, every column returned. */
  public static TextQuery matching(String column, String text, int k) {
    return new TextQuery(column, text, k, null, null, null);
  }

  public TextQuery withFilter(Predicate p) {
    return new TextQuery(column, text, k, p, columns, snapshot);
  }

  public TextQuery withColumns(List<String> cols) {
    return new TextQuery(column, text, k, filter, cols, snapshot);
  }

  public TextQuery atSnapshot(String tokenOrTag) {
    return new TextQuery(column, text, k, filter, columns, tokenOrTag);
  }
}
