package io.lancecontext.core.internal.lance;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.internal.read.TextTerms;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.ColumnSpec;
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
 *
 * <p>lance-core 7.0.0's inverted-index build deadlocks (every thread parked, forever) once its posting lists span
 * two batches when its CPU pool has one thread, which it has by default on a machine with 3 processors or fewer
 * ({@code max(1, processors - LANCE_IO_CORE_RESERVATION)}, reservation 2). So the index is built only where the pool
 * has at least 2 threads ({@link #buildable}): {@code LANCE_CPU_THREADS} of 2 or more, or enough processors.
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
      if (c == null || !c.type().isString()) {
        throw new BadOptionException(StoreOptions.SEARCH_TEXT_COLUMNS.key(), "'" + name + "' is not a string column of "
            + "the store" + (c == null ? "" : " (it is " + c.type() + ")") + "; its columns are " + spec.columnNames());
      }
      out.add(c);
    }
    return out;
  }

  /** Whether the base table {@code dataset} has the full-text index of {@code column}. */
  public static boolean exists(LanceDataset dataset, String column) {
    return dataset.lance().listIndexes().contains(name(column));
  }

  /**
   * Whether lance-core's CPU pool has the 2 threads an index build needs not to deadlock: {@code LANCE_CPU_THREADS}
   * when set, else the processors less {@code LANCE_IO_CORE_RESERVATION} (default 2).
   */
  public static boolean buildable() {
    return buildable(System.getenv("LANCE_CPU_THREADS"), System.getenv("LANCE_IO_CORE_RESERVATION"),
        Runtime.getRuntime().availableProcessors());
  }

  static boolean buildable(String cpuThreads, String reservation, int processors) {
    if (cpuThreads != null && !cpuThreads.isBlank()) {
      return parse(cpuThreads, 0) >= 2;
    }
    int reserved = reservation == null || reservation.isBlank() ? 2 : parse(reservation, 2);
    return processors - reserved >= 2;
  }

  private static int parse(String text, int otherwise) {
    try {
      return Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      return otherwise;
    }
  }

  private static final java.util.concurrent.atomic.AtomicBoolean TOLD = new java.util.concurrent.atomic.AtomicBoolean();

  /** Whether indexes of {@code columns} may be built in this JVM ({@link #buildable}; when not, said once per JVM). */
  private static boolean mayBuild(List<ColumnSpec> columns) {
    if (columns.isEmpty()) {
      return false;
    }
    if (!buildable()) {
      if (TOLD.compareAndSet(false, true)) {
        LOG.info("full-text indexes are not built in this JVM: lance-core 7.0.0's index build deadlocks when its CPU "
            + "pool has one thread, as it has with {} processors; set LANCE_CPU_THREADS=2 (or more) to build them. "
            + "Text searches read the base rows without one (correct, slower)", Runtime.getRuntime().availableProcessors());
      }
      return false;
    }
    return true;
  }

  /**
   * Whether an index is due: a text column without one while the base holds at least {@code minRows} rows, or
   * with one that leaves more than a tenth of the rows uncovered. Never where it cannot be built.
   */
  public static boolean stale(LanceDataset dataset, List<ColumnSpec> columns, long minRows) {
    if (!mayBuild(columns)) {
      return false;
    }
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
    if (!mayBuild(columns)) {
      return built;
    }
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
