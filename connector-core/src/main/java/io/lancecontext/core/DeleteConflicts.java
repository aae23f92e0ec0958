package io.lancecontext.core;

import io.lancecontext.core.error.CommitConflictException;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.NewestSequences;
import io.lancecontext.core.internal.store.ResidentStore;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The publish of deletions chosen by a read ({@link ContextStore#publishDeletes}): while the publish holds every
 * bucket it touches (no put lands there meanwhile), each key it deletes must still have the newest row the
 * read could have seen, one stamped before the read was taken. A key written or deleted by another writer
 * since is a conflict: nothing is deleted and a retryable {@link CommitConflictException} names the key.
 *
 * <p>Stamps are the writers' hybrid clock (microseconds, at millisecond resolution): a row stamped in the same
 * millisecond as the read counts as written after it (a conflict that may be spurious, never a lost update).
 * A row whose writer's clock runs behind the reader's by more than the time between the read and that write is
 * not seen as later; hosts of one store are expected to keep their clocks synchronised (NTP). A base row
 * without a stamp (its transaction's part was appended whole by a merge) counts as its bucket's newest merged
 * publish.
 */
final class DeleteConflicts {
  private DeleteConflicts() {}

  static PublishResult publish(ContextStore store, ResidentStore resident, String txid,
      Collection<WriteSummary> summaries, Instant readAt) {
    long readMicros = readAt.toEpochMilli() * 1_000L;
    return store.publish(txid, summaries, () -> {
      List<WriteSummary.StagedPart> parts = summaries.stream().flatMap(s -> s.staged().stream()).toList();
      if (parts.isEmpty()) {
        return;
      }
      String attempt = summaries.iterator().next().transactionId().orElseThrow();
      List<String> keys = resident.transactions().stagedKeys(attempt, parts, resident.spec().key());
      try (LsmSnapshot now = resident.snapshot(null)) {
        Map<String, Long> newest = NewestSequences.of(resident.spec(), now, keys);
        for (String k : keys) {
          boolean present = newest.containsKey(k);
          Long stamp = present ? newest.get(k) : null;
          long seq = stamp != null ? stamp : now.base().watermark(TxnIds.txnShardId(resident.bucketOf(k)));
          if (!present || seq >= readMicros) {
            throw new CommitConflictException("the delete from " + resident.config().uri() + " conflicts with a "
                + "concurrent write: key '" + k + "' was " + (present ? "written" : "deleted") + " by another writer "
                + "after the delete read it (at " + readAt + "); nothing was deleted, run the delete again");
          }
        }
      }
    });
  }
}
