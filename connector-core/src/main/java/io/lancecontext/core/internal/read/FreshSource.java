package io.lancecontext.core.internal.read;

/**
 * Rows not yet merged into the base table: a flushed generation or a durable WAL entry. Immutable once
 * loaded; shared between the store's cache and the reads using it.
 */
public abstract sealed class FreshSource extends RefCounted permits WalSource, GenerationSource {
  private final String shardId;

  FreshSource(String shardId) {
    this.shardId = shardId;
  }

  public String shardId() {
    return shardId;
  }

  /** Stable identity within a shard, used as cache key. */
  public abstract String id();

  public abstract int rows();

  /** Bytes this source holds in memory (what the fresh-tier cache weighs it by), approximately. */
  public abstract long bytes();

  /**
   * Adds every key with a row (or tombstone) in this source to {@code out}; with {@code among} not null, only
   * those of its keys.
   */
  abstract void collectKeys(java.util.Set<String> out, java.util.Set<String> among);
}
