package io.lancecontext.flink.lookup;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.flink.RecordRows;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.logical.RowType;

/**
 * A lookup join on the store's key: core's point lookup (fresh tier in memory, then the base table through
 * its key index). Without a cache a lookup sees every add acknowledged before it started; with Flink's
 * {@code lookup.cache = PARTIAL} a cached row may be older by up to {@code lookup.partial-cache.expire-after-*}.
 * A failure core calls retryable ({@link LanceContextException#isRetryable()}) is retried up to
 * {@code lookup.max-retries} times.
 */
public final class LanceContextLookupFunction extends LookupFunction {
  private static final long serialVersionUID = 1L;

  private final Map<String, String> options;
  private final RowType rowType;
  private final int maxRetries;
  private transient ContextStore store;

  public LanceContextLookupFunction(Map<String, String> options, RowType rowType, int maxRetries) {
    this.options = Map.copyOf(options);
    this.rowType = rowType;
    this.maxRetries = maxRetries;
  }

  @Override
  public void open(FunctionContext context) {
    store = ContextStore.open(options);
  }

  @Override
  public Collection<RowData> lookup(RowData keyRow) throws IOException {
    if (keyRow.isNullAt(0)) {
      return List.of();
    }
    String key = keyRow.getString(0).toString();
    for (int attempt = 0; ; attempt++) {
      try {
        List<RowData> out = new ArrayList<>(1);
        for (Map<String, Object> record : store.lookup(List.of(key), rowType.getFieldNames(), false)) {
          out.add(RecordRows.toRow(record, rowType));
        }
        return out;
      } catch (LanceContextException e) {
        if (!e.isRetryable() || attempt >= maxRetries) {
          throw new IOException("lookup of key '" + key + "' in " + store.uri() + " failed after " + (attempt + 1)
              + " attempt(s)", e);
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
