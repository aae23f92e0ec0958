package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.schema.SystemColumns;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One shard's fresh tier at one moment: its unmerged generations (ascending) and its WAL entries above
 * the replay position (ascending), and for every key the location of its newest row: the one with the
 * highest write sequence, the later one of equal sequences (the merge picks by the same rule). Holds a
 * reference on each source until {@link #release()}.
 */
public final class FreshShard {
  /**
   * Where a key's newest row is: source index, batch index (WAL entries), row, its write sequence, and
   * whether it deletes the key.
   */
  public record RowRef(int source, int batch, int row, long sequence, boolean tombstone) {}

  private final String shardId;
  private final long watermark;
  private final ShardManifest manifest;
  private final List<FreshSource> sources;
  private final Map<String, RowRef> newest;
  private final String signature;
  private long maxSequence;

  FreshShard(String shardId, long watermark, ShardManifest manifest, List<FreshSource> sources, String signature) {
    this.shardId = shardId;
    this.watermark = watermark;
    this.manifest = manifest;
    this.sources = List.copyOf(sources);
    this.signature = signature;
    this.newest = index(this.sources, new HashMap<>(), 0);
    this.maxSequence = maxOf(newest);
  }

  /** A view that extends {@code previous} with more sources after its own (its index is reused). */
  FreshShard(FreshShard previous, List<FreshSource> sources, String signature) {
    this.shardId = previous.shardId;
    this.watermark = previous.watermark;
    this.manifest = previous.manifest;
    this.sources = List.copyOf(sources);
    this.signature = signature;
    this.newest = index(this.sources, new HashMap<>(previous.newest), previous.sources.size());
    this.maxSequence = maxOf(newest);
  }

  private static long maxOf(Map<String, RowRef> refs) {
    long max = 0;
    for (RowRef r : refs.values()) {
      max = Math.max(max, r.sequence());
    }
    return max;
  }

  /** The highest write sequence among this shard's newest rows (0 if none). */
  public long maxSequence() {
    return maxSequence;
  }

  /** Whether {@code other} holds exactly this view's sources (the same objects, in order). */
  boolean sameSources(List<FreshSource> other) {
    return other.size() == sources.size() && isPrefixOf(other);
  }

  /** Whether {@code sources} starts with exactly this view's sources. */
  boolean isPrefixOf(List<FreshSource> other) {
    if (other.size() < sources.size()) {
      return false;
    }
    for (int i = 0; i < sources.size(); i++) {
      if (sources.get(i) != other.get(i)) {
        return false;
      }
    }
    return true;
  }

  private static Map<String, RowRef> index(List<FreshSource> sources, Map<String, RowRef> m, int from) {
    for (int s = from; s < sources.size(); s++) {
      FreshSource source = sources.get(s);
      if (source instanceof GenerationSource g) {
        // inside one generation the first row of a key in offset order is its newest
        // (lance-core writes a memtable out newest-first); lancecontext never writes a key twice
        // into one generation, so this only matters for foreign writers
        Map<String, RowRef> local = new HashMap<>();
        String[] keys = g.keys();
        for (int r = 0; r < keys.length; r++) {
          local.putIfAbsent(keys[r], new RowRef(s, 0, r, g.sequence(r), g.tombstone(r)));
        }
        local.forEach((k, ref) -> putNewer(m, k, ref));
      } else {
        WalSource w = (WalSource) source;
        List<VectorSchemaRoot> batches = w.entry().batches();
        for (int b = 0; b < batches.size(); b++) {
          VectorSchemaRoot batch = batches.get(b);
          VarCharVector key = keyVector(batch);
          BitVector tomb = (BitVector) batch.getVector(SystemColumns.TOMBSTONE);
          BigIntVector seq = (BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
          for (int r = 0; r < batch.getRowCount(); r++) {
            boolean t = tomb != null && !tomb.isNull(r) && tomb.get(r) != 0;
            long q = seq == null || seq.isNull(r) ? 0 : seq.get(r);
            putNewer(m, new String(key.get(r), java.nio.charset.StandardCharsets.UTF_8), new RowRef(s, b, r, q, t));
          }
        }
      }
    }
    return m;
  }

  /**
   * The rule every tier resolves a key by, the merge included: the highest write sequence wins, and of
   * equal ones the later row ({@code ref} comes after every row already in {@code m}).
   */
  private static void putNewer(Map<String, RowRef> m, String key, RowRef ref) {
    RowRef current = m.get(key);
    if (current == null || ref.sequence() >= current.sequence()) {
      m.put(key, ref);
    }
  }

  /** The key column is the one carrying Lance's primary-key metadata (always the first declared key). */
  static VarCharVector keyVector(VectorSchemaRoot batch) {
    for (var v : batch.getFieldVectors()) {
      if ("true".equals(v.getField().getMetadata().get("lance-schema:unenforced-primary-key"))) {
        return (VarCharVector) v;
      }
    }
    throw new IllegalStateException("batch has no primary-key column");
  }

  public String shardId() {
    return shardId;
  }

  public long watermark() {
    return watermark;
  }

  public ShardManifest manifest() {
    return manifest;
  }

  public List<FreshSource> sources() {
    return sources;
  }

  /** Newest row per key (tombstones included). */
  public Map<String, RowRef> newest() {
    return newest;
  }

  /** Identity of this view: same signature, same rows. */
  public String signature() {
    return signature;
  }

  public boolean retain() {
    for (int i = 0; i < sources.size(); i++) {
      if (!sources.get(i).retain()) {
        for (int j = 0; j < i; j++) {
          sources.get(j).release();
        }
        return false;
      }
    }
    return true;
  }

  public void release() {
    sources.forEach(FreshSource::release);
  }
}
