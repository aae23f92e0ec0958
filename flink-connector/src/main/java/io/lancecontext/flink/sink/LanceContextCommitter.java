package io.lancecontext.flink.sink;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.TransactionExpiredException;
import io.lancecontext.core.result.PublishResult;
import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.groups.SinkCommitterMetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes each checkpoint's transactions once the checkpoint is complete (one committer: the
 * aggregator before it has parallelism 1 and sends it everything). Idempotence: {@link ContextStore#publish}
 * of a transaction published before changes nothing and says so, so a committable replayed after a failover
 * (restored from the committer's state, or retried) is safe; a publish that failed published nothing or
 * everything, and is repeated. Transactions of one committable are published in order; a failure between
 * two leaves the first visible and the job, restored, publishes the rest. A retryable failure is retried by
 * Flink (up to {@code sink.committer.retries}); any other fails the job, which restores and publishes again.
 *
 * A committable restored later than {@code txn.timeout} after its transaction's last renewal names rows garbage
 * collection deleted: it is logged at ERROR (checkpoint, transaction, the option), counted in
 * {@code transactionsExpired} and dropped, as Flink's Kafka sink drops a transaction that timed out.
 *
 * <p>Metrics (committer group): {@code transactionsPublished}, {@code transactionsAlreadyPublished},
 * {@code transactionsExpired},
 * {@code rowsPublished}, {@code publishLatencyMs} (histogram).
 */
final class LanceContextCommitter implements Committer<LanceContextCommittable> {
  private static final Logger LOG = LoggerFactory.getLogger(LanceContextCommitter.class);

  private final boolean overwrite;
  private final ContextStore store;
  private final Counter published;
  private final Counter alreadyPublished;
  private final Counter expired;
  private final Counter rows;
  private final Histogram latency;

  /**
   * @param publishes whether this subtask publishes (exactly-once, the subtask the aggregator sends to): it readies
   *     the store to publish in the background, so that the first checkpoint's publish does not open its lanes
   */
  LanceContextCommitter(Map<String, String> options, SinkCommitterMetricGroup metrics, boolean overwrite,
      boolean publishes) {
    this.store = ContextStore.open(options);
    if (publishes) {
      store.preparePublishing();
    }
    this.overwrite = overwrite;
    this.published = metrics.counter("transactionsPublished");
    this.alreadyPublished = metrics.counter("transactionsAlreadyPublished");
    this.expired = metrics.counter("transactionsExpired");
    this.rows = metrics.counter("rowsPublished");
    this.latency = metrics.histogram("publishLatencyMs", new DescriptiveStatisticsHistogram(1024));
  }

  @Override
  public void commit(Collection<CommitRequest<LanceContextCommittable>> requests) throws IOException {
    for (CommitRequest<LanceContextCommittable> request : requests) {
      LanceContextCommittable c = request.getCommittable();
      boolean allReplayed = true;
      try {
        boolean first = true;
        for (String txn : c.transactions().keySet()) {
          long start = System.nanoTime();
          // an overwrite (a batch job: one committable, at the end of input) replaces with its first transaction
          PublishResult r = overwrite && first ? store.publishReplacing(txn, c.summaries(txn))
              : store.publish(txn, c.summaries(txn));
          first = false;
          LOG.debug("checkpoint {}: {}", c.checkpointId(), r);
          latency.update((System.nanoTime() - start) / 1_000_000);
          if (r.alreadyPublished()) {
            alreadyPublished.inc();
            LOG.info("transaction {} of checkpoint {} was published before: nothing changed", txn, c.checkpointId());
          } else {
            allReplayed = false;
            published.inc();
            rows.inc(r.rows() + r.keysDeleted());
          }
        }
      } catch (TransactionExpiredException e) {
        // restored later than txn.timeout: garbage collection deleted the rows; failing every restore would not
        // bring them back (Flink's Kafka sink treats a transaction that timed out the same way)
        expired.inc();
        LOG.error("checkpoint {} of {} is lost: {}", c.checkpointId(), store.uri(), e.getMessage());
        request.signalFailedWithKnownReason(e);
        continue;
      } catch (LanceContextException e) {
        if (e.isRetryable()) {
          LOG.warn("publishing checkpoint {} to {} failed, retrying: {}", c.checkpointId(), store.uri(), e.getMessage());
          request.retryLater();
          continue;
        }
        throw new IOException("publishing checkpoint " + c.checkpointId() + " (transactions "
            + c.transactions().keySet() + ") to " + store.uri() + " failed", e);
      }
      if (allReplayed && !c.transactions().isEmpty()) {
        request.signalAlreadyCommitted();
      }
    }
  }

  @Override
  public void close() {
    store.close();
  }
}
