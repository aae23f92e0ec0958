package io.lancecontext.core;

import static io.lancecontext.core.StoreTestSupport.inEveryTier;
import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static io.lancecontext.core.StoreTestSupport.view;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreTest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/** The write handle's contracts: encoded when written, ordered deletes, the commit summary. */
class WriteHandleTest extends StoreTest {
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"n\",\"type\":\"int64\"},{\"name\":\"v\",\"type\":\"vector\",\"dim\":3,\"metric\":\"l2\"},"
      + "{\"name\":\"tags\",\"type\":\"list\",\"item\":{\"type\":\"string\"}}],\"capabilities\":[\"tombstones\"]}";

  @Test
  void aReusedAndMutatedRecordWritesWhatItHeldAtWriteTime() {
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC, "write.batch-rows", "1000"));
        StoreWriter w = store.newWriter()) {
      Map<String, Object> record = new HashMap<>();
      float[] vector = new float[3];
      List<String> tags = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        record.put("id", "k" + i);
        record.put("n", (long) i);
        vector[0] = i;
        vector[2] = -i;
        record.put("v", vector);
        tags.add("t" + i);
        record.put("tags", tags);
        w.write(record);
      }
      record.put("n", 99L);
      vector[0] = 99;
      tags.clear();
      assertEquals(0, store.count(), "still buffered");
      assertEquals(5, w.commit().rowsWritten());
      for (int i = 0; i < 5; i++) {
        Map<String, Object> got = store.get("k" + i).orElseThrow();
        assertEquals((long) i, got.get("n"));
        assertArrayEquals(new float[] {i, 0, -i}, (float[]) got.get("v"));
        List<String> expectedTags = new ArrayList<>();
        for (int t = 0; t <= i; t++) {
          expectedTags.add("t" + t);
        }
        assertEquals(expectedTags, got.get("tags"));
      }
    }
  }

  @Test
  void deletesAndWritesOfAKeyTakeEffectInTheOrderMadeAcrossPuts() {
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC, "write.batch-rows", "3"))) {
      try (StoreWriter w = store.newWriter()) {
        // buffers of three rows: [a, -a, -b] [b, c, x] [-c, d, -d] [d, e, -e] [e]
        w.write(rec("id", "a", "n", 1L));
        w.delete("a");
        w.delete("b");
        w.write(rec("id", "b", "n", 2L));
        w.write(rec("id", "c", "n", 3L));
        w.write(rec("id", "x", "n", 0L));
        w.delete("c");
        w.write(rec("id", "d", "n", 4L));
        w.delete("d");
        w.write(rec("id", "d", "n", 5L));
        w.write(rec("id", "e", "n", 6L));
        w.delete("e");
        w.write(rec("id", "e", "n", 7L));
        WriteSummary s = w.commit();
        // per put, the last row of a key decides: deletes a, b | - | c, d | e | -; writes - | b, c, x | - | d | e
        assertEquals(5, s.keysDeleted());
        assertEquals(5, s.rowsWritten());
      }
      inEveryTier(store, () -> assertEquals(Map.of("b", 2L, "d", 5L, "e", 7L, "x", 0L), view(store, "n")));
    }
  }

  @Test
  void theSummaryNamesTheWalEntriesAndWriterEpochsOfThePuts() throws Exception {
    // the WAL path: full buffers of write.batch-rows would take the bulk path (BulkWriteTest)
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC, "write.batch-rows", "4",
        "write.bulk-rows", "1000000"));
        StoreWriter w = store.newWriter()) {
      Map<Integer, Set<String>> keysByBucket = new TreeMap<>();
      for (int i = 0; i < 10; i++) {
        String k = "key-" + i;
        w.write(rec("id", k, "n", (long) i));
        keysByBucket.computeIfAbsent(store.bucketOf(k), b -> new HashSet<>()).add(k);
      }
      WriteSummary s = w.commit();
      assertEquals(10, s.rowsWritten());
      assertEquals(0, s.keysDeleted());
      assertEquals(keysByBucket.keySet(), new java.util.TreeSet<>(s.shards().stream().map(WriteSummary.ShardPuts::bucket)
          .toList()), "the buckets written");
      StoreFiles files = StoreFiles.forUri(store.uri());
      Set<String> found = new HashSet<>();
      int puts = 0;
      for (WriteSummary.ShardPuts p : s.shards()) {
        assertEquals(ShardIds.forLane(p.bucket(), p.lane()), p.shardId());
        assertEquals(ShardManifests.latest(files, p.shardId()).writerEpoch(), p.epoch(), "the epoch the shard is held with");
        assertTrue(p.firstWalPosition() <= p.lastWalPosition() && p.puts() >= 1, p.toString());
        puts += p.puts();
        for (long pos = p.firstWalPosition(); pos <= p.lastWalPosition(); pos++) {
          Set<String> keys = keysOf(files, p.shardId(), pos);
          assertTrue(keysByBucket.get(p.bucket()).containsAll(keys), "entry " + pos + " of " + p + " holds " + keys);
          found.addAll(keys);
        }
      }
      assertEquals(10, found.size(), "every row is in an entry the summary names");
      assertTrue(puts >= 3, "three buffers of at most four rows were put: " + s);
      assertEquals(WriteSummary.empty(), w.commit(), "a commit summarises what was acknowledged since the previous one");
    }
  }

  @Test
  void theSummarySurvivesJavaSerializationAndItsByteFormAndCarriesNoSecret() throws Exception {
    Map<String, String> o = new HashMap<>(options(dir, "secret-store", SPEC, "write.batch-rows", "2"));
    String secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";
    o.put("storage.aws_secret_access_key", secret);
    try (ContextStore store = ContextStore.open(o); StoreWriter w = store.newWriter()) {
      for (int i = 0; i < 7; i++) {
        w.write(rec("id", "k" + i, "n", (long) i));
      }
      w.delete("k3");
      WriteSummary s = w.commit();
      assertEquals(7, s.rowsWritten(), "puts [k0 k1] [k2 k3] [k4 k5] [k6 -k3]");
      assertEquals(1, s.keysDeleted());

      ByteArrayOutputStream javaForm = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(javaForm)) {
        out.writeObject(s);
      }
      try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(javaForm.toByteArray()))) {
        assertEquals(s, in.readObject());
      }
      byte[] bytes = s.toBytes();
      assertEquals(WriteSummary.FORMAT_VERSION, bytes[0]);
      assertEquals(s, WriteSummary.fromBytes(bytes));
      assertTrue(bytes.length < 64 + 80 * s.shards().size(), bytes.length + " bytes");
      for (byte[] form : List.of(bytes, javaForm.toByteArray())) {
        String text = new String(form, StandardCharsets.ISO_8859_1);
        assertFalse(text.contains(secret) || text.contains("aws_secret") || text.contains("storage.")
            || text.contains("secret-store"), "a summary holds no option, secret or location");
      }
      byte[] newer = bytes.clone();
      newer[0] = (byte) (WriteSummary.FORMAT_VERSION + 1);
      assertThrows(IllegalArgumentException.class, () -> WriteSummary.fromBytes(newer));
    }
  }

  @Test
  void aRefusedRecordLeavesTheHandleAndWhatItBufferedIntact() {
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC)); StoreWriter w = store.newWriter()) {
      w.write(rec("id", "a", "n", 1L));
      InvalidRecordException e = assertThrows(InvalidRecordException.class,
          () -> w.write(rec("id", "b", "n", 2L, "v", new float[] {1, 2})));
      assertEquals("v", e.column());
      assertEquals(1, e.row(), "the handle's second record");
      assertThrows(SchemaException.class, () -> w.write(rec("id", "c", "_lc_seq", 5L)));
      assertThrows(SchemaException.class, () -> w.write(rec("id", "c", "nope", 5L)));
      w.write(rec("id", "d", "n", 4L));
      assertEquals(2, w.commit().rowsWritten());
      assertEquals(Map.of("a", 1L, "d", 4L), view(store, "n"));
    }
  }

  @Test
  void aRowBeingBuiltMustBeEndedBeforeACommit() {
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC)); StoreWriter w = store.newWriter()) {
      RowAppender rows = w.rows();
      rows.setString(rows.column("id"), "half");
      assertThrows(IllegalStateException.class, w::commit);
      rows.abandonRow();
      assertEquals(0, w.commit().rowsWritten());
      assertEquals(0, store.count());
    }
  }

  @Test
  void writeAndDeleteNeedAnOpenHandle() {
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC))) {
      StoreWriter w = store.newWriter();
      w.write(rec("id", "a", "n", 1L));
      w.close();
      assertThrows(io.lancecontext.core.error.StoreClosedException.class, () -> w.delete("a"));
      assertThrows(io.lancecontext.core.error.StoreClosedException.class, w::commit);
      w.abort();
      assertEquals(0, store.count(), "closing without a commit discards the buffer");
    }
  }

  @Test
  void aFailedPutFailsTheHandleNamingTheFailure() {
    try (ContextStore store = ContextStore.open(options(dir, "s", SPEC)); StoreWriter w = store.newWriter()) {
      w.write(rec("id", "a", "n", 1L));
      ContextStore.closeAllResident();  // the put of the commit cannot run
      io.lancecontext.core.error.StoreClosedException put =
          assertThrows(io.lancecontext.core.error.StoreClosedException.class, w::commit);
      assertTrue(put.isRetryable(), "the store was closed underneath: reopening and retrying the task works");
      io.lancecontext.core.error.StoreClosedException later =
          assertThrows(io.lancecontext.core.error.StoreClosedException.class, () -> w.write(rec("id", "b", "n", 2L)));
      assertFalse(later.isRetryable(), "the handle stays failed");
      assertTrue(later.getCause() == put, "and names the failure");
      w.abort();
    }
    try (ContextStore again = ContextStore.open(options(dir, "s", null))) {
      assertEquals(0, again.count());
    }
  }

  private static Set<String> keysOf(StoreFiles files, String shardId, long position) throws Exception {
    Set<String> keys = new HashSet<>();
    try (RootAllocator allocator = new RootAllocator();
        WalEntry entry = WalEntry.read(files, shardId, position, allocator)) {
      for (VectorSchemaRoot b : entry.batches()) {
        VarCharVector id = (VarCharVector) b.getVector("id");
        for (int r = 0; r < b.getRowCount(); r++) {
          keys.add(new String(id.get(r), StandardCharsets.UTF_8));
        }
      }
    }
    return keys;
  }
}
