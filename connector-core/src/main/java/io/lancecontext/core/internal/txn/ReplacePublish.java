package io.lancecontext.core.internal.txn;

import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Publishes a transaction that replaces a store's contents (Spark's {@code Overwrite}): in the same one
 * record that makes the transaction's rows visible, every key visible before it and not written by it is
 * deleted, so a reader sees the old contents or the new ones, never a mix and never an empty store.
 *
 * <p>How: before the record is written, the keys of the view as it is now are staged as tombstones under
 * the same transaction, by a part whose id ({@value #PART_ID}) sorts before every other part id; within a
 * transaction the greater part id wins a key ({@link TxnRecord#ORDER}), so a key the transaction writes keeps
 * its new row and every other key reads as deleted. The ordinary publish then writes the one
 * put-if-absent record naming the tombstone part with the others. Nothing here is visible before that record.
 * The tombstone parts carry their own tombstone column, so this works on stores without capability
 * {@code tombstones} too (their merge deletes the base rows such a part hides; see
 * {@code internal.write.DeletionParts}).
 *
 * <p>Replays: a transaction already decided is passed to the ordinary publish as it is (published: changes
 * nothing and says so; aborted: fails) and no tombstone is staged. Two committers racing stage a tombstone
 * part each; the record written first names its own, the other part is never visible and is collected.
 *
 * <p>Scope: the keys deleted are those of the view read when the call begins; a row another writer
 * acknowledges while the publish runs is ordered before or after the transaction as the ordinary publish
 * orders it, and only rows visible to that read are deleted. Part ids of the transaction's other parts
 * must sort after {@value #PART_ID} (every id of {@code [A-Za-z0-9._-]} does).
 */
public final class ReplacePublish {
  /** The part id of the tombstone part. */
  public static final String PART_ID = "!replace";

  /** What the replace needs of its store (implemented by the public handle; no dependency upward). */
  public interface Store {
    /** The decision about {@code txid}, if there is one. */
    Optional<TxnRecord> record(String txid);

    /**
     * Stages a tombstone for every key present now (superseded, retired and expired ones included: a record
     * hidden only because another one supersedes it would reappear once that one is deleted), under {@code txid}
     * by part {@code partId},
     * and returns the summary of that part (bounded memory: keys stream from the read into the staging).
     */
    WriteSummary stageTombstonesForVisibleKeys(String txid, String partId);

    /** The ordinary publish. */
    PublishResult publish(String txid, Collection<WriteSummary> summaries);
  }

  private ReplacePublish() {}

  /**
   * Publishes {@code txid} (its parts named by {@code summaries}) replacing the store's contents.
   */
  public static PublishResult publish(Store store, String txid, Collection<WriteSummary> summaries) {
    TxnIds.requireValid(txid);
    if (store.record(txid).isPresent()) {
      return store.publish(txid, summaries);
    }
    for (WriteSummary s : summaries) {
      for (WriteSummary.StagedPart p : s.staged()) {
        if (p.partId().compareTo(PART_ID) <= 0) {
          throw new IllegalArgumentException("part id '" + p.partId() + "' of transaction " + txid + " does not sort "
              + "after '" + PART_ID + "', the replacing tombstones' part");
        }
      }
    }
    List<WriteSummary> all = new ArrayList<>(summaries);
    all.add(store.stageTombstonesForVisibleKeys(txid, PART_ID));
    return store.publish(txid, all);
  }
}
