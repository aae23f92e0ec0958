package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.FencedWriterException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When a lane that lost its shard to another writer may claim it back. Not thread-safe: its
 * {@link LaneWriter} calls it under the bucket's lock.
 */
final class FenceBackoff {
  private final BucketWriter.Host host;
  private final String label;
  private long reclaimAtNanos;
  /** When the back-off would end without the doubling: an add with less time left claims at its last chance. */
  private long earliestReclaimAtNanos;
  private boolean fencedRecently;
  /** Times this lane lost the shard since its last acknowledged put: each doubles the next back-off. */
  private int fencesInARow;

  FenceBackoff(BucketWriter.Host host, String label) {
    this.host = host;
    this.label = label;
  }

  /** After an acknowledged put: the next loss of the shard backs off from {@code write.fence-backoff} again. */
  void acknowledged() {
    fencesInARow = 0;
  }

  /** Milliseconds until the back-off ends (for the log). */
  long millisUntilReclaim() {
    return (reclaimAtNanos - System.nanoTime()) / 1_000_000;
  }

  /**
   * Whether the back-off after losing the shard ends early enough to try again before {@code deadline}:
   * with at least an eighth of {@code write.put-timeout} left for the claim and the put (a claim abandoned
   * for lack of time would still fence the other writer, for nothing).
   */
  boolean canRetryBefore(long deadline) {
    long at = fencedRecently ? earliestReclaimAtNanos : System.nanoTime();
    return at < lastClaimStart(deadline);
  }

  private long lastClaimStart(long deadline) {
    return deadline - host.putTimeout().toNanos() / 8;
  }

  /**
   * After losing the shard, wait (a jittered, doubling {@code write.fence-backoff}, at most a quarter of
   * {@code write.put-timeout}) before claiming it back: a claim fences the other writer, and two writers
   * re-claiming on every add would never let either seal the WAL tail it replayed (lance-core re-logs a
   * replayed tail when the writer next writes, so it would double), nor put anything.
   *
   * @throws FencedWriterException if the back-off ends after {@code deadline}
   */
  void backOff(long deadline) {
    if (!fencedRecently) {
      return;
    }
    long now = System.nanoTime();
    if (earliestReclaimAtNanos >= lastClaimStart(deadline)) {
      throw new FencedWriterException(label + ": another writer claimed the shard; this JVM claims it back in "
          + (earliestReclaimAtNanos - now) / 1_000_000 + " ms (write.fence-backoff), after write.put-timeout ends");
    }
    // a doubled back-off never costs an add its last chance to claim within write.put-timeout
    Uninterruptibly.sleep(Math.min(reclaimAtNanos, lastClaimStart(deadline) - 1) - now);
    fencedRecently = false;
  }

  /**
   * Starts the back-off after losing the shard: {@code write.fence-backoff}, doubled for every further loss
   * before this lane's next acknowledged put. Two writers that keep claiming a shard whose replayed WAL
   * tail neither could seal in time (each claim fences the other's seal, and every fenced seal leaves the
   * tail one copy longer) thus soon give one of them the time a seal takes.
   */
  void markFenced() {
    int doublings = Math.min(fencesInARow++, 10);
    long cap = host.putTimeout().toNanos() / 4;
    long base = Math.min(host.fenceBackoff().toNanos(), cap);
    double jitter = 0.5 + ThreadLocalRandom.current().nextDouble();
    long now = System.nanoTime();
    fencedRecently = true;
    reclaimAtNanos = now + (long) (Math.min(base << doublings, cap) * jitter);
    earliestReclaimAtNanos = now + (long) (base * jitter);
  }
}
