package io.lancecontext.core.maintenance;

import io.lancecontext.core.io.StoreFiles;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.UUID;

/**
 * A lease that lets one process at a time merge, compact or garbage-collect a store: a file created
 * with put-if-not-exists under {@code _lc/}, holding the owner and an expiry. A lease past its expiry
 * (its holder died) is taken over. Re-merging generations at or below the watermark would roll the
 * base table back, so merges are never concurrent.
 */
final class MaintenanceLock implements AutoCloseable {
  static final String PATH = "_lc/maintenance.lock";

  private final StoreFiles files;
  private final byte[] content;

  private MaintenanceLock(StoreFiles files, byte[] content) {
    this.files = files;
    this.content = content;
  }

  /** Takes the lease, or returns empty if a live holder has it. */
  static Optional<MaintenanceLock> tryAcquire(StoreFiles files, Duration lease) throws IOException {
    String owner = ManagementFactory.getRuntimeMXBean().getName() + " " + UUID.randomUUID();
    long expires = System.currentTimeMillis() + lease.toMillis();
    byte[] content = (expires + " " + owner).getBytes(StandardCharsets.UTF_8);
    if (files.createExclusive(PATH, content)) {
      return Optional.of(new MaintenanceLock(files, content));
    }
    byte[] existing;
    try {
      existing = files.read(PATH);
    } catch (java.nio.file.NoSuchFileException e) {
      return files.createExclusive(PATH, content) ? Optional.of(new MaintenanceLock(files, content)) : Optional.empty();
    }
    if (expiry(existing) > System.currentTimeMillis()) {
      return Optional.empty();
    }
    // expired: remove it unless somebody replaced it meanwhile, then compete for it again
    byte[] again;
    try {
      again = files.read(PATH);
    } catch (java.nio.file.NoSuchFileException e) {
      again = null;
    }
    if (again != null && Arrays.equals(again, existing)) {
      files.deleteRecursively(PATH);
    }
    return files.createExclusive(PATH, content) ? Optional.of(new MaintenanceLock(files, content)) : Optional.empty();
  }

  private static long expiry(byte[] content) {
    String s = new String(content, StandardCharsets.UTF_8);
    int sp = s.indexOf(' ');
    try {
      return Long.parseLong(sp < 0 ? s : s.substring(0, sp));
    } catch (NumberFormatException e) {
      return 0;  // unreadable: treat as expired
    }
  }

  /** Releases the lease if it is still ours. */
  @Override
  public void close() throws IOException {
    try {
      if (Arrays.equals(files.read(PATH), content)) {
        files.deleteRecursively(PATH);
      }
    } catch (java.nio.file.NoSuchFileException e) {
      // already gone
    }
  }
}
