package io.lancecontext.flink.search;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.TextQuery;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.types.DataType;

/**
 * A Flink SQL table function that enriches each row of a stream or table with the {@code k} rows of a store whose
 * text column best matches one of its strings: {@code LATERAL TABLE(lc_text_search(q.question))} emits, per input
 * row, the store's rows (the chosen columns) and their {@code _score}, best first. Core's
 * {@code ContextStore.search(TextQuery)} decides what is found and how it is scored: every add acknowledged before
 * the call, the newest row of a key only, no deleted row. A null text, or one without a term (letters or digits),
 * matches nothing. Register one per store and column:
 * {@code tableEnv.createTemporarySystemFunction("lc_text_search", new TextSearchFunction(options, "text_payload", 10))}.
 */
public final class TextSearchFunction extends StoreSearchFunction {
  private static final long serialVersionUID = 1L;
  static final String SCORE = "_score";

  /** Every column of the store, then {@code _score}. */
  public TextSearchFunction(Map<String, String> options, String column, int k) {
    this(options, column, k, null);
  }

  /**
   * {@code columns} of the store (null for all), then {@code _score}. Opens the store once to learn its columns; an
   * unknown or non-string {@code column} fails here, naming it.
   */
  public TextSearchFunction(Map<String, String> options, String column, int k, List<String> columns) {
    this(options, column, k, columns, null);
  }

  private TextSearchFunction(Map<String, String> options, String column, int k, List<String> columns,
      Predicate filter) {
    super(options, column, k, columns, filter, SCORE,
        c -> c.type().isString(), "a string column");
  }

  /** This search restricted to the rows matching {@code filter} (a prefilter); its columns must be the store's. */
  public TextSearchFunction withFilter(Predicate filter) {
    return new TextSearchFunction(options, column, k, columns, filter);
  }

  @Override
  DataType queryType() {
    return DataTypes.STRING();
  }

  /** Emits the {@code k} rows best matching {@code text}; nothing for a null text or one without a term. */
  public void eval(String text) {
    if (text == null) {
      return;
    }
    TextQuery q = TextQuery.matching(column, text, k).withColumns(columns);
    emit(store().search(filter == null ? q : q.withFilter(filter)));
  }
}
