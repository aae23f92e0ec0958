package io.lancecontext.core.read;

import io.lancecontext.core.wal.WalEntry;

/** A durable WAL entry above the shard's replay position, decoded in memory. */
public final class WalSource extends FreshSource {
  private final WalEntry entry;

  WalSource(String shardId, WalEntry entry) {
    super(shardId);
    this.entry = entry;
  }

  public WalEntry entry() {
    return entry;
  }

  /** The highest write sequence in the entry (0 if it carries none). */
  public long maxSequence() {
    long max = 0;
    for (var batch : entry.batches()) {
      var seq = (org.apache.arrow.vector.BigIntVector) batch.getVector(io.lancecontext.core.schema.SystemColumns.SEQUENCE);
      for (int i = 0; seq != null && i < batch.getRowCount(); i++) {
        if (!seq.isNull(i)) {
          max = Math.max(max, seq.get(i));
        }
      }
    }
    return max;
  }

  @Override
  public String id() {
    return "wal:" + entry.position();
  }

  @Override
  public int rows() {
    return entry.rows();
  }

  @Override
  protected void free() {
    entry.close();
  }
}
