package io.lancecontext.core.internal.lance;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.memwal.ShardWriter;
import org.lance.memwal.ShardWriterConfig;

/**
 * lance-core's writer of one MemWAL shard, opened with the only configuration lancecontext uses. Opening it
 * claims the shard (fencing any other writer) and replays the shard's unsealed WAL tail into its memtable;
 * closing it flushes the memtable into a generation (a seal). lance-core 7.0.0 blocks forever in a fenced
 * writer's {@link #put} and {@link #close}: the caller ({@code LaneWriter}) runs them on a thread of their
 * own, bounded, and abandons a fenced writer instead of closing it.
 */
public final class MemWalShardWriter {
  /** lance-core's memtable size limit as lancecontext sets it: never reached. */
  static final long MEMTABLE_SIZE_LIMIT = 16L << 30;

  private final ShardWriter writer;

  private MemWalShardWriter(ShardWriter writer) {
    this.writer = writer;
  }

  /** Opens a writer of shard {@code shardId} of {@code base} (a blocking native call). */
  public static MemWalShardWriter open(LanceDataset base, String shardId) {
    return new MemWalShardWriter(base.lance().memWalWriter(shardId, config()));
  }

  static ShardWriterConfig config() {
    // durable puts; lance-core's own memtable rotation stays out of reach of the store's seal thresholds
    // (at most 4,096 puts, see BucketLanes.HARD_LIMIT), because 7.0.0 acknowledges puts before their WAL
    // entry exists once it has rotated: 8,000 batches (its pre-allocated batch store), and a size limit
    // far above any memtable the store lets grow
    return new ShardWriterConfig().withDurableWrite(true).withMaxMemtableBatches(8_000)
        .withMaxMemtableSize(MEMTABLE_SIZE_LIMIT).withMaxUnflushedMemtableBytes(2 * MEMTABLE_SIZE_LIMIT);
  }

  /**
   * Puts {@code batch} (the dataset schema): durable, one WAL entry, once this returns. lance-core keeps the
   * batch's imported buffers in its memtable; the caller keeps owning {@code batch}.
   */
  public void put(VectorSchemaRoot batch, BufferAllocator allocator) throws IOException {
    try (ArrowReader reader = new BatchesReader(batch, allocator)) {
      writer.put(reader);
    }
  }

  /** Seals: flushes the memtable into a generation and lets go of the shard. */
  public void close() {
    writer.close();
  }
}
