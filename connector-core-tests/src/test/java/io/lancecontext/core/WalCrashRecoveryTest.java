package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreProcess;
import io.lancecontext.core.testing.StoreTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A writer killed while writing a WAL entry leaves it truncated or empty. No put acknowledged it: every
 * reader skips it, the next writer of the shard moves it aside, and nothing acknowledged is lost. Only an
 * entry that later entries prove acknowledged fails reads, with a typed error.
 */
class WalCrashRecoveryTest extends StoreTest {
  private static final int ADDS = 30;
  private static final int ROWS = 4;

  /** How the killed writer left its last entry. */
  enum Damage {
    /** a truncated entry after the last acknowledged one */
    TRUNCATED_NEXT,
    /** an empty entry after the last acknowledged one */
    EMPTY_NEXT,
    /** the newest entry itself truncated (its put counts as never acknowledged) */
    TRUNCATED_NEWEST
  }

  private String writeWithKilledWriter() throws Exception {
    String path = dir.resolve("crash").toString();
    try (ContextStore ignored = ContextStore.open(Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "8",
        "shards", "2"))) {
      // created
    }
    try (ChildJvm writer = ChildJvm.start(StoreProcess.class, dir.resolve("writer.log"), "writer", path,
        Integer.toString(ADDS), Integer.toString(ROWS), "c")) {
      String line;
      int acked = 0;
      while ((line = writer.readLine()) != null && !line.equals("done")) {
        acked += line.startsWith("ack ") ? 1 : 0;
      }
      assertEquals(ADDS, acked, writer::tail);
      assertEquals(0, writer.waitFor(60), writer::tail);  // halted: nothing sealed, every row in the WAL tails
    }
    return path;
  }

  private static Set<String> allKeys() {
    Set<String> keys = new TreeSet<>();
    for (int i = 0; i < ADDS; i++) {
      for (int j = 0; j < ROWS; j++) {
        keys.add("c-" + i + "-" + j);
      }
    }
    return keys;
  }

  private static Path walDir(String path, String shardId) {
    return Path.of(path, ShardLayout.walDir(shardId));
  }

  private static long newestPosition(String path, String shardId) throws Exception {
    List<Long> positions = WalEntry.positions(StoreFiles.forUri(path), shardId);
    return positions.isEmpty() ? -1 : positions.get(positions.size() - 1);
  }

  private static Set<String> keysOf(String path, String shardId, long position) throws Exception {
    Set<String> keys = new HashSet<>();
    try (RootAllocator allocator = new RootAllocator();
        WalEntry entry = WalEntry.read(StoreFiles.forUri(path), shardId, position, allocator)) {
      for (VectorSchemaRoot b : entry.batches()) {
        VarCharVector id = (VarCharVector) b.getVector("id");
        for (int r = 0; r < b.getRowCount(); r++) {
          keys.add(new String(id.get(r), StandardCharsets.UTF_8));
        }
      }
    }
    return keys;
  }

  /** Damages the tail of every shard that has one; returns the keys whose rows the damage removed. */
  private static Map<Path, Set<String>> damage(String path, Damage how) throws Exception {
    Map<Path, Set<String>> damaged = new HashMap<>();
    for (String shard : ShardIds.all(2)) {
      long newest = newestPosition(path, shard);
      if (newest < 0) {
        continue;
      }
      Path newestFile = Path.of(path, WalEntry.path(shard, newest));
      byte[] content = Files.readAllBytes(newestFile);
      switch (how) {
        case TRUNCATED_NEXT -> {
          Path next = Path.of(path, WalEntry.path(shard, newest + 1));
          Files.write(next, Arrays.copyOf(content, content.length * 3 / 5));
          damaged.put(next, Set.of());
        }
        case EMPTY_NEXT -> {
          Path next = Path.of(path, WalEntry.path(shard, newest + 1));
          Files.write(next, new byte[0]);
          damaged.put(next, Set.of());
        }
        case TRUNCATED_NEWEST -> {
          damaged.put(newestFile, keysOf(path, shard, newest));
          Files.write(newestFile, Arrays.copyOf(content, content.length / 2));
        }
        default -> throw new AssertionError(how);
      }
    }
    assertEquals(2, damaged.size(), "the writer wrote to one lane of each of the two buckets");
    return damaged;
  }

  private static Set<String> scannedKeys(ContextStore store) {
    Set<String> keys = new TreeSet<>();
    store.scanRecords(ScanSpec.all().withColumns(List.of("id"))).forEach(r -> keys.add((String) r.get("id")));
    return keys;
  }

  private static void assertViewIs(ContextStore store, Set<String> expected, String when) {
    assertEquals(expected.size(), store.count(), when + ": count");
    assertEquals(expected, scannedKeys(store), when + ": scan");
    for (String k : expected) {
      assertTrue(store.get(k).isPresent(), when + ": get " + k);
    }
  }

  @ParameterizedTest
  @EnumSource(Damage.class)
  void storeStaysUsableAfterAWriterDiedWritingAWalEntry(Damage how) throws Exception {
    String path = writeWithKilledWriter();
    Map<Path, Set<String>> damaged = damage(path, how);
    Set<String> expected = allKeys();
    damaged.values().forEach(expected::removeAll);
    Set<String> lost = new TreeSet<>(allKeys());
    lost.removeAll(expected);

    try (ChildJvm reader = ChildJvm.start(StoreProcess.class, dir.resolve("reader.log"), "reader", path)) {
      assertEquals("ready", reader.readLine(), reader::tail);
      // another process reads while the damaged entries are still there, again and again
      for (int i = 0; i < 3; i++) {
        assertEquals(Integer.toString(expected.size()), reader.ask("count"));
        assertEquals("0", reader.ask("get c-0-0"));
      }

      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        assertViewIs(store, expected, "before any write");
        for (String k : lost) {
          assertFalse(store.get(k).isPresent(), "the rows of an unreadable entry are not returned: " + k);
        }
        assertTrue(store.stats().freshRows() >= expected.size());

        // the next writer of each shard moves the damaged entry aside and writes
        List<Map<String, Object>> more = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
          more.add(rec("after-" + i, 1000 + i));
        }
        store.add(more);
        for (Path p : damaged.keySet()) {
          assertTrue(isAbsentOrWhole(path, p), "the damaged entry " + p + " was moved aside (or replaced by a whole one)");
        }
        assertTrue(Files.list(Path.of(path, "_lc", "quarantine")).findAny().isPresent(), "moved aside, not deleted");
        Set<String> withMore = new TreeSet<>(expected);
        more.forEach(r -> withMore.add((String) r.get("id")));
        assertViewIs(store, withMore, "after the next writer's add");
        assertEquals(Integer.toString(withMore.size()), reader.ask("count"), "the other process sees it too");
        assertEquals("1019", reader.ask("get after-19"));

        store.seal();
        store.merge();
        assertViewIs(store, withMore, "after seal and merge");
        assertEquals(Integer.toString(withMore.size()), reader.ask("count"));
        assertTrue(store.stats().toString().length() > 0);
      }
      reader.send("exit");
      assertEquals(0, reader.waitFor(60), reader::tail);
      String log = Files.readString(dir.resolve("reader.log"));
      for (Path p : damaged.keySet()) {
        String name = Path.of(path).relativize(p).toString();
        long warnings = log.lines().filter(l -> l.contains(" WARN ") && l.contains(name)).count();
        assertEquals(1, warnings, "one WARN names the damaged file " + name + " however often it is read:\n" + log);
      }
    }
  }

  @Test
  void damagedEntryFollowedByWholeOnesFailsReadsWithAStorageException() throws Exception {
    String path = writeWithKilledWriter();
    String shard = ShardIds.forLane(0, 0);
    long newest = newestPosition(path, shard);
    Path middle = Path.of(path, WalEntry.path(shard, newest - 1));
    Files.write(middle, Arrays.copyOf(Files.readAllBytes(middle), 100));
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      StorageException e = assertThrows(StorageException.class, store::count);
      assertTrue(e.getMessage().contains(middle.getFileName().toString()) && e.getMessage().contains("lost"), e.getMessage());
      String inBucket0 = java.util.stream.IntStream.range(0, 100).mapToObj(i -> "x" + i).filter(k -> store.bucketOf(k) == 0)
          .findFirst().orElseThrow();
      assertThrows(StorageException.class, () -> store.add(List.of(rec(inBucket0, 1))), "the writer refuses it too");
    }
  }

  @Test
  void missingEntryBelowTheNewestFailsReadsWithAStorageException() throws Exception {
    String path = writeWithKilledWriter();
    String shard = ShardIds.forLane(0, 0);
    long newest = newestPosition(path, shard);
    Path middle = Path.of(path, WalEntry.path(shard, newest - 1));
    Files.delete(middle);
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      StorageException e = assertThrows(StorageException.class, store::count);
      assertTrue(e.getMessage().contains(middle.getFileName().toString()) && e.getMessage().contains("lost"), e.getMessage());
    }
  }

  private static boolean isAbsentOrWhole(String path, Path entry) throws Exception {
    if (!Files.exists(entry)) {
      return true;
    }
    String shard = entry.getParent().getParent().getFileName().toString();
    long position = io.lancecontext.core.internal.lance.LogNames.number(entry.getFileName().toString(), ".arrow");
    try (RootAllocator allocator = new RootAllocator();
        WalEntry e = WalEntry.read(StoreFiles.forUri(path), shard, position, allocator)) {
      return e.rows() > 0;
    } catch (WalEntry.Incomplete e) {
      return false;
    }
  }

  private static Map<String, Object> rec(String key, int seq) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("sequence_order", seq);
    return r;
  }
}
