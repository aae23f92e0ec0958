package io.lancecontext.core.internal.txn;

import io.lancecontext.core.internal.io.StoreFiles;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps transactions alive while their owners live. An undecided transaction is alive until the newest time
 * one of its liveness markers names ({@link TxnIds#newLiveMarker}); garbage collection decides it
 * <em>expired</em> (aborted, see {@link TxnRecord#expired}) only after that. Owners renew it:
 *
 * <ul>
 *   <li>every part an atomic handle stages renews it to now + the handle's {@code txn.timeout} (at most one
 *       marker write per quarter of the timeout);</li>
 *   <li>an open atomic handle, and anyone holding a {@link #hold lease} (a Spark driver from job start to
 *       commit), renews it every quarter of the timeout, so a straggler that stages nothing for hours, or a
 *       checkpoint that takes long, keeps its transaction.</li>
 * </ul>
 * An owner that dies stops renewing: its transaction stays publishable for {@code txn.timeout} after the last
 * renewal (a Flink job restored within it, a streaming epoch replayed within it, publishes it). Each JVM deletes
 * its previous marker of a transaction when it writes the next, so a transaction has about one marker per
 * process that owns it. Renewal failures are logged and retried at the next period; they never fail a write.
 */
public final class TxnLiveness {
  private static final Logger LOG = LoggerFactory.getLogger(TxnLiveness.class);
  /** The shortest renewal period (tests use timeouts of a second or less). */
  private static final long MIN_PERIOD_MILLIS = 20;

  private static final ScheduledExecutorService RENEWALS = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "lancecontext-txn-liveness");
    t.setDaemon(true);
    return t;
  });

  private final StoreFiles files;
  private final String uri;
  /** txid → this JVM's newest marker of it. */
  private final Map<String, Marker> markers = new ConcurrentHashMap<>();
  private final Map<String, Held> held = new ConcurrentHashMap<>();
  private final java.util.function.Predicate<String> decided;

  /**
   * This JVM's newest marker of a transaction, and the one before it, which the next renewal deletes: a
   * listing that runs while a renewal moves the new marker in and deletes an old one may see neither of those
   * two, but always sees the one in between, untouched ({@link #renew}).
   */
  private record Marker(String path, long liveUntil, String before) {}

  private static final class Held {
    int holders;
    ScheduledFuture<?> renewal;
  }

  TxnLiveness(StoreFiles files, String uri, java.util.function.Predicate<String> decided) {
    this.files = files;
    this.uri = uri;
    this.decided = decided;
  }

  /**
   * Renews {@code txid} to now + {@code timeout}, unless this JVM renewed it less than a quarter of the timeout
   * ago (then its marker already reaches three quarters of it).
   */
  public void renew(String txid, Duration timeout) {
    renew(txid, timeout, false);
  }

  /**
   * Renews {@code txid} to now + {@code timeout}; unless {@code always}, only if this JVM's marker reaches less
   * than three quarters of the timeout ahead (a staged part renews at most once per quarter of the timeout).
   */
  private void renew(String txid, Duration timeout, boolean always) {
    long now = System.currentTimeMillis();
    long until = now + timeout.toMillis();
    Marker previous = markers.get(txid);
    if (decided.test(txid)) {
      return;  // published or aborted: nothing left to keep alive
    }
    if (!always && previous != null && previous.liveUntil() >= until - timeout.toMillis() / 4) {
      return;
    }
    String path = TxnIds.newLiveMarker(txid, until);
    try {
      files.overwrite(path, new byte[0]);
      markers.put(txid, new Marker(path, until, previous == null ? null : previous.path()));
      // not the previous marker: a garbage collection listing the transaction now might miss both it and the new
      // one (a directory listing or LIST racing a rename and a delete), find no marker alive and abort the
      // transaction; the one before it is never needed again
      if (previous != null && previous.before() != null) {
        files.delete(previous.before());
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: renewing transaction {} failed (retried; it stays alive until its previous renewal runs out): {}",
          uri, txid, e.toString());
    }
  }

  /**
   * Keeps {@code txid} alive until the returned lease is closed: renewed every quarter of {@code timeout}
   * (the first time after a quarter: whoever stages a part renews it then). Leases of one transaction share
   * one renewal; closing the last one stops it.
   */
  public AutoCloseable hold(String txid, Duration timeout) {
    long period = Math.max(MIN_PERIOD_MILLIS, timeout.toMillis() / 4);
    held.compute(txid, (k, h) -> {
      if (h == null) {
        h = new Held();
        // every period: the marker always reaches at least three quarters of the timeout ahead
        h.renewal = RENEWALS.scheduleAtFixedRate(() -> renew(txid, timeout, true), period, period,
            TimeUnit.MILLISECONDS);
      }
      h.holders++;
      return h;
    });
    return new AutoCloseable() {
      private boolean closed;

      @Override
      public void close() {
        if (closed) {
          return;
        }
        closed = true;
        held.computeIfPresent(txid, (k, h) -> {
          if (--h.holders > 0) {
            return h;
          }
          h.renewal.cancel(false);
          return null;
        });
      }
    };
  }

  /** Whether this JVM holds {@code txid} alive (for tests). */
  boolean isHeld(String txid) {
    return held.containsKey(txid);
  }
}
