package io.lancecontext.core.internal.io;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link StoreFiles} implementation promises, run against each of them (a subclass per
 * implementation gives a fresh, empty store root per test).
 */
abstract class StoreFilesContractTest {
  /** Store times are compared with the test's clock: S3 keeps whole seconds, servers and hosts drift. */
  private static final Duration CLOCK_SLACK = Duration.ofSeconds(5);

  protected StoreFiles files;

  /** A store root of its own, empty. */
  protected abstract StoreFiles newStore() throws Exception;

  @BeforeEach
  void openStore() throws Exception {
    files = newStore();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  @Test
  void aMissingObjectIsSignalledAsNotFoundByEveryRead() throws Exception {
    StoreFiles.NotFound whole = assertThrows(StoreFiles.NotFound.class, () -> files.read("_mem_wal/s/manifest/1.binpb"));
    assertEquals("_mem_wal/s/manifest/1.binpb", whole.path());
    assertThrows(StoreFiles.NotFound.class, () -> files.readRange("nothing", 0, 10));
    assertThrows(StoreFiles.NotFound.class, () -> files.readRange("nothing", 0, 0));
    assertEquals(Optional.empty(), files.readIfPresent("nothing").map(String::new));
    assertEquals(Optional.empty(), files.stat("nothing"));
    assertEquals(-1, files.size("nothing"));
    assertFalse(files.objectExists("nothing"));
    assertFalse(files.prefixExists("nothing"));
    assertEquals(List.of(), files.list("nothing"));
    assertEquals(List.of(), files.listPrefix("nothing"));
    assertEquals(0, files.totalBytes("nothing"));
    files.delete("nothing");
    assertEquals(0, files.deletePrefix("nothing/"));
  }

  @Test
  void aCopyHoldsTheSourcesContentAndACopyOfAMissingObjectIsNotFound() throws Exception {
    files.overwrite("_lc/txn/t/b0/p/data/f.lance", bytes("fragment bytes"));
    files.copy("_lc/txn/t/b0/p/data/f.lance", "data/f.lance");
    assertEquals("fragment bytes", new String(files.read("data/f.lance"), UTF_8));
    files.copy("_lc/txn/t/b0/p/data/f.lance", "data/f.lance");  // a retried merge places the same file again
    assertEquals("fragment bytes", new String(files.read("data/f.lance"), UTF_8));
    assertEquals(1, files.deletePrefix("_lc/"));
    assertEquals("fragment bytes", new String(files.read("data/f.lance"), UTF_8), "the copy outlives its source");
    assertThrows(StoreFiles.NotFound.class, () -> files.copy("_lc/txn/t/b0/p/data/gone.lance", "data/gone.lance"));
    assertFalse(files.objectExists("data/gone.lance"));
  }

  @Test
  void anObjectReadsBackWholeAndByRange() throws Exception {
    files.overwrite("wal/0001.arrow", bytes("0123456789"));
    assertEquals("0123456789", new String(files.read("wal/0001.arrow"), UTF_8));
    assertEquals("0123456789", new String(files.readIfPresent("wal/0001.arrow").orElseThrow(), UTF_8));
    assertEquals("234", new String(files.readRange("wal/0001.arrow", 2, 3), UTF_8));
    assertEquals("0", new String(files.readRange("wal/0001.arrow", 0, 1), UTF_8));
    assertEquals("789", new String(files.readRange("wal/0001.arrow", 7, 100), UTF_8), "a range past the end is cut");
    assertEquals(0, files.readRange("wal/0001.arrow", 10, 5).length, "a range at the end is empty");
    assertEquals(0, files.readRange("wal/0001.arrow", 50, 5).length, "a range beyond the end is empty");
    assertEquals(0, files.readRange("wal/0001.arrow", 3, 0).length);
    assertThrows(IllegalArgumentException.class, () -> files.readRange("wal/0001.arrow", -1, 3));

    files.overwrite("empty", new byte[0]);
    assertEquals(0, files.read("empty").length);
    assertEquals(0, files.readRange("empty", 0, 8).length);
    assertEquals(0, files.size("empty"));
  }

  @Test
  void statGivesSizeAndTheTimeTheStoreRecordedTheWrite() throws Exception {
    Instant before = Instant.now();
    files.overwrite("_lc/lease/1", bytes("holder"));
    Instant after = Instant.now();
    StoreFiles.Entry e = files.stat("_lc/lease/1").orElseThrow();
    assertEquals("_lc/lease/1", e.path());
    assertEquals("1", e.name());
    assertEquals(6, e.size());
    assertEquals(6, files.size("_lc/lease/1"));
    Instant t = e.storeTime().orElseThrow();
    assertTrue(!t.isBefore(before.minus(CLOCK_SLACK)) && !t.isAfter(after.plus(CLOCK_SLACK)),
        "store time " + t + " outside [" + before + ", " + after + "]");
    assertEquals(Optional.empty(), files.stat("_lc/lease"), "a prefix is not an object");
  }

  @Test
  void objectExistsSeesObjectsOnlyAndPrefixExistsSeesPrefixesThatHoldObjects() throws Exception {
    files.overwrite("_versions/1.manifest", bytes("m"));
    assertTrue(files.objectExists("_versions/1.manifest"));
    assertFalse(files.objectExists("_versions/2.manifest"));
    assertFalse(files.objectExists("_versions"), "a prefix is not an object");
    assertTrue(files.prefixExists("_versions/"));
    assertTrue(files.prefixExists("_vers"), "a plain string prefix");
    assertTrue(files.prefixExists(""));
    assertFalse(files.prefixExists("_versions/2"));
    assertFalse(files.prefixExists("_mem_wal/"));
    files.delete("_versions/1.manifest");
    assertFalse(files.prefixExists("_versions/"), "a prefix exists only while it holds an object");
  }

  @Test
  void createIfAbsentSucceedsForExactlyOneOfEightRacingThreads() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      for (int round = 0; round < 10; round++) {
        String path = "_lc/lease/" + round;
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Boolean>> results = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
          byte[] content = bytes("writer " + t);
          results.add(pool.submit(() -> {
            start.await();
            return files.createIfAbsent(path, content);
          }));
        }
        start.countDown();
        List<Integer> winners = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
          if (results.get(t).get(120, TimeUnit.SECONDS)) {
            winners.add(t);
          }
        }
        assertEquals(1, winners.size(), "round " + round + ": winners " + winners);
        assertEquals("writer " + winners.get(0), new String(files.read(path), UTF_8),
            "round " + round + ": the object holds the winner's content");
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(IntStream.range(0, 10).mapToObj(Integer::toString).sorted().collect(Collectors.toList()),
        files.list("_lc/lease"), "no temporary objects are left or listed");
  }

  @Test
  void createIfAbsentLeavesAnExistingObjectUnchanged() throws Exception {
    assertTrue(files.createIfAbsent("_lc/quarantine/s/1.arrow", bytes("first")));
    assertFalse(files.createIfAbsent("_lc/quarantine/s/1.arrow", bytes("second")));
    assertEquals("first", new String(files.read("_lc/quarantine/s/1.arrow"), UTF_8));
  }

  @Test
  void listingByPrefixPagesPastAThousandObjectsAndDeletePrefixRemovesThemAll() throws Exception {
    int n = 1_050;
    parallel(n, i -> files.overwrite(String.format("_mem_wal/s/wal/%05d.arrow", i), bytes("e" + i)));
    files.overwrite("_mem_wal/s/manifest/1.binpb", bytes("m"));
    files.overwrite("_mem_wal/t/wal/00000.arrow", bytes("other shard"));

    List<StoreFiles.Entry> wal = files.listPrefix("_mem_wal/s/wal/");
    assertEquals(n, wal.size());
    for (int i = 0; i < n; i++) {
      StoreFiles.Entry e = wal.get(i);
      assertEquals(String.format("_mem_wal/s/wal/%05d.arrow", i), e.path(), "sorted by path");
      assertEquals(("e" + i).length(), e.size());
      assertTrue(e.storeTime().isPresent());
    }
    assertEquals(n, files.list("_mem_wal/s/wal").size());
    assertEquals(List.of("manifest", "wal"), files.list("_mem_wal/s"), "sub-prefixes are listed by name");
    assertEquals(List.of("s", "t"), files.list("_mem_wal"));
    assertEquals(n + 2, files.listPrefix("_mem_wal/").size());
    assertEquals(n + 2, files.listPrefix("").size());

    assertEquals(n, files.deletePrefix("_mem_wal/s/wal/"));
    assertEquals(List.of(), files.listPrefix("_mem_wal/s/wal/"));
    assertFalse(files.prefixExists("_mem_wal/s/wal/"));
    assertEquals("m", new String(files.read("_mem_wal/s/manifest/1.binpb"), UTF_8), "a sibling prefix survives");
    assertEquals("other shard", new String(files.read("_mem_wal/t/wal/00000.arrow"), UTF_8));
  }

  @Test
  void aPrefixIsAPlainStringPrefix() throws Exception {
    files.overwrite("a/b/c", bytes("1"));
    files.overwrite("a/bc", bytes("22"));
    files.overwrite("a/x", bytes("333"));
    assertEquals(List.of("a/b/c", "a/bc"), StoreFiles.paths(files.listPrefix("a/b")));
    assertEquals(List.of("a/b/c"), StoreFiles.paths(files.listPrefix("a/b/")));
    assertEquals(List.of("b", "bc", "x"), files.list("a"));
    assertEquals(6, files.totalBytes("a"));
    assertEquals(1, files.totalBytes("a/b"));
    assertEquals(2, files.deletePrefix("a/b"));
    assertEquals(List.of("a/x"), StoreFiles.paths(files.listPrefix("")));
    assertThrows(IllegalArgumentException.class, () -> files.deletePrefix(""));
  }

  @Test
  void deleteRemovesOneObjectAndLeavesItsSiblings() throws Exception {
    files.overwrite("g/1/data/x.lance", bytes("x"));
    files.overwrite("g/1/data/y.lance", bytes("y"));
    files.delete("g/1/data/x.lance");
    files.delete("g/1/data/x.lance");
    assertEquals(List.of("g/1/data/y.lance"), StoreFiles.paths(files.listPrefix("g/")));
    files.delete("g/1");
    assertTrue(files.objectExists("g/1/data/y.lance"), "delete never removes a prefix");
  }

  @Test
  void overwriteCreatesOrReplacesAndReadersNeverSeeAMix() throws Exception {
    byte[] a = new byte[64 * 1024];
    byte[] b = new byte[64 * 1024];
    java.util.Arrays.fill(a, (byte) 'a');
    java.util.Arrays.fill(b, (byte) 'b');
    files.overwrite("_lc/gc-ledger", a);
    assertArrayEquals(a, files.read("_lc/gc-ledger"));
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread writer = new Thread(() -> {
      try {
        for (int i = 0; !stop.get() && i < 200; i++) {
          files.overwrite("_lc/gc-ledger", i % 2 == 0 ? b : a);
        }
      } catch (Throwable t) {
        failure.set(t);
      }
    });
    writer.start();
    try {
      for (int i = 0; i < 100; i++) {
        byte[] seen = files.read("_lc/gc-ledger");
        assertTrue(java.util.Arrays.equals(seen, a) || java.util.Arrays.equals(seen, b), "read " + i + " saw a mix");
      }
    } finally {
      stop.set(true);
      writer.join();
    }
    assertNull(failure.get());
  }

  @Test
  void deleteAllDeletesExactlyTheGivenObjectsAndIgnoresAbsentOnes() throws Exception {
    files.overwrite("_mem_wal/s/wal/1.arrow", bytes("a"));
    files.overwrite("_mem_wal/s/wal/2.arrow", bytes("b"));
    files.overwrite("_mem_wal/s/wal/3.arrow", bytes("c"));
    assertEquals(3, files.deleteAll(List.of("_mem_wal/s/wal/1.arrow", "_mem_wal/s/wal/3.arrow", "_mem_wal/s/wal/9.arrow")));
    assertEquals(List.of("_mem_wal/s/wal/2.arrow"), StoreFiles.paths(files.listPrefix("_mem_wal/")));
    assertEquals(0, files.deleteAll(List.of()));
  }

  @Test
  void aMissingObjectIsSignalledByNotFoundNamingItsPathNeverByANioException() {
    StoreFiles.NotFound e = assertThrows(StoreFiles.NotFound.class, () -> files.read("nothing/here"));
    assertEquals("nothing/here", e.path());
    assertFalse(java.nio.file.FileSystemException.class.isAssignableFrom(StoreFiles.NotFound.class));
  }

  private interface IoTask {
    void run(int i) throws Exception;
  }

  private static void parallel(int n, IoTask task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Object>> fs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int k = i;
        fs.add(pool.submit((Callable<Object>) () -> {
          task.run(k);
          return null;
        }));
      }
      for (Future<Object> f : fs) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
