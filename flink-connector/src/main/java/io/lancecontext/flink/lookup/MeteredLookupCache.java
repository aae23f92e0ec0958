package io.lancecontext.flink.lookup;

import java.util.Collection;
import java.util.concurrent.atomic.LongAdder;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.groups.CacheMetricGroup;
import org.apache.flink.table.connector.source.lookup.cache.LookupCache;
import org.apache.flink.table.data.RowData;

/**
 * Flink's lookup cache ({@code lookup.cache = PARTIAL}) with one more metric in its {@code cache} group:
 * {@code hitRate}, the share of probes since the cache opened that it answered (0 before the first probe).
 * Everything else, Flink's standard cache metrics included, is the wrapped cache's.
 */
public final class MeteredLookupCache implements LookupCache {
  private static final long serialVersionUID = 1L;

  private final LookupCache cache;
  private transient LongAdder hits;
  private transient LongAdder probes;

  public MeteredLookupCache(LookupCache cache) {
    this.cache = cache;
  }

  @Override
  public void open(CacheMetricGroup metrics) {
    hits = new LongAdder();
    probes = new LongAdder();
    cache.open(metrics);
    metrics.gauge("hitRate", (Gauge<Double>) () -> {
      long n = probes.sum();
      return n == 0 ? 0.0 : hits.sum() / (double) n;
    });
  }

  @Override
  public Collection<RowData> getIfPresent(RowData key) {
    Collection<RowData> rows = cache.getIfPresent(key);
    probes.increment();
    if (rows != null) {
      hits.increment();
    }
    return rows;
  }

  @Override
  public Collection<RowData> put(RowData key, Collection<RowData> rows) {
    return cache.put(key, rows);
  }

  @Override
  public void invalidate(RowData key) {
    cache.invalidate(key);
  }

  @Override
  public long size() {
    return cache.size();
  }

  @Override
  public void close() throws Exception {
    cache.close();
  }
}
