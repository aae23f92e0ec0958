package io.lancecontext.core;

import static io.lancecontext.core.ArrowBatches.batch;
import static io.lancecontext.core.ArrowBatches.int64;
import static io.lancecontext.core.ArrowBatches.utf8;
import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static io.lancecontext.core.StoreTestSupport.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.lancecontext.core.internal.codec.KeyIds;
import io.lancecontext.core.testing.AllocatorExtension;
import io.lancecontext.core.testing.StoreTest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Rows written without a key: seeded handles give retry-stable keys, unseeded ones random UUIDv7s. */
class KeylessIdsTest extends StoreTest {
  @RegisterExtension
  final AllocatorExtension arrow = new AllocatorExtension();

  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"},{\"name\":\"title\",\"type\":\"string\"}]}";

  /** One task's input: records, appended rows and an Arrow batch, none with a key. */
  private void writeTask(StoreWriter w, int upTo) {
    int written = 0;
    for (int r = 0; r < 5 && written < upTo; r++, written++) {
      w.write(rec("n", (long) r, "title", "record"));
    }
    RowAppender rows = w.rows();
    int n = rows.column("n");
    for (int r = 5; r < 8 && written < upTo; r++, written++) {
      rows.setLong(n, r).endRow();
    }
    if (written < upTo) {
      List<Map<String, Object>> batchRows = new java.util.ArrayList<>();
      for (int r = 8; r < 12; r++) {
        batchRows.add(new HashMap<>(Map.of("n", (long) r, "title", "batch")));
      }
      try (VectorSchemaRoot batch = batch(new Schema(List.of(int64("n"), utf8("title"))), batchRows, arrow.allocator())) {
        w.write(batch);
      }
    }
  }

  @Test
  void aRetriedSeededTaskWritesTheSameKeysAndNoDuplicates() {
    WriterOptions seeded = WriterOptions.builder().idSeed("query-7f3a/partition-3").build();
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC, "write.batch-rows", "2"))) {
      try (StoreWriter attempt1 = store.newWriter(seeded)) {
        writeTask(attempt1, 6);  // fails part-way: three full buffers were put, then the task died
        attempt1.abort();
      }
      Map<String, Object> afterFailure = view(store, "n");
      assertEquals(6, afterFailure.size());
      try (StoreWriter attempt2 = store.newWriter(seeded)) {
        writeTask(attempt2, Integer.MAX_VALUE);
        attempt2.commit();
      }
      Map<String, Object> afterRetry = view(store, "n");
      assertEquals(12, afterRetry.size(), "the retry replaced the failed attempt's rows instead of adding to them");
      assertEquals(12, store.count());
      afterFailure.forEach((k, n) -> assertEquals(n, afterRetry.get(k), "key " + k + " names the same row"));
      try (StoreWriter attempt3 = store.newWriter(seeded)) {
        writeTask(attempt3, Integer.MAX_VALUE);
        attempt3.commit();
      }
      assertEquals(afterRetry, view(store, "n"), "a third attempt changes nothing");
    }
  }

  /** A handle that continues a seed at the ordinal an earlier handle reached writes the keys that handle would have. */
  @Test
  void aHandleContinuingASeedAtAnOrdinalWritesTheKeysOfOneHandle() {
    String seed = "job/subtask-0";
    try (ContextStore store = ContextStore.open(options(dir, "continued", SPEC))) {
      try (StoreWriter one = store.newWriter(WriterOptions.builder().idSeed(seed).build())) {
        writeTask(one, Integer.MAX_VALUE);
        assertEquals(12, one.keylessRows());
        one.commit();
      }
      Map<String, Object> oneHandle = view(store, "n");
      try (ContextStore other = ContextStore.open(options(dir, "split", SPEC))) {
        long reached;
        try (StoreWriter first = other.newWriter(WriterOptions.builder().idSeed(seed).build())) {
          for (long r = 0; r < 5; r++) {
            first.write(rec("n", r, "title", "record"));
          }
          first.write(rec("id", "explicit", "n", -1L));  // a row with its key takes no ordinal
          first.commit();
          reached = first.keylessRows();
        }
        assertEquals(5, reached);
        try (StoreWriter rest = other.newWriter(WriterOptions.builder().idSeed(seed, reached).build())) {
          assertEquals(5, rest.keylessRows());
          RowAppender rows = rest.rows();
          int n = rows.column("n");
          for (int r = 5; r < 8; r++) {
            rows.setLong(n, r).endRow();
          }
          List<Map<String, Object>> batchRows = new java.util.ArrayList<>();
          for (int r = 8; r < 12; r++) {
            batchRows.add(new HashMap<>(Map.of("n", (long) r, "title", "batch")));
          }
          try (VectorSchemaRoot batch = batch(new Schema(List.of(int64("n"), utf8("title"))), batchRows,
              arrow.allocator())) {
            rest.write(batch);
          }
          rest.commit();
        }
        Map<String, Object> split = view(other, "n");
        split.remove("explicit");
        assertEquals(oneHandle, split, "the same keys for the same rows");
      }
    }
  }

  @Test
  void seededKeysFollowTheDocumentedRuleAndOtherSeedsDiffer() throws Exception {
    String seed = "job/part";
    MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
    sha1.update(ByteBuffer.allocate(16).putLong(KeyIds.NAMESPACE.getMostSignificantBits())
        .putLong(KeyIds.NAMESPACE.getLeastSignificantBits()).array());
    sha1.update(seed.getBytes(StandardCharsets.UTF_8));
    sha1.update((byte) 0);
    sha1.update(ByteBuffer.allocate(8).putLong(1).array());
    byte[] h = sha1.digest();
    h[6] = (byte) ((h[6] & 0x0f) | 0x50);
    h[8] = (byte) ((h[8] & 0x3f) | 0x80);
    ByteBuffer b = ByteBuffer.wrap(h);
    UUID expected = new UUID(b.getLong(), b.getLong());
    try (ContextStore store = ContextStore.open(options(dir, "r", SPEC))) {
      try (StoreWriter w = store.newWriter(WriterOptions.builder().idSeed(seed).build())) {
        w.write(rec("n", 0L));
        w.write(rec("id", "explicit", "n", -1L));  // a row with its key takes no ordinal
        w.write(rec("n", 1L));
        w.commit();
      }
      Map<String, Object> byKey = view(store, "n");
      assertEquals(1L, byKey.get(expected.toString()), "the second keyless row: ordinal 1");
      assertEquals(5, UUID.fromString(keyOf(byKey, 0L)).version());
      try (StoreWriter other = store.newWriter(WriterOptions.builder().idSeed(seed + "-other").build())) {
        other.write(rec("n", 0L));
        other.commit();
      }
      assertEquals(4, store.count(), "another seed gives other keys");
    }
  }

  @Test
  void withoutASeedKeylessRowsGetRandomUuid7Keys() {
    try (ContextStore store = ContextStore.open(options(dir, "u", SPEC))) {
      for (int attempt = 0; attempt < 2; attempt++) {
        try (StoreWriter w = store.newWriter()) {
          w.write(rec("n", 1L));
          w.commit();
        }
      }
      Set<String> keys = new TreeSet<>(view(store, "n").keySet());
      assertEquals(2, keys.size(), "an unseeded retry duplicates: that is what the seed is for");
      keys.forEach(k -> assertEquals(7, UUID.fromString(k).version()));
      assertNotEquals(KeyIds.random().key(0), KeyIds.random().key(0));
    }
  }

  private static String keyOf(Map<String, Object> byKey, Object value) {
    return byKey.entrySet().stream().filter(e -> value.equals(e.getValue())).findFirst().orElseThrow().getKey();
  }
}
