package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.ConfigOption;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.testing.StoreTest;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Handles of one store in one JVM share a resident store: which handle's options count (docs/options.md). */
class HandleOptionsTest extends StoreTest {
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"}]}";

  @Test
  void aResidentOptionThatDiffersFailsNamingTheOptionAndBothValues() {
    try (ContextStore first = ContextStore.open(options(dir, "s", SPEC, "gc.grace", "0s"))) {
      BadOptionException e = assertThrows(BadOptionException.class,
          () -> ContextStore.open(options(dir, "s", null, "gc.grace", "5min")));
      assertEquals("gc.grace", e.key());
      assertTrue(e.getMessage().contains("gc.grace=0s") && e.getMessage().contains("asked for 5min"), e.getMessage());

      BadOptionException byDefault = assertThrows(BadOptionException.class,
          () -> ContextStore.open(options(dir, "s", null, "write.put-timeout", "60s", "merge.trigger.generations", "3")));
      assertEquals("merge.trigger.generations", byDefault.key());
      assertTrue(byDefault.getMessage().contains("=8 (the default)"), byDefault.getMessage());
      assertEquals(1, ContextStore.residentStores(), "a refused open leaves the resident store as it was");
      first.add(java.util.List.of(rec("id", "a", "n", 1L)));
      assertEquals(1, first.count());
    }
  }

  @Test
  void equalOrUnsetResidentOptionsShareTheResidentStore() {
    try (ContextStore first = ContextStore.open(options(dir, "s", SPEC, "gc.grace", "600s"));
        ContextStore same = ContextStore.open(options(dir, "s", null, "gc.grace", "10min"));
        ContextStore unset = ContextStore.open(options(dir, "s", null))) {
      assertEquals(1, ContextStore.residentStores());
      same.add(java.util.List.of(rec("id", "a", "n", 1L)));
      assertEquals(1, unset.count());
    }
  }

  @Test
  void everyResidentScopedOptionIsChecked() {
    Map<String, String> differing = new java.util.HashMap<>(Map.of("write.put-timeout", "7s", "write.fence-backoff", "3s",
        "write.idle-timeout", "7min", "write.batch-bytes", "1MiB", "merge.trigger.generations", "2",
        "merge.trigger.interval", "7min", "gc.grace", "7min", "compaction.background", "true",
        "compaction.target-rows-per-fragment", "1000", "index.key", "zonemap"));
    differing.put("read.fresh-cache-bytes", "1MiB");
    differing.putAll(Map.of("merge.max-bytes", "1MiB", "merge.max-inputs", "7", "merge.flush-timeout", "7min",
        "merge.append-min-rows", "7", "search.index.min-rows", "7", "search.text-columns", "role",
        "search.index.check-interval", "7s", "search.index.rebuild-interval", "7s"));
    try (ContextStore first = ContextStore.open(options(dir, "s", SPEC))) {
      for (ConfigOption<?> o : StoreOptions.ALL) {
        if (o.scope() != ConfigOption.Scope.RESIDENT) {
          continue;
        }
        String value = differing.get(o.key());
        assertTrue(value != null, "no differing test value for resident option " + o.key());
        BadOptionException e = assertThrows(BadOptionException.class,
            () -> ContextStore.open(options(dir, "s", null, o.key(), value)), o.key());
        assertEquals(o.key(), e.key());
      }
    }
  }

  @Test
  void storageOptionsThatDifferFailWithoutShowingValues() {
    Map<String, String> o = new HashMap<>(options(dir, "s", SPEC));
    o.put("storage.aws_secret_access_key", "first-secret");
    try (ContextStore first = ContextStore.open(o)) {
      Map<String, String> other = new HashMap<>(options(dir, "s", null));
      other.put("storage.aws_secret_access_key", "second-secret");
      BadOptionException e = assertThrows(BadOptionException.class, () -> ContextStore.open(other));
      assertEquals("storage.aws_secret_access_key", e.key());
      assertTrue(!e.getMessage().contains("first-secret") && !e.getMessage().contains("second-secret"), e.getMessage());
    }
  }

  @Test
  void handleOptionsAreEachHandlesOwn() {
    try (ContextStore small = ContextStore.open(options(dir, "s", SPEC, "write.batch-rows", "2"));
        ContextStore big = ContextStore.open(options(dir, "s", null, "write.batch-rows", "1000"))) {
      try (StoreWriter w = small.newWriter()) {
        w.write(rec("id", "a", "n", 1L));
        w.write(rec("id", "b", "n", 2L));
        assertEquals(2, big.count(), "two rows fill a writer of the handle with write.batch-rows=2");
        w.commit();
      }
      try (StoreWriter w = big.newWriter()) {
        w.write(rec("id", "c", "n", 3L));
        w.write(rec("id", "d", "n", 4L));
        assertEquals(2, small.count(), "the other handle's writer still buffers");
        w.commit();
      }
      assertEquals(4, small.count());
    }
  }

  @Test
  void aResidentOptionChangedOnceEveryHandleClosedReopensTheStoreWithTheNewValue() {
    // a notebook's next cell, or the next Spark job on an executor whose resident store outlived the last one
    try (ContextStore first = ContextStore.open(options(dir, "s", SPEC, "gc.grace", "0s", "write.idle-timeout", "1h"))) {
      first.add(java.util.List.of(rec("id", "a", "n", 1L)));
    }
    assertEquals(1, ContextStore.residentStores(), "the store stays resident between jobs");
    try (ContextStore second = ContextStore.open(options(dir, "s", null, "gc.grace", "5min"))) {
      BadOptionException e = assertThrows(BadOptionException.class,
          () -> ContextStore.open(options(dir, "s", null, "gc.grace", "0s")), "the resident store now has 5min");
      assertTrue(e.getMessage().contains("gc.grace=5min"), e.getMessage());
      second.add(java.util.List.of(rec("id", "b", "n", 2L)));
      assertEquals(2, second.count(), "nothing of the first store's rows was lost by the reopen");
      assertEquals(1, ContextStore.residentStores());
    }
  }

  @Test
  void rotatedStorageCredentialsApplyToTheNextHandleOnceTheOthersAreClosed() {
    Map<String, String> o = new HashMap<>(options(dir, "s", SPEC));
    o.put("storage.aws_session_token", "token-1");
    try (ContextStore first = ContextStore.open(o)) {
      first.add(java.util.List.of(rec("id", "a", "n", 1L)));
    }
    Map<String, String> rotated = new HashMap<>(options(dir, "s", null));
    rotated.put("storage.aws_session_token", "token-2");
    try (ContextStore second = ContextStore.open(rotated)) {
      assertEquals(1, second.count());
    }
  }

  @Test
  void theLayoutStaysFixedWhenTheStoreReopens() {
    try (ContextStore first = ContextStore.open(options(dir, "s", SPEC))) {
      first.add(java.util.List.of(rec("id", "a", "n", 1L)));
    }
    BadOptionException e = assertThrows(BadOptionException.class,
        () -> ContextStore.open(options(dir, "s", null, "shards", "3", "gc.grace", "1s")));
    assertEquals("shards", e.key());
    assertTrue(e.getMessage().contains("2 shards") && e.getMessage().contains("got 3"), e.getMessage());
  }
}
