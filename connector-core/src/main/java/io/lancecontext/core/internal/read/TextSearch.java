package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.StructNulls;
import io.lancecontext.core.internal.lance.TextIndex;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A full-text search over one {@link LsmSnapshot}: the k rows of the LSM view whose text column best matches the
 * query's terms ({@link TextTerms}), scored with BM25 without length normalisation over the rows searched (the
 * view's rows matching the filter):
 *
 * <pre>score = Σ over the query's terms t in the row  idf(t) · tf · (k1 + 1) / (tf + k1),   k1 = 1.2
 * idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))</pre>
 *
 * with {@code tf} the times t occurs in the row's column, {@code N} the rows searched and {@code df(t)} those of
 * them holding t. Every statistic is exact over the LSM view, so a row scores the same whichever tier holds it:
 *
 * <ol>
 *   <li>The fresh tier's visible rows (newest of their key, not deleted, not superseded, matching the filter) are
 *       read and their terms counted in Java.</li>
 *   <li>The base table's rows holding any query term come from lance-core's full-text search through the column's
 *       inverted index ({@link TextIndex}; fragments it does not cover, and a column without one, are searched
 *       without it), the filter applied first; a base row whose key the fresh tier holds is stale and dropped.</li>
 *   <li>Each row holding a query term is scored, the k best (ties by key) are read by key from the same snapshot
 *       with the requested columns, plus {@value #SCORE}.</li>
 * </ol>
 *
 * Its cost grows with the rows holding a query term, not with the store: a query of common words reads many rows.
 */
public final class TextSearch {
  /** The column holding each row's score. */
  public static final String SCORE = "_score";
  static final double K1 = 1.2;

  private TextSearch() {}

  /** A row holding a query term: its key and how often it holds each term (in the query's term order). */
  private record Match(String key, int[] counts) {}

  /**
   * Runs {@code query} over {@code snapshot}, judging expiry at {@code now}. Returns one batch, best row first,
   * which the caller closes.
   */
  public static VectorSchemaRoot run(SchemaSpec spec, LsmSnapshot snapshot, TextQuery query, Instant now,
      BufferAllocator allocator) {
    ColumnSpec column = check(spec, query);
    List<String> terms = new ArrayList<>(TextTerms.counts(query.text()).keySet());
    List<String> output = ScanRules.resolveColumns(spec, ScanSpec.all().withColumns(query.columns()));
    List<String> read = new ArrayList<>(output);
    if (!read.contains(spec.key())) {
      read.add(spec.key());
    }
    if (terms.isEmpty()) {
      // no row holds a term of a text without one (an Elasticsearch match query, PostgreSQL's to_tsquery alike)
      return VectorSearch.rows(spec, snapshot, List.of(), output, read, null, now, allocator, SCORE, true);
    }
    ScanSpec candidates = new ScanSpec(List.of(spec.key(), column.name()), query.filter(), 0, -1, false, false, now,
        null);
    TextTerms.Matcher matcher = new TextTerms.Matcher(terms);
    List<Match> matches = new ArrayList<>();
    long rows;
    try {
      // the fresh tier (its visible rows counted on the way) and the base's row count beside the base search
      CompletableFuture<Fresh> fresh = CompletableFuture.supplyAsync(
          () -> searchFresh(spec, snapshot, candidates, column.name(), matcher, allocator), VectorSearch.FRESH_SEARCHES);
      CompletableFuture<Long> baseRows = CompletableFuture.supplyAsync(
          () -> countBase(spec, snapshot, query.filter(), now, allocator), VectorSearch.FRESH_SEARCHES);
      RuntimeException failed = null;
      try {
        searchBase(new ScanRules(spec, snapshot, candidates, allocator), snapshot, column, terms, matcher, matches);
      } catch (RuntimeException e) {
        failed = e;
      }
      long[] counted = {0};
      // both end before this returns, whatever happened: the caller closes the snapshot they read
      failed = VectorSearch.join(fresh, x -> {
        matches.addAll(x.matches());
        counted[0] += x.rows();
      }, failed);
      failed = VectorSearch.join(baseRows, n -> counted[0] += n, failed);
      if (failed != null) {
        throw failed;
      }
      rows = counted[0];
    } catch (RuntimeException e) {
      throw LanceErrors.translate("search the text of '" + column.name() + "'", e);
    }
    double[] idf = new double[terms.size()];
    for (int t = 0; t < terms.size(); t++) {
      int df = 0;
      for (Match m : matches) {
        df += m.counts()[t] > 0 ? 1 : 0;
      }
      idf[t] = Math.log(1 + (rows - df + 0.5) / (df + 0.5));
    }
    TopK top = new TopK(query.k());
    for (Match m : matches) {
      double score = 0;
      for (int t = 0; t < terms.size(); t++) {
        int tf = m.counts()[t];
        if (tf > 0) {
          score += idf[t] * tf * (K1 + 1) / (tf + K1);
        }
      }
      top.offer(m.key(), (float) -score);  // TopK keeps the smallest: the best score first
    }
    return VectorSearch.rows(spec, snapshot, top.nearestFirst(), output, read, null, now, allocator, SCORE, true);
  }

  private static ColumnSpec check(SchemaSpec spec, TextQuery query) {
    ColumnSpec column = SearchFilter.column(spec, query.column(), query.k());
    if (!column.type().isString()) {
      throw new SchemaException(column.name(), "is a " + column.type() + " column; a text search needs a string column");
    }
    if (query.text() == null) {
      throw new IllegalArgumentException("a text search needs a text to match");
    }
    return column;
  }

  /** How often the text of row {@code row} holds each query term; null if it holds none. */
  private static int[] counts(FieldVector texts, int row, TextTerms.Matcher matcher) {
    return texts.isNull(row) ? null : matcher.counts(texts.getObject(row).toString());
  }

  /** The fresh tier's matches and how many visible rows it holds. */
  private record Fresh(List<Match> matches, long rows) {}

  /** Counts the terms of every visible fresh row, where it is (no copy of the fresh tier). */
  private static Fresh searchFresh(SchemaSpec spec, LsmSnapshot snapshot, ScanSpec candidates, String column,
      TextTerms.Matcher matcher, BufferAllocator allocator) {
    ScanRules rules = new ScanRules(spec, snapshot, candidates, allocator);
    List<Match> matches = new ArrayList<>();
    long[] visible = {0};
    FreshScan.Emitter match = (in, rows, count, blobSource, transferable) -> {
      visible[0] += count;
      VarCharVector keys = (VarCharVector) in.getVector(spec.key());
      FieldVector texts = in.getVector(column);
      if (texts == null) {
        return null;  // written before the column existed: no text, no match
      }
      for (int i = 0; i < count; i++) {
        int[] c = counts(texts, rows[i], matcher);
        if (c != null) {
          matches.add(new Match(new String(keys.get(rows[i]), StandardCharsets.UTF_8), c));
        }
      }
      return null;
    };
    try (FreshScan scan = new FreshScan(rules, snapshot, allocator, match)) {
      scan.next();  // counts every batch; nothing is handed out
    }
    return new Fresh(matches, visible[0]);
  }

  /**
   * The base rows holding a query term and matching the filter, those the fresh tier shadows (and those the filter
   * rejects where Lance got a superset of it) dropped.
   */
  private static void searchBase(ScanRules rules, LsmSnapshot snapshot, ColumnSpec column, List<String> terms,
      TextTerms.Matcher matcher, List<Match> matches) {
    LanceDataset ds = snapshot.base().dataset();
    if (ds.fragments().isEmpty()) {
      return;
    }
    SchemaSpec spec = rules.spec;
    boolean indexed = TextIndex.exists(ds, column.name());
    // lance-core 7.0.0 adds its own score to an indexed search whether asked or not, and warns unless it is asked for
    SearchFilter filter = SearchFilter.of(rules, snapshot.freshKeys(),
        indexed ? List.of(spec.key(), column.name(), SCORE) : List.of(spec.key(), column.name()));
    ScanRequest request = ScanRequest.of(filter.columns());
    if (indexed) {
      request.matching(column.name(), String.join(" ", terms), filter.prefilter());
    }
    try (ScanHandle scan = ds.scan(filter.applyTo(request))) {
      while (scan.reader().loadNextBatch()) {
        VectorSchemaRoot in = scan.reader().getVectorSchemaRoot();
        StructNulls.repair(spec, ds, in);
        VarCharVector keys = (VarCharVector) in.getVector(spec.key());
        FieldVector texts = in.getVector(column.name());
        SearchFilter.Rows visible = filter.rows(in);
        for (int r = 0; r < in.getRowCount(); r++) {
          int[] c = counts(texts, r, matcher);
          if (c == null) {
            continue;
          }
          String key = new String(keys.get(r), StandardCharsets.UTF_8);
          if (visible.keeps(key, r)) {
            matches.add(new Match(key, c));
          }
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("search the base table's '" + column.name() + "'", e);
    }
  }

  /**
   * How many of a snapshot's base rows a search with a filter searches, and until when: the earliest expiry among
   * them ({@code Long.MAX_VALUE} if none expires), in microseconds since the epoch.
   */
  private record BaseRows(long rows, long validUntilMicros) {}

  /** What {@link BaseRows} are kept under, per snapshot (see {@link LsmSnapshot#derived}). */
  private record BaseRowsKey(SchemaSpec spec, Predicate filter) {}

  /**
   * The base rows searched: the view's base rows matching {@code filter} (the fresh ones are counted as searched).
   * Kept with the snapshot's rows until the first of them expires: the next search of an unchanged store counts
   * nothing (a count of 300,000 rows takes about 90 ms).
   */
  private static long countBase(SchemaSpec spec, LsmSnapshot snapshot, Predicate filter, Instant now,
      BufferAllocator allocator) {
    BaseRowsKey key = new BaseRowsKey(spec, filter);
    long nowMicros = Math.multiplyExact(now.getEpochSecond(), 1_000_000L) + now.getNano() / 1_000;
    if (snapshot.derived(key) instanceof BaseRows known && nowMicros < known.validUntilMicros()) {
      return known.rows();
    }
    boolean expiring = spec.has(Capability.LIFECYCLE) && spec.column(Predicates.EXPIRES_AT) != null;
    ScanSpec all = new ScanSpec(expiring ? List.of(Predicates.EXPIRES_AT) : List.of(), filter, 0, -1, false, false, now, null);
    long n = 0;
    long validUntil = Long.MAX_VALUE;  // every row counted expires after now, or never
    try (StoreScan scan = new StoreScan(spec, snapshot, all, allocator, ReadSplit.Part.BASE, null)) {
      while (scan.next()) {
        VectorSchemaRoot batch = scan.batch();
        n += batch.getRowCount();
        if (expiring) {
          TimeStampVector expiry = (TimeStampVector) batch.getVector(Predicates.EXPIRES_AT);
          for (int r = 0; r < batch.getRowCount(); r++) {
            if (!expiry.isNull(r)) {
              validUntil = Math.min(validUntil, expiry.get(r));
            }
          }
        }
      }
    }
    snapshot.keepDerived(key, new BaseRows(n, validUntil));
    return n;
  }
}
