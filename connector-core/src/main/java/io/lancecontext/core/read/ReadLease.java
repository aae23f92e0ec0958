package io.lancecontext.core.read;

/**
 * Keeps a {@link ReadPlan} readable while it is open (see {@code ContextStore.holdRead}). {@link #close()} stops
 * the renewals and the plan stays readable for {@code read.lease-timeout} more (a Flink job may restore it);
 * {@link #release()} ends the lease at once (nothing will read the plan again).
 */
public interface ReadLease extends AutoCloseable {
  @Override
  void close();

  /** Ends the lease now: garbage collection no longer keeps anything for it. */
  void release();
}
