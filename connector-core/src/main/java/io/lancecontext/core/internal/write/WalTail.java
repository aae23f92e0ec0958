package io.lancecontext.core.internal.write;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import java.io.IOException;
import java.util.List;

/**
 * A shard's WAL as a writer that claims it finds it: how many entries lie above the replay position of the
 * newest manifest (what lance-core replays into the new writer's memtable, and the lane seals before its
 * first put), and the position the next entry takes: one above both the replay position and the newest
 * entry present (lance-core numbers a shard's entries consecutively).
 */
record WalTail(long unsealed, long nextPosition) {
  static WalTail of(StoreFiles files, String shardId) throws IOException {
    long replayAfter = ShardManifests.latest(files, shardId).replayAfter();
    List<Long> positions = WalEntry.positions(files, shardId);
    long tail = positions.stream().filter(p -> p > replayAfter).count();
    long newest = positions.isEmpty() ? 0 : positions.get(positions.size() - 1);
    return new WalTail(tail, Math.max(replayAfter, newest) + 1);
  }
}
