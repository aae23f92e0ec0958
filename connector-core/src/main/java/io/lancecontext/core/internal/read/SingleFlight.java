package io.lancecontext.core.internal.read;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * A small cache of values that are costly to compute: a value is computed once (single flight: callers
 * asking for it meanwhile wait for that computation, callers of other keys do not), outside any lock, and
 * kept among the {@code maxEntries} most recently used. A failed computation is not kept.
 */
final class SingleFlight<K, V> {
  private final Cache<K, CompletableFuture<V>> values;

  SingleFlight(long maxEntries) {
    this.values = Caffeine.newBuilder().maximumSize(maxEntries).executor(Runnable::run).build();
  }

  V get(K key, Supplier<V> compute) {
    CompletableFuture<V> mine = new CompletableFuture<>();
    CompletableFuture<V> prior = values.asMap().putIfAbsent(key, mine);
    if (prior == null) {
      try {
        V v = compute.get();
        mine.complete(v);
        return v;
      } catch (RuntimeException | Error e) {
        values.asMap().remove(key, mine);
        mine.completeExceptionally(e);
        throw e;
      }
    }
    try {
      return prior.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }

  void clear() {
    values.invalidateAll();
  }
}
