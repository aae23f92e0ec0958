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
