package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease that lets one process at a time merge, compact or garbage-collect a store (re-merging
 * generations at or below the watermark would roll the base table back, so merges are never
 * concurrent).
 *
 * <p>Leases are numbered files {@code _lc/lease/<n>}, each created once with put-if-not-exists and
 * holding its holder and an expiry time. Only the newest lease counts. A process takes the lease by
 * creating lease {@code n + 1} when lease {@code n} is released or expired; of several processes that
 * try, exactly one creates it. The holder renews its lease (rewrites the expiry of its own file) every
 * third of the lease duration while it holds it, so long work keeps it, and marks it released on
 * {@link #close()}. A holder that finds a newer lease, or could not renew before its expiry, has lost
 * the lease: {@link #ensureHeld()} fails from then on, and work checks it before each commit. Expiry
 * times are compared across processes, so hosts' clocks must agree to well within the lease duration.
 */
final class MaintenanceLock implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MaintenanceLock.class);

  static final String DIR = "_lc/lease";
  /** Lease files kept below the newest (older ones are deleted by the holder). */
  static final int KEEP = 16;
  private static final String FORMAT = "lancecontext-lease 1";
  private static final ScheduledExecutorService RENEWER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "lancecontext-lease-renewer");
    t.setDaemon(true);
    return t;
  });

  private final StoreFiles files;
  private final long number;
  private final String holder;
  private final Duration lease;
  private final ScheduledFuture<?> renewal;
  private volatile long expiresMillis;
  private volatile String lost;
  private boolean closed;

  private MaintenanceLock(StoreFiles files, long number, String holder, Duration lease, long expiresMillis) {
    this.files = files;
    this.number = number;
    this.holder = holder;
    this.lease = lease;
    this.expiresMillis = expiresMillis;
    long every = Math.max(1, lease.toMillis() / 3);
    this.renewal = RENEWER.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
  }

  /** One lease file's content. */
  record Lease(String holder, long expiresMillis, boolean released) {
    byte[] encode() {
      return (FORMAT + "\nholder=" + holder + "\nexpires=" + expiresMillis + "\nstate=" + (released ? "released" : "held")
          + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** Decodes a lease file; unreadable content counts as released (nobody can be holding it). */
    static Lease decode(byte[] content) {
      String holder = "";
      long expires = 0;
      boolean released = true;
      String[] lines = new String(content, StandardCharsets.UTF_8).split("\n");
      if (lines.length > 0 && lines[0].equals(FORMAT)) {
        for (String line : lines) {
          int eq = line.indexOf('=');
          if (eq < 0) {
            continue;
          }
          String value = line.substring(eq + 1);
          switch (line.substring(0, eq)) {
            case "holder" -> holder = value;
            case "expires" -> expires = parseLong(value);
            case "state" -> released = !value.equals("held");
            default -> {
              // fields of later formats
            }
          }
        }
      }
      return new Lease(holder, expires, released);
    }

    private static long parseLong(String s) {
      try {
        return Long.parseLong(s.trim());
      } catch (NumberFormatException e) {
        return 0;
      }
    }

    boolean liveAt(long nowMillis) {
      return !released && expiresMillis > nowMillis;
    }
  }

  static String path(long number) {
    return DIR + "/" + String.format("%020d", number);
  }

  /** Lease numbers present, ascending. */
  static List<Long> numbers(StoreFiles files) throws IOException {
    List<Long> out = new ArrayList<>();
    for (String name : files.list(DIR)) {
      if (name.length() == 20 && name.charAt(0) == '0' && name.chars().allMatch(c -> c >= '0' && c <= '9')) {
        out.add(Long.parseLong(name));
      }
    }
    out.sort(null);
    return out;
  }

  private static long newest(StoreFiles files) throws IOException {
    List<Long> n = numbers(files);
    return n.isEmpty() ? 0 : n.get(n.size() - 1);
  }

  /** The newest lease and its number, or empty if nobody ever took one. */
  static Optional<Lease> current(StoreFiles files) throws IOException {
    long n = newest(files);
    if (n == 0) {
      return Optional.empty();
    }
    return files.readIfPresent(path(n)).map(Lease::decode);
  }

  /** Takes the lease for {@code lease} (renewed while held), or returns empty if a live holder has it. */
  static Optional<MaintenanceLock> tryAcquire(StoreFiles files, Duration lease) throws IOException {
    String holder = ManagementFactory.getRuntimeMXBean().getName() + "/" + UUID.randomUUID();
    long newest = newest(files);
    if (newest > 0) {
      Optional<byte[]> content = files.readIfPresent(path(newest));
      if (content.isEmpty()) {
        return Optional.empty();  // a listing older than the lease files' cleanup: somebody else is active
      }
      if (Lease.decode(content.get()).liveAt(System.currentTimeMillis())) {
        return Optional.empty();
      }
    }
    long next = newest + 1;
    long expires = System.currentTimeMillis() + lease.toMillis();
    if (!files.createIfAbsent(path(next), new Lease(holder, expires, false).encode())) {
      return Optional.empty();  // another process took it first
    }
    if (newest(files) != next) {
      // our listing was so old that lease `next` had already been created and cleaned up: the newest
      // lease is somebody else's
      files.delete(path(next));
      return Optional.empty();
    }
    MaintenanceLock lock = new MaintenanceLock(files, next, holder, lease, expires);
    lock.deleteOldLeases();
    return Optional.of(lock);
  }

  /** This lease's number (leases taken later have higher numbers). */
  long number() {
    return number;
  }

  /**
   * Fails with a {@link StorageException} if this process no longer holds the lease: another process
   * took it over, or it could not be renewed before it expired. Call it before every commit.
   */
  void ensureHeld() {
    String why = lost;
    if (why == null && System.currentTimeMillis() >= expiresMillis) {
      why = "it expired before it could be renewed";
    }
    if (why == null) {
      try {
        if (files.objectExists(path(number + 1))) {
          why = "another process took it over";
        }
      } catch (IOException e) {
        why = "its successor could not be checked: " + e;
      }
    }
    if (why != null) {
      lost = why;
      throw new StorageException("lost the maintenance lease " + path(number) + ": " + why + "; nothing more is "
          + "committed under it, the work is retried by the next holder", null);
    }
  }

  private synchronized void renew() {
    if (closed || lost != null) {
      return;
    }
    try {
      if (files.objectExists(path(number + 1))) {
        lost = "another process took it over";
      } else if (!files.readIfPresent(path(number)).map(l -> holder.equals(Lease.decode(l).holder())).orElse(false)) {
        lost = "its file was replaced";
      } else if (System.currentTimeMillis() >= expiresMillis) {
        lost = "it expired before it could be renewed";
      } else {
        long expires = System.currentTimeMillis() + lease.toMillis();
        files.overwrite(path(number), new Lease(holder, expires, false).encode());
        expiresMillis = expires;
        return;
      }
      LOG.warn("lost the maintenance lease {}: {}", path(number), lost);
      renewal.cancel(false);
    } catch (IOException e) {
      LOG.warn("could not renew the maintenance lease {} (retrying): {}", path(number), e.toString());
    }
  }

  private void deleteOldLeases() {
    try {
      for (long n : numbers(files)) {
        if (n < number - KEEP) {
          files.delete(path(n));
        }
      }
    } catch (IOException e) {
      LOG.warn("could not delete old maintenance lease files: {}", e.toString());
    }
  }

  /** Stops renewing and releases the lease if it is still ours. */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    renewal.cancel(false);
    if (lost != null || files.objectExists(path(number + 1))) {
      return;
    }
    Optional<byte[]> content = files.readIfPresent(path(number));  // empty: cleaned up by a later holder
    if (content.isPresent() && holder.equals(Lease.decode(content.get()).holder())) {
      files.overwrite(path(number), new Lease(holder, System.currentTimeMillis(), true).encode());
    }
  }
}
