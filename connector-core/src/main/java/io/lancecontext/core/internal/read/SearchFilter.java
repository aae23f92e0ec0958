package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.VectorQuery;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * How a search's filter reaches lance-core's search of the base table, and which of the rows it returns the search
 * keeps. A filter of the user's goes to lance-core before the search (it may match few rows), with the keys the fresh
 * tier shadows excluded where they can be; the store's own rules (not deleted, not expired) pass nearly every row,
 * and lance-core would evaluate them over the whole base first (17 of 35 ms per vector search of a 100,000-row base):
 * those, and a filter lance-core gets only a superset of, are checked on the rows it returns ({@link #rows}).
 *
 * @param rules the search's rules
 * @param freshKeys the keys the fresh tier holds: their base rows are stale
 * @param prefilter whether lance-core applies a filter before the search
 * @param rendered the filter as lance-core reads it
 * @param sql the filter to pass ("true" for none)
 * @param columns the columns to read: the ones asked for, then those the check on the returned rows needs
 */
record SearchFilter(ScanRules rules, Set<String> freshKeys, boolean prefilter, LanceSql.Rendered rendered, String sql,
    List<String> columns) {

  static SearchFilter of(ScanRules rules, Set<String> freshKeys, List<String> columns) {
    boolean prefilter = !(rules.filter instanceof Predicate.True);
    LanceSql.Rendered rendered = prefilter ? LanceSql.renderSuperset(rules.baseFilter) : new LanceSql.Rendered("true", false);
    String sql = prefilter ? BaseScan.excluding(rendered.sql(), rules.spec.key(), freshKeys) : rendered.sql();
    Set<String> read = new LinkedHashSet<>(columns);
    if (!rendered.exact()) {
      read.addAll(Predicates.topLevelColumns(rules.baseFilter));
    }
    return new SearchFilter(rules, freshKeys, prefilter, rendered, sql, List.copyOf(read));
  }

  /** Passes the filter, if there is one, to {@code request}. */
  ScanRequest applyTo(ScanRequest request) {
    return sql.equals("true") ? request : request.filter(sql);
  }

  /** Which rows of a batch lance-core returned the search keeps. */
  interface Rows {
    /** Whether the row {@code row}, of key {@code key}, is the visible one of its key and matches the filter. */
    boolean keeps(String key, int row);
  }

  /** The check of the rows of {@code in}: not stale, not superseded, and matching what lance-core did not check. */
  Rows rows(VectorSchemaRoot in) {
    PredicateEvaluator eval = rendered.exact() ? null : new PredicateEvaluator(rules.baseFilter, in);
    return (key, row) -> !freshKeys.contains(key) && !rules.superseded.contains(key)
        && (eval == null || eval.matches(row));
  }

  /**
   * The column {@code name} of {@code spec}, and {@code k} checked to be 1 to {@link VectorQuery#MAX_K}: what every
   * search asks first.
   *
   * @throws SchemaException if there is no such column
   */
  static ColumnSpec column(SchemaSpec spec, String name, int k) {
    ColumnSpec column = name == null ? null : spec.column(name);
    if (column == null) {
      throw new SchemaException(name, "is not a column of the store; its columns are " + spec.columnNames());
    }
    checkK(k);
    return column;
  }

  /** Checks that {@code k}, the rows a search returns, is 1 to {@link VectorQuery#MAX_K}. */
  static void checkK(int k) {
    if (k < 1 || k > VectorQuery.MAX_K) {
      throw new IllegalArgumentException("k must be 1 to " + VectorQuery.MAX_K + ", not " + k);
    }
  }
}
