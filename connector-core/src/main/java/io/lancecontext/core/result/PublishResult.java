package io.lancecontext.core.result;

import java.util.Map;

/**
 * What {@code ContextStore.publish} did with a transaction.
 *
 * @param transactionId the transaction
 * @param alreadyPublished true if the transaction was published before (by this call's earlier attempt,
 *     another committer, or a replay after failover): this call changed nothing, and the other fields
 *     describe the earlier publish
 * @param parts staged parts made visible
 * @param rows rows made visible (upserts; within each part one row per key)
 * @param keysDeleted tombstones made visible
 * @param sequences per bucket touched, the write sequence the transaction's rows read as there
 * @param durationMillis how long this call took
 */
public record PublishResult(String transactionId, boolean alreadyPublished, int parts, long rows, long keysDeleted,
    Map<Integer, Long> sequences, long durationMillis) {
  public PublishResult {
    sequences = Map.copyOf(sequences);
  }
}
