package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.schema.SystemColumns;
import java.util.ArrayList;
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
 *
 * <p><b>Index.</b> A key is resolved through a few segments, each the newest row per key among some
 * consecutive sources: a generation or transaction part is its own segment (its key index is built once,
 * when it is loaded, and shared by every view holding it), and each run of WAL entries added to a view is
 * one segment. A view that extends the previous one with more sources reuses its segments and indexes only
 * the new ones; past {@value #MAX_MAP_SEGMENTS} WAL segments they are folded into one. So a checkpoint
 * that publishes a part, or an add, costs a reader the new rows only, not a rebuild of every key of the
 * shard (which took 10–20 ms per shard of 25,000–50,000 keys, on every publish). The map of every key's
 * newest row ({@link #newest()}, for scans) is built on first use.
 */
public final class FreshShard {
  /**
   * Where a key's newest row is: source index, batch index (WAL entries), row, its write sequence, and
   * whether it deletes the key.
   */
  public record RowRef(int source, int batch, int row, long sequence, boolean tombstone) {}

  /** WAL segments a view may have before they are folded into one. */
  static final int MAX_MAP_SEGMENTS = 8;

  /** The newest row per key among some consecutive sources of the view. */
  private sealed interface Segment permits GenerationSegment, MapSegment {
    RowRef get(String key);

    /** Each key of the segment with its newest row in the segment. */
    void forEach(java.util.function.BiConsumer<String, RowRef> action);

    long maxSequence();

    /** Keys in the segment. */
    int size();
  }

  /** A generation or transaction part: its own key index. */
  private record GenerationSegment(int source, GenerationSource g) implements Segment {
    @Override
    public RowRef get(String key) {
      int r = g.firstRow(key);
      return r < 0 ? null : new RowRef(source, 0, r, g.sequence(r), g.tombstone(r));
    }

    @Override
    public void forEach(java.util.function.BiConsumer<String, RowRef> action) {
      g.firstRows().forEach((k, r) -> action.accept(k, new RowRef(source, 0, r, g.sequence(r), g.tombstone(r))));
    }

    @Override
    public long maxSequence() {
      return g.maxSequence();
    }

    @Override
    public int size() {
      return g.firstRows().size();
    }
  }

  /** WAL entries (or folded segments), indexed into a map. */
  private record MapSegment(Map<String, RowRef> refs, long maxSequence) implements Segment {
    @Override
    public RowRef get(String key) {
      return refs.get(key);
    }

    @Override
    public void forEach(java.util.function.BiConsumer<String, RowRef> action) {
      refs.forEach(action);
    }

    @Override
    public int size() {
      return refs.size();
    }
  }

  private final String shardId;
  private final long watermark;
  private final ShardManifest manifest;
  private final List<FreshSource> sources;
  private final List<Segment> segments;
  private final String signature;
  private final long maxSequence;
  private volatile Map<String, RowRef> newest;
  /** Keys of {@link #newest} whose row is not a tombstone; -1 until counted. */
  private volatile long liveKeys = -1;

  FreshShard(String shardId, long watermark, ShardManifest manifest, List<FreshSource> sources, String signature) {
    this.shardId = shardId;
    this.watermark = watermark;
    this.manifest = manifest;
    this.sources = List.copyOf(sources);
    this.signature = signature;
    this.segments = fold(segments(this.sources, 0, new ArrayList<>()));
    this.maxSequence = maxOf(segments);
  }

  /** A view that extends {@code previous} with more sources after its own (its segments are reused). */
  FreshShard(FreshShard previous, List<FreshSource> sources, String signature) {
    this.shardId = previous.shardId;
    this.watermark = previous.watermark;
    this.manifest = previous.manifest;
    this.sources = List.copyOf(sources);
    this.signature = signature;
    this.segments = fold(segments(this.sources, previous.sources.size(), new ArrayList<>(previous.segments)));
    this.maxSequence = maxOf(segments);
  }

  private static long maxOf(List<Segment> segments) {
    long max = 0;
    for (Segment s : segments) {
      max = Math.max(max, s.maxSequence());
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

  /** Appends the segments of {@code sources} from index {@code from} to {@code out}. */
  private static List<Segment> segments(List<FreshSource> sources, int from, List<Segment> out) {
    Map<String, RowRef> wal = null;
    long walMax = 0;
    for (int s = from; s < sources.size(); s++) {
      FreshSource source = sources.get(s);
      if (source instanceof GenerationSource g) {
        if (wal != null) {
          out.add(new MapSegment(wal, walMax));
          wal = null;
          walMax = 0;
        }
        out.add(new GenerationSegment(s, g));
        continue;
      }
      if (wal == null) {
        wal = new HashMap<>();
      }
      List<VectorSchemaRoot> batches = ((WalSource) source).entry().batches();
      for (int b = 0; b < batches.size(); b++) {
        VectorSchemaRoot batch = batches.get(b);
        VarCharVector key = keyVector(batch);
        BitVector tomb = (BitVector) batch.getVector(SystemColumns.TOMBSTONE);
        BigIntVector seq = (BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
        for (int r = 0; r < batch.getRowCount(); r++) {
          boolean t = tomb != null && !tomb.isNull(r) && tomb.get(r) != 0;
          long q = seq == null || seq.isNull(r) ? 0 : seq.get(r);
          putNewer(wal, new String(key.get(r), java.nio.charset.StandardCharsets.UTF_8), new RowRef(s, b, r, q, t));
          walMax = Math.max(walMax, q);
        }
      }
    }
    if (wal != null) {
      out.add(new MapSegment(wal, walMax));
    }
    return out;
  }

  /**
   * Folds the WAL segments into one once there are more than {@link #MAX_MAP_SEGMENTS}. They are the last ones
   * (a view's WAL entries come after its generations and parts, and a view extends only with WAL entries), so
   * the generations' and parts' own indexes stay as they are; otherwise everything is folded.
   */
  private static List<Segment> fold(List<Segment> segments) {
    long maps = segments.stream().filter(s -> s instanceof MapSegment).count();
    if (maps <= MAX_MAP_SEGMENTS) {
      return List.copyOf(segments);
    }
    int tail = segments.size();
    while (tail > 0 && segments.get(tail - 1) instanceof MapSegment) {
      tail--;
    }
    int from = segments.size() - tail == maps ? tail : 0;
    List<Segment> folded = segments.subList(from, segments.size());
    List<Segment> out = new ArrayList<>(segments.subList(0, from));
    out.add(new MapSegment(merged(folded), maxOf(folded)));
    return List.copyOf(out);
  }

  private static Map<String, RowRef> merged(List<Segment> segments) {
    if (segments.size() == 1 && segments.get(0) instanceof MapSegment m) {
      return m.refs();
    }
    int rows = 0;
    for (Segment s : segments) {
      rows += s.size();
    }
    Map<String, RowRef> all = new HashMap<>(rows * 4 / 3 + 1);
    for (Segment s : segments) {
      s.forEach((k, ref) -> putNewer(all, k, ref));
    }
    return all;
  }

  /**
   * The rule every tier resolves a key by, the merge included: the highest write sequence wins, and of
   * equal ones the later row ({@code ref} comes after every row already in {@code m}).
   */
  private static void putNewer(Map<String, RowRef> m, String key, RowRef ref) {
    m.merge(key, ref, (current, later) -> later.sequence() >= current.sequence() ? later : current);
  }

  /** The newest row of {@code key} in this shard (tombstones included), or null. */
  public RowRef ref(String key) {
    Map<String, RowRef> all = newest;
    if (all != null) {
      return all.get(key);
    }
    RowRef best = null;
    for (Segment s : segments) {
      RowRef r = s.get(key);
      if (r != null && (best == null || r.sequence() >= best.sequence())) {
        best = r;
      }
    }
    return best;
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

  /**
   * Takes {@code other}'s map of newest rows, if it built one and holds exactly this view's sources (the map
   * depends on nothing else): a split's pinned view then resolves winners with the map its planner built.
   */
  void shareNewest(FreshShard other) {
    Map<String, RowRef> theirs = other.newest;
    if (newest == null && theirs != null && other.sameSources(sources)) {
      newest = theirs;
      liveKeys = other.liveKeys;
    }
  }

  /** How many keys of {@link #newest()} have a row that is not a tombstone; counted once per map. */
  public long liveKeys() {
    long n = liveKeys;
    if (n < 0) {
      n = 0;
      for (RowRef r : newest().values()) {
        if (!r.tombstone()) {
          n++;
        }
      }
      liveKeys = n;
    }
    return n;
  }

  /** Newest row per key (tombstones included), built on first use. */
  public Map<String, RowRef> newest() {
    Map<String, RowRef> all = newest;
    if (all == null) {
      synchronized (this) {
        all = newest;
        if (all == null) {
          all = java.util.Collections.unmodifiableMap(merged(segments));
          newest = all;
        }
      }
    }
    return all;
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
