package io.lancecontext.core.internal.io;

import io.lancecontext.core.read.ReadLease;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leases that keep planned reads readable while they are used. A read planned at {@code t} finds its files
 * until {@code t + gc.grace} by itself; a lease extends that for as long as its holder (a Spark scan whose plan
 * a cached DataFrame keeps, a Flink source whose splits a checkpoint holds) renews it, plus
 * {@code read.lease-timeout} after the last renewal (a Flink job restored later, a driver that died). A lease is
 * an empty object {@code _lc/read-leases/<plannedAt>-<until>-<random>}: garbage collection lists the folder and
 * treats every lease not yet run out as a read planned at {@code plannedAt} still in progress, so it deletes
 * nothing such a read needs ({@link #oldestPlannedAt}). Renewal writes the next object, then deletes the one
 * before the previous one (so a listing racing it always sees one), every quarter of the timeout; failures are
 * logged and retried at the next period.
 */
public final class ReadLeases {
  private static final Logger LOG = LoggerFactory.getLogger(ReadLeases.class);
  public static final String DIR = "_lc/read-leases";
  private static final Pattern NAME = Pattern.compile("(\\d{13})-(\\d{13})-[0-9a-f]{8}");
  private static final long MIN_PERIOD_MILLIS = 20;
  private static final ScheduledExecutorService RENEWALS = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "lancecontext-read-leases");
    t.setDaemon(true);
    return t;
  });

  private ReadLeases() {}

  /** A held lease; {@link #close()} stops its renewals (it then runs out after its timeout). */
  public static final class Lease implements AutoCloseable {
    private final StoreFiles files;
    private final long plannedAt;
    private final Duration timeout;
    private ScheduledFuture<?> renewal;
    private String current;
    /** The object before {@link #current}, deleted by the next renewal (see {@link #renew}). */
    private String before;
    private boolean closed;

    private Lease(StoreFiles files, long plannedAt, Duration timeout) {
      this.files = files;
      this.plannedAt = plannedAt;
      this.timeout = timeout;
    }

    private synchronized void renew() {
      if (closed) {
        return;
      }
      String next = name(plannedAt, System.currentTimeMillis() + timeout.toMillis(),
          ThreadLocalRandom.current().nextInt());
      try {
        files.overwrite(next, new byte[0]);
        // the object before the previous one only: a garbage collection listing the leases while this renewal
        // moves the next one in and deletes an old one may miss both of those, never the one in between
        String oldest = before;
        before = current;
        current = next;
        if (oldest != null) {
          files.delete(oldest);
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("{}: renewing the lease of a read planned at {} failed (retried): {}", files, plannedAt, e.toString());
      }
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        renewal.cancel(false);
        if (before != null) {  // no renewal moves an object in any more: the newest alone is safe to list
          try {
            files.delete(before);
          } catch (IOException | RuntimeException e) {
            LOG.warn("{}: deleting an earlier lease object of a read planned at {} failed (it runs out by itself): {}",
                files, plannedAt, e.toString());
          }
          before = null;
        }
      }
    }

    /** Ends the lease now: stops its renewals and deletes its object (nothing will read the plan again). */
    public synchronized void release() {
      close();
      if (current != null) {
        try {
          files.delete(current);
        } catch (IOException | RuntimeException e) {
          LOG.warn("{}: deleting the lease of a read planned at {} failed (it runs out by itself): {}", files,
              plannedAt, e.toString());
        }
        current = null;
      }
    }
  }

  /**
   * Holds a read planned at {@code plannedAtMillis} readable: one lease object written now, renewed every
   * quarter of {@code timeout} until the lease is closed.
   */
  public static Lease hold(StoreFiles files, long plannedAtMillis, Duration timeout) {
    Lease lease = new Lease(files, plannedAtMillis, timeout);
    lease.renew();
    long period = Math.max(MIN_PERIOD_MILLIS, timeout.toMillis() / 4);
    lease.renewal = RENEWALS.scheduleAtFixedRate(lease::renew, period, period, TimeUnit.MILLISECONDS);
    return lease;
  }

  /**
   * The expiry of a lease that never runs out. Tags of earlier builds wrote one each; such leases are ignored
   * ({@link #live}): a tag keeps exactly what its own snapshot reads, which garbage collection learns from the tag.
   */
  public static final long NEVER = 9_999_999_999_999L;

  /**
   * Writes a lease that is never renewed: a read planned at {@code plannedAtMillis} stays readable until
   * {@code untilMillis}, or until the lease is deleted. {@code id} (8 hex digits) makes its name known to whoever
   * deletes it ({@link #fixedName}).
   */
  public static String holdUntil(StoreFiles files, long plannedAtMillis, long untilMillis, int id) throws IOException {
    String name = fixedName(plannedAtMillis, untilMillis, id);
    files.overwrite(name, new byte[0]);
    return name;
  }

  /** The object of a lease written by {@link #holdUntil}. */
  public static String fixedName(long plannedAtMillis, long untilMillis, int id) {
    return name(plannedAtMillis, Math.min(untilMillis, NEVER), id);
  }

  /** A lease object: {@code <plannedAt>-<until>-<id>}, as {@link #NAME} parses it. */
  private static String name(long plannedAtMillis, long untilMillis, int id) {
    return DIR + "/" + String.format("%013d-%013d-%08x", plannedAtMillis, untilMillis, id);
  }

  /**
   * Whether a lease alive at {@code nowMillis} keeps a read planned at {@code plannedAtMillis} readable: one
   * planned at or before it (garbage collection keeps what every read planned after a leased one needs).
   */
  public static boolean covers(StoreFiles files, long plannedAtMillis, long nowMillis) throws IOException {
    return live(files, nowMillis, null).stream().anyMatch(plannedAt -> plannedAt <= plannedAtMillis);
  }

  /** As {@link #hold}, as the public {@link ReadLease} a store handle returns (the lease itself stays internal). */
  public static ReadLease holdForHandle(StoreFiles files, long plannedAtMillis, Duration timeout) {
    Lease lease = hold(files, plannedAtMillis, timeout);
    return new ReadLease() {
      @Override
      public void close() {
        lease.close();
      }

      @Override
      public void release() {
        lease.release();
      }
    };
  }

  /**
   * The planning time of the oldest read still leased at {@code nowMillis} ({@link Long#MAX_VALUE} if none);
   * leases that ran out are deleted.
   */
  public static long oldestPlannedAt(StoreFiles files, long nowMillis) throws IOException {
    List<String> expired = new ArrayList<>();
    long oldest = live(files, nowMillis, expired).stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
    if (!expired.isEmpty()) {
      files.deleteAll(expired);
    }
    return oldest;
  }

  /**
   * The planning times of the leases not run out at {@code nowMillis}, from one listing; the objects of those that
   * ran out are added to {@code expired} (when not null). Leases that never run out ({@link #NEVER}, left by tags
   * of earlier builds) are not counted: their tags keep what they read.
   */
  private static List<Long> live(StoreFiles files, long nowMillis, List<String> expired) throws IOException {
    List<Long> plannedAt = new ArrayList<>();
    for (StoreFiles.Entry e : files.listPrefix(DIR + "/")) {
      Matcher m = NAME.matcher(e.name());
      if (!m.matches() || !e.path().equals(DIR + "/" + e.name())) {
        continue;
      }
      long until = Long.parseLong(m.group(2));
      if (until == NEVER) {
        continue;
      }
      if (until > nowMillis) {
        plannedAt.add(Long.parseLong(m.group(1)));
      } else if (expired != null) {
        expired.add(e.path());
      }
    }
    return plannedAt;
  }
}
