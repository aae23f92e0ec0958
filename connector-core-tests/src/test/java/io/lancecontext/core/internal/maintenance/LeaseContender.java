package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Random;

/**
 * Child JVM of {@link MaintenanceLeaseTest}.
 *
 * <ul>
 *   <li>{@code race <dir> <holds> <leaseMillis> <longHoldEvery> <longHoldMillis>}: prints {@code ready},
 *       waits for {@code go}, then tries to take the lease until it got it {@code holds} times (for at most
 *       two minutes, pausing up to 3 ms after each attempt); each time it gets it,
 *       holds it (a few milliseconds; the first time and every {@code longHoldEvery}-th time after
 *       {@code longHoldMillis}, longer than the lease) and prints {@code held <startMicros> <endMicros>} (wall clock, taken after
 *       acquiring and before releasing), or {@code lost <detail>} if the lease was lost meanwhile;
 *       then {@code done}.</li>
 *   <li>{@code hold <dir> <leaseMillis>}: takes the lease, prints {@code held <number>} and keeps it until
 *       killed.</li>
 * </ul>
 */
public final class LeaseContender {
  private LeaseContender() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    StoreFiles files = StoreFiles.forUri(args[1]);
    Duration lease = Duration.ofMillis(Long.parseLong(args[args[0].equals("race") ? 3 : 2]));
    if (args[0].equals("hold")) {
      while (true) {
        Optional<MaintenanceLock> lock = MaintenanceLock.tryAcquire(files, lease);
        if (lock.isPresent()) {
          out.println("held " + lock.get().number());
          Thread.sleep(Long.MAX_VALUE);
        }
        Thread.sleep(10);
      }
    }
    int holds = Integer.parseInt(args[2]);
    int longEvery = Integer.parseInt(args[4]);
    long longHold = Long.parseLong(args[5]);
    Random random = new Random();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    out.println("ready");
    if (!"go".equals(in.readLine())) {
      return;
    }
    int acquired = 0;
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (acquired < holds && System.nanoTime() < deadline) {
      Optional<MaintenanceLock> lock = MaintenanceLock.tryAcquire(files, lease);
      if (lock.isEmpty()) {
        Thread.sleep(random.nextInt(4));
        continue;
      }
      try (MaintenanceLock held = lock.get()) {
        long start = micros();
        Thread.sleep(acquired++ % longEvery == 0 ? longHold : 1 + random.nextInt(3));
        try {
          held.ensureHeld();
          out.println("held " + start + " " + micros());
        } catch (StorageException e) {
          out.println("lost " + e.getMessage());
        }
      }
      Thread.sleep(random.nextInt(4));
    }
    out.println("done");
  }

  private static long micros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
  }
}
