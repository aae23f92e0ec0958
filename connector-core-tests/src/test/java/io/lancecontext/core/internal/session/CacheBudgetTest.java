package io.lancecontext.core.internal.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lancecontext.core.error.BadOptionException;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CacheBudgetTest {
  private static CacheBudget resolve(Long option, String property, String env) {
    Map<String, String> props = property == null ? Map.of() : Map.of(CacheBudget.PROPERTY, property);
    Map<String, String> envs = env == null ? Map.of() : Map.of(CacheBudget.PROPERTY, env);
    return CacheBudget.resolve(Optional.ofNullable(option), props::get, envs::get);
  }

  @Test
  void optionThenSystemPropertyThenEnvironmentThenDefault() {
    assertEquals(new CacheBudget(1L << 20, "option cache.bytes"), resolve(1L << 20, "64MiB", "128MiB"));
    assertEquals(new CacheBudget(64L << 20, "system property LANCECONTEXT_CACHE_BYTES"), resolve(null, "64MiB", "128MiB"));
    assertEquals(new CacheBudget(128L << 20, "environment variable LANCECONTEXT_CACHE_BYTES"), resolve(null, null, "128MiB"));
    assertEquals(new CacheBudget(2L << 30, "default"), resolve(null, null, null));
  }

  @Test
  void zeroMeansNoSharingAndTheSplitIsSixToOne() {
    assertFalse(resolve(0L, null, null).shared());
    CacheBudget b = resolve(7L << 20, null, null);
    assertEquals(6L << 20, b.indexCacheBytes());
    assertEquals(1L << 20, b.metadataCacheBytes());
  }

  @Test
  void aBadEnvironmentValueNamesTheOption() {
    BadOptionException e = assertThrows(BadOptionException.class, () -> resolve(null, null, "lots"));
    assertEquals("cache.bytes", e.key());
  }
}
