package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.read.Predicate;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * How a search's filter reaches lance-core's search of the base table. A filter of the user's goes to lance-core
 * before the search (it may match few rows), with the keys the fresh tier shadows excluded where they can be; the
 * store's own rules (not deleted, not expired) pass nearly every row, and lance-core would evaluate them over the
 * whole base first (17 of 35 ms per vector search of a 100,000-row base): those, and a filter lance-core gets only a
 * superset of, are checked on the rows it returns ({@link #evaluator}).
 *
 * @param prefilter whether lance-core applies a filter before the search
 * @param rendered the filter as lance-core reads it
 * @param sql the filter to pass ("true" for none)
 * @param columns the columns to read: the ones asked for, then those the check on the returned rows needs
 */
record SearchFilter(boolean prefilter, LanceSql.Rendered rendered, String sql, Set<String> columns) {

  static SearchFilter of(ScanRules rules, Set<String> freshKeys, List<String> columns) {
    boolean prefilter = !(rules.filter instanceof Predicate.True);
    LanceSql.Rendered rendered = prefilter ? LanceSql.renderSuperset(rules.baseFilter) : new LanceSql.Rendered("true", false);
    String sql = prefilter ? BaseScan.excluding(rendered.sql(), rules.spec.key(), freshKeys) : rendered.sql();
    Set<String> read = new LinkedHashSet<>(columns);
    if (!rendered.exact()) {
      read.addAll(Predicates.topLevelColumns(rules.baseFilter));
    }
    return new SearchFilter(prefilter, rendered, sql, read);
  }

  /** The check of the rows of {@code in} that lance-core's filter does not make; null when it makes every one. */
  PredicateEvaluator evaluator(ScanRules rules, VectorSchemaRoot in) {
    return rendered.exact() ? null : new PredicateEvaluator(rules.baseFilter, in);
  }
}
