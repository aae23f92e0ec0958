package io.lancecontext.core.internal.lance;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.internal.read.TextTerms;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.lance.Dataset;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.InvertedIndexParams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inverted index of each text column named by {@code search.text-columns} (named {@code <column>_fts_idx}),
 * which full-text searches find base rows through. Its tokenizer is {@link TextTerms}' rule: runs of letters and
 * digits, lower-cased, no stemming, no stop words, no folding. Built, rebuilt and dropped as the vector indexes are
 * ({@link VectorIndex}): once the base holds {@code search.index.min-rows} rows, when more than a tenth of them sit
 * in fragments it does not cover, and after a compaction. lance-core searches the fragments an index does not cover
 * without it, so a missing or stale index makes searches slower, never different.
 */
public final class TextIndex {
  private static final Logger LOG = LoggerFactory.getLogger(TextIndex.class);

  private TextIndex() {}

  /** The index name of text column {@code column}. */
  public static String name(String column) {
    return column + "_fts_idx";
  }

  /**
   * The columns {@code search.text-columns} names, each a top-level string column of {@code spec}. The default
   * ({@code text_payload}) names no column of a store without one.
   *
   * @throws BadOptionException if the option names a column that is not a string column of the store
   */
  public static List<ColumnSpec> columns(SchemaSpec spec, StoreConfig config) {
    boolean defaulted = !config.asMap().containsKey(StoreOptions.SEARCH_TEXT_COLUMNS.key());
    List<ColumnSpec> out = new ArrayList<>();
    for (String name : config.get(StoreOptions.SEARCH_TEXT_COLUMNS)) {
      ColumnSpec c = spec.column(name);
      if (c == null && defaulted) {
        continue;
      }
      if (c == null || !isText(c)) {
        throw new BadOptionException(StoreOptions.SEARCH_TEXT_COLUMNS.key(), "'" + name + "' is not a string column of "
            + "the store" + (c == null ? "" : " (it is " + c.type() + ")") + "; its columns are " + spec.columnNames());
      }
      out.add(c);
    }
    return out;
  }

  /** Whether full-text search can search {@code column}: a top-level string column. */
  public static boolean isText(ColumnSpec column) {
    return column.type() == ColumnType.STRING || column.type() == ColumnType.LARGE_STRING;
  }

  /**
   * Whether an index is due: a text column without one while the base holds at least {@code minRows} rows, or
   * with one that leaves more than a tenth of the rows uncovered.
   */
  public static boolean stale(LanceDataset dataset, List<ColumnSpec> columns, long minRows) {
    for (ColumnSpec column : columns) {
      if (stale(KeyIndexCoverage.ofIndex(dataset, name(column.name())), minRows)) {
        return true;
      }
    }
    return false;
  }

  private static boolean stale(KeyIndexCoverage coverage, long minRows) {
    long rows = coverage.rows();
    return rows >= Math.max(minRows, 1) && (!coverage.exists() || coverage.uncoveredRows() * 10 > rows);
  }

  /** Builds the index of each of {@code columns} that {@link #stale} says is due; the columns built. */
  public static List<String> refreshIfStale(LanceDataset dataset, List<ColumnSpec> columns, long minRows) {
    List<String> built = new ArrayList<>();
    for (ColumnSpec column : columns) {
      KeyIndexCoverage coverage = KeyIndexCoverage.ofIndex(dataset, name(column.name()));
      if (stale(coverage, minRows)) {
        LOG.info("building the full-text index of '{}' over {} rows", column.name(), coverage.rows());
        var params = new InvertedIndexParams.Builder().baseTokenizer("simple").language("English")
            .maxTokenLength(TextTerms.LENGTH_LIMIT).lowerCase(true).stem(false).removeStopWords(false)
            .asciiFolding(false).withPosition(false).build();
        Dataset ds = dataset.lance();
        LanceErrors.run("build the full-text index on '" + column.name() + "' (" + coverage.rows() + " rows)", () ->
            ds.createIndex(List.of(column.name()), IndexType.INVERTED, Optional.of(name(column.name())),
                IndexParams.builder().setScalarIndexParams(params).build(), true));
        dataset.checkoutLatest();
        built.add(column.name());
      }
    }
    return built;
  }

  /** Drops every full-text index (after a compaction rewrote the fragments they cover; maintenance rebuilds them). */
  public static void dropAll(LanceDataset dataset, List<ColumnSpec> columns) {
    Dataset ds = dataset.lance();
    for (ColumnSpec column : columns) {
      String name = name(column.name());
      if (ds.listIndexes().contains(name)) {
        LanceErrors.run("drop the full-text index " + name, () -> ds.dropIndex(name));
        ds.checkoutLatest();
      }
    }
  }
}
