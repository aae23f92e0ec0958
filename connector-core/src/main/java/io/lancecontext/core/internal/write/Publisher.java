package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.error.TransactionAbortedException;
import io.lancecontext.core.error.TransactionExpiredException;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.txn.PublishIntents;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.txn.TxnRecord;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides the transactions of one resident store: a publish claims every bucket the transaction touches on this
 * JVM's bucket writers (fencing other writers), announces itself ({@link PublishIntents}), gives each bucket its
 * publish sequence and writes the one record that makes exactly the named parts visible; an abort writes the
 * record that makes none of them visible. Replays, concurrent committers and attempts after an expiry ({@link
 * TxnIds#attempt}) resolve to the one record a transaction has. Thread-safe.
 */
public final class Publisher {
  private static final Logger LOG = LoggerFactory.getLogger(Publisher.class);

  private final BucketWriter[] writers;
  private final Transactions transactions;
  private final String uri;
  private final String name;
  private final Runnable onWrite;

  /** {@code onWrite} runs after every publish this JVM decided (the maintenance schedule). */
  Publisher(BucketWriter[] writers, Transactions transactions, String uri, String name, Runnable onWrite) {
    this.writers = writers;
    this.transactions = transactions;
    this.uri = uri;
    this.name = name;
    this.onWrite = onWrite;
  }

  /**
   * Opens and claims every bucket's lanes, as a publish touching every bucket does before it takes its sequences,
   * without publishing anything: the first publish then finds them open. A writer of another process that held a
   * lane claims it back at its next put, as after any publish.
   */
  public void prepare() {
    for (BucketWriter w : writers) {
      w.beginPublish();
      w.endPublish();
    }
  }

  /**
   * Publishes transaction {@code txid}: exactly the parts the summaries name become visible to every
   * reader in every process at once (when its record is written). Every bucket touched is claimed first
   * (fencing other writers, who re-seed above the transaction when they claim back) and given its publish
   * sequence, above every stamp present; the record is written while this JVM holds those buckets.
   *
   * @throws TransactionAbortedException if the transaction was aborted
   */
  public PublishResult publish(String transaction, Collection<WriteSummary> summaries) {
    return publish(transaction, summaries, () -> { });
  }

  /**
   * As {@link #publish(String, Collection)}; {@code whileHeld} runs once every touched bucket is claimed for the
   * publish (no put can land in them until it ends) and has its publish sequence, before the record is written:
   * a check that throws leaves the transaction undecided and nothing published.
   */
  public PublishResult publish(String transaction, Collection<WriteSummary> summaries, Runnable whileHeld) {
    long started = System.nanoTime();
    TxnIds.requireValid(transaction);
    for (WriteSummary w : summaries) {
      if (w.transactionId().isEmpty() || !TxnIds.transactionOf(w.transactionId().get()).equals(transaction)) {
        throw new IllegalArgumentException("a write summary of " + w.transactionId().map(t -> "transaction " + t)
            .orElse("an immediate handle") + " passed to the publish of transaction " + transaction);
      }
    }
    // the attempt a replay after an expiry staged under (TxnIds.attempt): the first that did not expire
    String txid = transaction;
    var existing = transactions.record(txid);
    int attempt = 0;
    while (existing.isPresent() && existing.get().expired()) {
      txid = TxnIds.attempt(transaction, ++attempt);
      existing = transactions.record(txid);
    }
    if (existing.isPresent()) {
      return decided(existing.get(), started);
    }
    String current = txid;
    if (attempt > 0 && summaries.stream().noneMatch(w -> w.transactionId().get().equals(current))) {
      // nothing was staged again since the last attempt expired: that attempt's answer stands
      return decided(transactions.record(TxnIds.attempt(transaction, attempt - 1)).orElseThrow(), started);
    }
    Map<String, WriteSummary.StagedPart> byName = new LinkedHashMap<>();
    for (WriteSummary w : summaries) {
      if (!w.transactionId().get().equals(txid)) {
        // staged under an earlier attempt, which expired: its parts are gone
        return decided(transactions.record(w.transactionId().get()).orElseThrow(), started);
      }
      for (WriteSummary.StagedPart p : w.staged()) {
        if (p.bucket() < 0 || p.bucket() >= writers.length) {
          throw new IllegalArgumentException("a staged part of bucket " + p.bucket() + "; the store has "
              + writers.length);
        }
        byName.putIfAbsent(p.bucket() + "/" + p.name(), p);
      }
    }
    try {
      for (WriteSummary.StagedPart p : byName.values()) {
        if (!transactions.files().prefixExists(TxnIds.partDir(txid, p.bucket(), p.name()) + "/")) {
          throw new StorageException(uri + ": staged part "
              + TxnIds.partDir(txid, p.bucket(), p.name()) + " of transaction " + txid + " does not exist (never "
              + "staged, or collected after its txn.timeout without a publish)", null);
        }
      }
    } catch (IOException e) {
      throw LanceErrors.translate("check the staged parts of transaction " + txid, e);
    }
    TreeSet<Integer> buckets = new TreeSet<>();
    byName.values().forEach(p -> buckets.add(p.bucket()));
    Map<Integer, Long> sequences = new java.util.TreeMap<>();
    List<Integer> begun = new ArrayList<>();
    TxnRecord decided;
    TxnRecord mine = null;
    try {
      // ascending bucket order: two publishes in one JVM cannot deadlock
      for (int b : buckets) {
        writers[b].beginPublish();
        begun.add(b);
      }
      // announced before its sequences are taken, until its record is written: no merge moves a bucket's
      // transaction watermark past them meanwhile (PublishIntents)
      try (PublishIntents.Intent intent = transactions.intents().begin(txid, buckets)) {
        for (int b : buckets) {
          sequences.put(b, writers[b].publishSequence());
        }
        whileHeld.run();
        mine = new TxnRecord(txid, true, System.currentTimeMillis(), sequences, new ArrayList<>(byName.values()));
        intent.requireFresh(txid);
        decided = transactions.decide(mine);
      }
    } finally {
      RuntimeException failed = null;
      for (int b : begun) {
        try {
          if (!writers[b].endPublish()) {
            LOG.info("{} bucket {}: another writer claimed a lane "
                + "during the publish of transaction {}; claimed it back", name, b, txid);
          }
        } catch (RuntimeException e) {
          // the record decides the transaction either way; a writer that keeps the lane may order its
          // next puts before the transaction (docs/architecture.md, Transactions, limits)
          if (failed == null) {
            failed = e;
          }
        }
      }
      if (failed != null) {
        LOG.warn("{}: transaction {}: claiming a lane back after "
            + "the publish failed: {}", name, txid, failed.toString());
      }
    }
    if (decided != mine) {
      return decided(decided, started);  // another committer published (or aborted) it meanwhile
    }
    onWrite.run();
    return result(decided, false, started);
  }

  private PublishResult decided(TxnRecord r, long started) {
    if (r.expired()) {
      throw new TransactionExpiredException("transaction " + r.txid() + " of " + uri
          + " expired before it was published: nothing renewed it for its txn.timeout, so garbage collection "
          + "aborted it at " + java.time.Instant.ofEpochMilli(r.atMillis()) + " and deleted its staged rows. Raise "
          + "'txn.timeout' (default 1h) above the longest time a job may stay down before it is restored or "
          + "replayed");
    }
    if (!r.published()) {
      throw new TransactionAbortedException("transaction " + r.txid() + " of " + uri + " was aborted; it cannot be "
          + "published");
    }
    transactions.markPublished();
    return result(r, true, started);
  }

  private static PublishResult result(TxnRecord r, boolean already, long started) {
    long rows = 0;
    long deletes = 0;
    for (WriteSummary.StagedPart p : r.parts()) {
      rows += p.rows();
      deletes += p.deletes();
    }
    return new PublishResult(r.txid(), already, r.parts().size(), rows, deletes, r.sequences(),
        (System.nanoTime() - started) / 1_000_000);
  }

  /**
   * Aborts transaction {@code txid}: none of its parts will ever be visible; garbage collection deletes
   * them after {@code gc.grace}.
   *
   * @return false if it was aborted before
   * @throws TransactionAbortedException if it was published (a transaction is decided once)
   */
  public boolean abort(String transaction) {
    TxnIds.requireValid(transaction);
    String txid = transactions.currentAttempt(transaction);
    TxnRecord mine = TxnRecord.aborted(txid, System.currentTimeMillis());
    TxnRecord r = transactions.decide(mine);
    if (r.published()) {
      throw new TransactionAbortedException("transaction " + txid + " of " + uri + " was published; it cannot be "
          + "aborted");
    }
    return r == mine;
  }
}
