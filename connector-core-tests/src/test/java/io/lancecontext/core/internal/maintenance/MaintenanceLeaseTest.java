package io.lancecontext.core.internal.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.testing.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The maintenance lease across processes: taken over atomically, renewed while held, released on close. */
class MaintenanceLeaseTest {
  @TempDir
  Path dir;

  private record Hold(int process, long start, long end) {}

  @Test
  void twoProcessesRacingForTheLeaseNeverHoldItAtTheSameTime() throws Exception {
    Path store = Files.createDirectories(dir.resolve("race"));
    // lease 2.5 s (renewed every 0.83 s); the first hold of each process and every 25th after lasts 4 s,
    // which only renewal survives
    String[] args = {"race", store.toString(), "40", "2500", "25", "4000"};
    List<Hold> holds = new ArrayList<>();
    List<String> lost = new ArrayList<>();
    try (ChildJvm a = ChildJvm.start(LeaseContender.class, dir.resolve("a.log"), args);
        ChildJvm b = ChildJvm.start(LeaseContender.class, dir.resolve("b.log"), args)) {
      ChildJvm[] children = {a, b};
      for (ChildJvm c : children) {
        assertEquals("ready", c.readLine(), c.tail());
      }
      for (ChildJvm c : children) {
        c.send("go");
      }
      for (int p = 0; p < children.length; p++) {
        String line;
        while (!"done".equals(line = children[p].readLine())) {
          if (line == null) {
            throw new AssertionError("contender " + p + " exited early:\n" + children[p].tail());
          }
          String[] f = line.split(" ", 3);
          if (f[0].equals("held")) {
            holds.add(new Hold(p, Long.parseLong(f[1]), Long.parseLong(f[2])));
          } else {
            lost.add(p + ": " + line);
          }
        }
      }
    }
    assertEquals(List.of(), lost, "no holder lost its lease");
    for (int p = 0; p < 2; p++) {
      int process = p;
      long n = holds.stream().filter(h -> h.process() == process).count();
      assertEquals(40, n, "process " + p + " held the lease " + n + " times; holds: " + holds.size());
    }
    for (int p = 0; p < 2; p++) {
      int process = p;
      assertTrue(holds.stream().anyMatch(h -> h.process() == process && h.end() - h.start() > 3_000_000),
          "process " + p + " held the lease longer than its duration");
    }
    holds.sort(Comparator.comparingLong(Hold::start));
    int handovers = 0;
    for (int i = 1; i < holds.size(); i++) {
      handovers += holds.get(i).process() != holds.get(i - 1).process() ? 1 : 0;
    }
    assertTrue(handovers >= 5, "the processes raced (the lease changed hands " + handovers + " times)");
    for (int i = 1; i < holds.size(); i++) {
      Hold prev = holds.get(i - 1);
      Hold next = holds.get(i);
      assertTrue(next.start() >= prev.end(), "process " + next.process() + " took the lease at " + next.start()
          + " while process " + prev.process() + " held it until " + prev.end());
    }
    assertTrue(MaintenanceLock.numbers(StoreFiles.forUri(store.toString())).size() <= MaintenanceLock.KEEP + 2,
        "old lease files are deleted");
  }

  @Test
  void theExpiredLeaseOfAKilledHolderIsTakenOver() throws Exception {
    Path store = Files.createDirectories(dir.resolve("killed"));
    StoreFiles files = StoreFiles.forUri(store.toString());
    long killedAt;
    try (ChildJvm holder = ChildJvm.start(LeaseContender.class, dir.resolve("holder.log"), "hold", store.toString(), "4000")) {
      assertEquals("held 1", holder.readLine(), holder.tail());
      assertTrue(MaintenanceLock.tryAcquire(files, Duration.ofSeconds(4)).isEmpty(), "a live holder keeps its lease");
      holder.close();  // killed: it neither renews nor releases
      killedAt = System.nanoTime();
    }
    assertTrue(MaintenanceLock.tryAcquire(files, Duration.ofSeconds(4)).isEmpty(), "not before the lease expires");
    Optional<MaintenanceLock> taken = Optional.empty();
    while (taken.isEmpty()) {
      assertTrue(System.nanoTime() - killedAt < 60_000_000_000L, "the expired lease was not taken over");
      Thread.sleep(100);
      taken = MaintenanceLock.tryAcquire(files, Duration.ofSeconds(4));
    }
    try (MaintenanceLock lock = taken.get()) {
      assertEquals(2, lock.number());
      lock.ensureHeld();
    }
  }

  @Test
  void aHeldLeaseIsRenewedSoLongWorkKeepsItAndClosingReleasesIt() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    Duration lease = Duration.ofMillis(1500);
    MaintenanceLock first = MaintenanceLock.tryAcquire(files, lease).orElseThrow();
    Thread.sleep(5_000);
    assertTrue(MaintenanceLock.tryAcquire(files, lease).isEmpty(), "renewed: still held after three lease durations");
    first.ensureHeld();
    first.close();
    try (MaintenanceLock second = MaintenanceLock.tryAcquire(files, lease).orElseThrow()) {
      assertEquals(first.number() + 1, second.number());
    }
  }

  @Test
  void aHolderWhoseLeaseWasTakenOverFailsBeforeCommitting() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    try (MaintenanceLock lock = MaintenanceLock.tryAcquire(files, Duration.ofMinutes(1)).orElseThrow()) {
      assertTrue(files.createIfAbsent(MaintenanceLock.path(lock.number() + 1),
          new MaintenanceLock.Lease("usurper", System.currentTimeMillis() + 60_000, false).encode()));
      StorageException e = assertThrows(StorageException.class, lock::ensureHeld);
      assertTrue(e.getMessage().contains("another process took it over"), e.getMessage());
    }
    assertEquals("usurper", MaintenanceLock.current(files).orElseThrow().holder(), "closing does not touch the new lease");
  }
}
