package io.lancecontext.core.internal.write;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background seal of one lane: the close of a shard writer the lane has let go of, run after every
 * close the bucket started before it, and the bounded wait for it before the lane re-opens. Not
 * thread-safe: its {@link LaneWriter} calls it under the bucket's lock (only the close runs on another
 * thread).
 */
final class LaneSeal {
  /** Logs as the lane writer it was part of, so that log settings naming {@code LaneWriter} keep applying. */
  private static final Logger LOG = LoggerFactory.getLogger(LaneWriter.class);

  private final BucketWriter.Host host;
  private final String label;
  private final Function<Callable<Boolean>, Future<Boolean>> sealChain;
  private Future<Boolean> sealing;
  private long sealingSinceNanos;

  /**
   * {@code sealChain} runs a close after every close the bucket started before it (so that a bucket's
   * generations are flushed in the order they were sealed).
   */
  LaneSeal(BucketWriter.Host host, String label, Function<Callable<Boolean>, Future<Boolean>> sealChain) {
    this.host = host;
    this.label = label;
    this.sealChain = sealChain;
  }

  /** Starts {@code close} (started at {@code startedNanos}) after the bucket's earlier seals. */
  void start(long startedNanos, Callable<Boolean> close) {
    sealingSinceNanos = startedNanos;
    sealing = sealChain.apply(close);
  }

  /** Whether a background seal of this lane is still running. */
  boolean isRunning() {
    Future<Boolean> s = sealing;
    return s != null && !s.isDone();
  }

  /** Whether a seal was started and not yet waited for (or given up on). */
  boolean isPending() {
    return sealing != null;
  }

  /**
   * Waits for a background seal of this lane, bounded by {@code deadline}; false if it did not end or
   * failed.
   */
  boolean await(long deadline) {
    Future<Boolean> s = sealing;
    if (s == null) {
      return true;
    }
    try {
      boolean ok = Uninterruptibly.get(s, deadline - System.nanoTime());
      sealing = null;
      return ok;
    } catch (TimeoutException e) {
      if (System.nanoTime() - sealingSinceNanos >= host.putTimeout().toNanos()) {
        // a close that hangs (lance-core 7.0.0 blocks in a fenced writer's close) must not hold the lane forever
        LOG.warn("{}: a background seal did not finish within {}; claiming the shard anyway", label, host.putTimeout());
        sealing = null;
      }
      return false;
    } catch (ExecutionException e) {
      sealing = null;
      return false;
    }
  }
}
