package io.lancecontext.core.read;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A consistent view of a store for one read: a base table version and, for each shard read, the fresh
 * tier above that version's merged watermark. Newest row per key wins: fresh over base, later sources
 * over earlier. Holds references until closed.
 */
public final class LsmSnapshot implements AutoCloseable {
  private final BaseTable base;
  private final Map<String, FreshShard> shards;
  private Set<String> freshKeys;

  /** Takes ownership of one reference on {@code base} and on each shard view. */
  public LsmSnapshot(BaseTable base, List<FreshShard> shards) {
    this.base = base;
    this.shards = new LinkedHashMap<>();
    for (FreshShard s : shards) {
      this.shards.put(s.shardId(), s);
    }
  }

  public BaseTable base() {
    return base;
  }

  public Map<String, FreshShard> shards() {
    return shards;
  }

  public FreshShard shard(String shardId) {
    return shards.get(shardId);
  }

  /** Every key with a row (or tombstone) in the fresh tier. */
  public synchronized Set<String> freshKeys() {
    if (freshKeys == null) {
      Set<String> keys = new HashSet<>();
      for (FreshShard s : shards.values()) {
        keys.addAll(s.newest().keySet());
      }
      freshKeys = keys;
    }
    return freshKeys;
  }

  public int freshRows() {
    int n = 0;
    for (FreshShard s : shards.values()) {
      n += s.newest().size();
    }
    return n;
  }

  @Override
  public void close() {
    shards.values().forEach(FreshShard::release);
    base.release();
  }
}
