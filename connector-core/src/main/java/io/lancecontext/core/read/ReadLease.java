package io.lancecontext.core.read;

/**
 * Keeps a {@link ReadPlan} readable while it is open (see {@code ContextStore.holdRead}); closing it stops the
 * renewals, and the plan stays readable for {@code read.lease-timeout} more.
 */
public interface ReadLease extends AutoCloseable {
  @Override
  void close();
}
