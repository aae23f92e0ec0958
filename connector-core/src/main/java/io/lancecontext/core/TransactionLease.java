package io.lancecontext.core;

/**
 * Keeps a transaction alive while it is open ({@link ContextStore#holdTransaction}): renewed every quarter of
 * {@code txn.timeout}, so garbage collection never aborts it however long the job that owns it runs. Closing
 * it stops the renewals; the transaction then stays publishable for {@code txn.timeout}.
 */
public interface TransactionLease extends AutoCloseable {
  @Override
  void close();
}
