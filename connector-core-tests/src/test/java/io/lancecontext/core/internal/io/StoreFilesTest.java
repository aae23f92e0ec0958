package io.lancecontext.core.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreFilesTest {
  @TempDir
  Path dir;

  @Test
  void totalBytesAndDeletePrefix() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    Files.createDirectories(dir.resolve("a/b"));
    Files.write(dir.resolve("a/one"), new byte[10]);
    Files.write(dir.resolve("a/b/two"), new byte[32]);
    assertEquals(42, files.totalBytes(""));
    assertEquals(32, files.totalBytes("a/b"));
    assertEquals(0, files.totalBytes("missing"));
    files.delete("a/one");
    assertFalse(Files.exists(dir.resolve("a/one")));
    files.deletePrefix("a/");
    files.deletePrefix("a/");
    assertFalse(Files.exists(dir.resolve("a")), "emptied directories go with their files");
  }

  /**
   * A writer killed between writing its temporary and moving it into place leaves it behind, invisible to
   * listings: garbage collection's deletes remove it once its process (of this host) is dead, and never the
   * temporary of a live process, of another host or of an older build's name, which may still be moved into place.
   */
  @Test
  void deletesRemoveTheTemporariesADeadWriterOfThisHostLeftAndNoOthers() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    Process done = new ProcessBuilder("true").start();
    done.waitFor();
    String dead = Long.toString(done.pid());
    String own = Long.toString(ProcessHandle.current().pid());
    for (String d : List.of("t", "u", "v")) {
      Files.createDirectories(dir.resolve(d));
      Files.write(dir.resolve(d + "/live-1"), new byte[1]);
    }
    // <name>.lc-tmp.<pid>.<host>.<nanos>, as this process names its temporaries
    String[] mine = TemporaryFiles.temporaryFor(dir.resolve("t/live-2")).getFileName().toString()
        .split("\\.lc-tmp\\.")[1].split("\\.");
    String host = mine[1];
    Path orphan = dir.resolve("t/live-2.lc-tmp." + dead + "." + host + ".1");
    Path inFlight = dir.resolve("t/live-3.lc-tmp." + own + "." + host + ".2");
    Path otherHost = dir.resolve("t/live-4.lc-tmp." + dead + ".f00.3");
    Path olderBuild = dir.resolve("t/live-5.lc-tmp." + dead + ".4");
    Path orphanAlone = dir.resolve("u/x.lc-tmp." + dead + "." + host + ".5");
    Path inFlightAlone = dir.resolve("v/x.lc-tmp." + own + "." + host + ".6");
    for (Path p : List.of(orphan, inFlight, otherHost, olderBuild, orphanAlone, inFlightAlone)) {
      Files.write(p, new byte[1]);
    }
    assertEquals(List.of("t/live-1"), files.listPrefix("t/").stream().map(StoreFiles.Entry::path).toList());

    files.deleteAll(List.of("t/live-1"));
    assertFalse(Files.exists(orphan), "a dead writer's temporary goes with the deletes in its directory");
    for (Path kept : List.of(inFlight, otherHost, olderBuild)) {
      assertTrue(Files.exists(kept), kept.getFileName() + " may still be moved into place");
    }
    files.deletePrefix("u/");
    assertFalse(Files.exists(dir.resolve("u")), "a directory with only a dead writer's temporary left is deleted");
    files.deletePrefix("v/");
    assertTrue(Files.exists(inFlightAlone), "a live writer's temporary stays");
  }

  /**
   * Stats walk the store while garbage collection deletes in it (seen in the soak benchmark): a walk neither
   * fails nor stops at a path deleted under it, so it always counts every file that is never deleted, and
   * never more than what exists.
   */
  @Test
  void walksToleratePathsDeletedUnderThem() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    int kept = 0;
    for (int k = 0; k < 8; k++) {  // spread among the churned folders in the walk's order
      Files.createDirectories(dir.resolve("kept_" + k));
      Files.write(dir.resolve("kept_" + k + "/data"), new byte[1000]);
      kept += 1000;
    }
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread churn = new Thread(() -> {
      try {
        for (int round = 0; !stop.get(); round++) {
          String d = "gen_" + (round % 4);
          for (int f = 0; f < 20; f++) {
            Files.createDirectories(dir.resolve(d + "/data"));
            Files.write(dir.resolve(d + "/data/" + f), new byte[100]);
          }
          files.deletePrefix(d + "/");
        }
      } catch (Throwable t) {
        failure.set(t);
      }
    });
    churn.start();
    try {
      for (int i = 0; i < 300; i++) {
        long total = files.totalBytes("");
        // the churn holds at most one folder of 20 files of 100 bytes at a time
        assertTrue(total >= kept && total <= kept + 20 * 100, "walk " + i + " counted " + total + " bytes");
      }
    } finally {
      stop.set(true);
      churn.join();
    }
    assertEquals(null, failure.get(), "deleting while walking failed");
  }

  @Test
  void anInvalidPathIsABadOption() {
    BadOptionException e = assertThrows(BadOptionException.class, () -> StoreFiles.forUri(dir + "/a\0b"));
    assertTrue(e.getMessage().contains("path"), e.getMessage());
  }

  @Test
  void createIfAbsentSucceedsOnceAmongRacingThreads() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    for (int round = 0; round < 20; round++) {
      String path = "lease/" + round;
      java.util.concurrent.atomic.AtomicInteger won = new java.util.concurrent.atomic.AtomicInteger();
      java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
      List<Thread> threads = new java.util.ArrayList<>();
      for (int t = 0; t < 4; t++) {
        byte[] content = ("writer " + t).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Thread thread = new Thread(() -> {
          try {
            start.await();
            if (files.createIfAbsent(path, content)) {
              won.incrementAndGet();
            }
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        });
        thread.start();
        threads.add(thread);
      }
      start.countDown();
      for (Thread t : threads) {
        t.join();
      }
      assertEquals(1, won.get(), "round " + round);
      assertTrue(new String(files.read(path), java.nio.charset.StandardCharsets.UTF_8).startsWith("writer "));
    }
    assertEquals(20, files.list("lease").size(), "no temporary files left: " + files.list("lease"));
  }
}
