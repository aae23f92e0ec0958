package io.lancecontext.flink.lookup;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.flink.RecordRows;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.logical.RowType;

/**
 * A lookup join on the store's key: core's point lookup (fresh tier in memory, then the base table through
 * its key index). Without a cache a lookup sees every add acknowledged before it started; with Flink's
 * {@code lookup.cache = PARTIAL} a cached row may be older by up to {@code lookup.partial-cache.expire-after-*}.
 * A failure core calls retryable ({@link LanceContextException#isRetryable()}) is retried up to
 * {@code lookup.max-retries} times; after a retryable {@link StoreClosedException} (the JVM's resident store
 * was closed under the open handle: {@code ContextStore.closeAllResident()}, shutdown) the retry opens the
 * store again, as core asks; an object store's transient answers (throttling, 503, a reset connection) are
 * retryable {@code StorageException}s and are retried on the same handle; other storage failures are not.
 * When the retries are used up, the lookup fails with an {@code IOException} naming the key, the store and
 * the option, its cause core's error.
 *
 * <p>Metrics (the lookup operator's group): {@code lookups} (store lookups made: every lookup without a
 * cache, the cache misses with one), {@code lookupKeysFound}, {@code lookupRetries} and
 * {@code lookupLatencyMs} (histogram, retries included). With {@code lookup.cache = PARTIAL} Flink's cache
 * reports its standard metrics in the subgroup {@code cache} ({@code hitCount}, {@code missCount},
 * {@code numCachedRecords}, {@code loadCount}), and {@link MeteredLookupCache} adds {@code hitRate} there.
 */
public final class LanceContextLookupFunction extends LookupFunction {
  private static final long serialVersionUID = 1L;

  private final Map<String, String> options;
  private final RowType rowType;
  private final int maxRetries;
  private transient ContextStore store;
  private transient String uri;
  private transient Counter lookups;
  private transient Counter retries;
  private transient Counter keysFound;
  private transient Histogram latency;

  public LanceContextLookupFunction(Map<String, String> options, RowType rowType, int maxRetries) {
    this.options = Map.copyOf(options);
    this.rowType = rowType;
    this.maxRetries = maxRetries;
  }

  @Override
  public void open(FunctionContext context) {
    MetricGroup metrics = context.getMetricGroup();
    lookups = metrics.counter("lookups");
    retries = metrics.counter("lookupRetries");
    keysFound = metrics.counter("lookupKeysFound");
    latency = metrics.histogram("lookupLatencyMs", new DescriptiveStatisticsHistogram(1024));
    store = ContextStore.open(options);
    uri = store.uri();
  }

  @Override
  public Collection<RowData> lookup(RowData keyRow) throws IOException {
    if (keyRow.isNullAt(0)) {
      return List.of();
    }
    String key = keyRow.getString(0).toString();
    long start = System.nanoTime();
    lookups.inc();
    for (int attempt = 0; ; attempt++) {
      try {
        if (store == null) {
          store = ContextStore.open(options);
        }
        List<RowData> out = new ArrayList<>(1);
        for (Map<String, Object> record : store.lookup(List.of(key), rowType.getFieldNames(), false)) {
          out.add(RecordRows.toRow(record, rowType));
        }
        latency.update((System.nanoTime() - start) / 1_000_000);
        keysFound.inc(out.isEmpty() ? 0 : 1);
        return out;
      } catch (LanceContextException e) {
        if (!e.isRetryable() || attempt >= maxRetries) {
          throw new IOException("lookup of key '" + key + "' in the store at " + uri + " failed after " + (attempt + 1)
              + " attempt(s) ('lookup.max-retries' = " + maxRetries + ")", e);
        }
        retries.inc();
        if (e instanceof StoreClosedException && store != null) {
          // the JVM's resident store was closed under this handle: only a handle opened again reaches the store
          store.close();
          store = null;
        }
      }
    }
  }

  @Override
  public void close() {
    if (store != null) {
      store.close();
    }
  }
}
