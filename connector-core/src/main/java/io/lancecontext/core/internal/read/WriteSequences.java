package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.MergedWatermarks;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * The highest write sequences a store holds, which a bucket writer seeds its stamps above when it claims a
 * shard (so that its rows order after every row present): in a shard's unsealed WAL tail, in a bucket's fresh
 * tier, in the base table.
 */
public final class WriteSequences {
  private WriteSequences() {}

  /** The highest write sequence in {@code shardId}'s unsealed WAL tail in {@code snapshot}, or -1 if it has none. */
  public static long inWalTail(LsmSnapshot snapshot, String shardId) {
    long max = -1;
    for (FreshSource source : snapshot.shard(shardId).sources()) {
      if (source instanceof WalSource w) {
        max = Math.max(max, w.maxSequence());
      }
    }
    return max;
  }

  /** The highest write sequence in the fresh tier of the shards {@code snapshot} holds (0 if none). */
  public static long inFreshTier(LsmSnapshot snapshot) {
    long max = 0;
    for (FreshShard s : snapshot.shards().values()) {
      max = Math.max(max, s.maxSequence());
    }
    return max;
  }

  /**
   * The highest write sequence {@code base} holds if it is above {@code floor}, else {@code floor}: the highest
   * stamp of its rows (all buckets'; a scan of the rows above the floor), and the merged publish sequence of
   * transaction shard {@code txnShardId} (a bucket's), which the rows of a part a merge appended whole do not carry.
   */
  public static long inBase(BaseTable base, String txnShardId, long floor) {
    ScanRequest request = ScanRequest.of(List.of(SystemColumns.SEQUENCE)).filter(SystemColumns.SEQUENCE + " > " + floor);
    try (ScanHandle scan = base.dataset().scan(request)) {
      long max = Math.max(floor, MergedWatermarks.read(base.dataset()).getOrDefault(txnShardId, 0L));
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        BigIntVector v = (BigIntVector) reader.getVectorSchemaRoot().getVector(SystemColumns.SEQUENCE);
        for (int i = 0; i < v.getValueCount(); i++) {
          if (!v.isNull(i)) {
            max = Math.max(max, v.get(i));
          }
        }
      }
      return max;
    } catch (IOException | RuntimeException e) {
      throw LanceErrors.translate("read the highest write sequence of the base table", e);
    }
  }
}
