package io.lancecontext.core.internal.read;

import io.lancecontext.core.read.ReadSplit;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * A consistent view of a store for one read: a base table version and, for each shard read, the fresh
 * tier above that version's merged watermark. Newest row per key wins: fresh over base, and within the
 * fresh tier the highest write sequence. Holds references until closed.
 *
 * <p>A snapshot for one part of a read may hold less: a base split's holds no shard views, only the set
 * of keys the whole fresh tier holds ({@link #freshKeys()}, computed once per pinned snapshot and JVM); a
 * fresh split's holds the views of its buckets only. The keys superseded records name
 * ({@link #superseded()}) are computed once per snapshot (and, for pinned snapshots, once per JVM).
 */
public final class LsmSnapshot implements AutoCloseable {
  private final BaseTable base;
  private final Map<String, FreshShard> shards;
  private final HashedKeys givenFreshKeys;
  private HashedKeys computedFreshKeys;
  private java.util.function.Consumer<HashedKeys> onFreshKeysComputed;
  private java.util.function.Consumer<Map<String, Winner>> onWinnersComputed;
  private final Function<LsmSnapshot, Set<String>> supersededSource;
  private Map<String, Winner> winners;
  /** {@link #liveWinners}' index, made on first use. */
  private Map<FreshShard, Map<Long, java.util.BitSet>> liveWinners;
  private Set<String> superseded;
  /** Values derived from this snapshot's rows that snapshots of the same rows share; null if it shares none. */
  private com.github.benmanes.caffeine.cache.Cache<Object, Object> derived;
  /** No later than the moment this snapshot's contents were read (see {@link #takenAt()}). */
  private final java.time.Instant takenAt;
  /** The bucket of each shard (its lanes share it), or null if not known (see {@link #liveFreshCount()}). */
  private Function<String, Integer> bucketOfShard;

  /** Where the newest fresh row of a key is: its shard (lane) and its location there. */
  public record Winner(FreshShard shard, FreshShard.RowRef ref) {
    /** Whether the row at {@code (source, batch, row)} of {@code in} is this one. */
    public boolean is(FreshShard in, int source, int batch, int row) {
      return shard == in && ref.source() == source && ref.batch() == batch && ref.row() == row;
    }
  }

  /** Takes ownership of one reference on {@code base} and on each shard view. */
  public LsmSnapshot(BaseTable base, List<FreshShard> shards) {
    this(base, shards, null, null);
  }

  /**
   * As {@link #LsmSnapshot(BaseTable, List)}; {@code freshKeys}, if not null, are the keys of the whole
   * fresh tier (of which {@code shards} may be a part); {@code superseded}, if not null, computes the keys
   * superseded records name (else they are computed over this snapshot, which must then hold every shard).
   */
  LsmSnapshot(BaseTable base, List<FreshShard> shards, HashedKeys freshKeys,
      Function<LsmSnapshot, Set<String>> superseded) {
    this(base, shards, freshKeys, superseded, java.time.Instant.now());
  }

  /** As the constructor above, taken at {@code takenAt} (read before any of its contents was). */
  LsmSnapshot(BaseTable base, List<FreshShard> shards, HashedKeys freshKeys,
      Function<LsmSnapshot, Set<String>> superseded, java.time.Instant takenAt) {
    this.takenAt = takenAt;
    this.base = base;
    this.givenFreshKeys = freshKeys;
    this.supersededSource = superseded;
    this.shards = new LinkedHashMap<>();
    for (FreshShard s : shards) {
      this.shards.put(s.shardId(), s);
    }
  }

  public BaseTable base() {
    return base;
  }

  /**
   * A time no later than the reading of anything this snapshot holds: every row acknowledged before it is in
   * the snapshot, and a row it lacks was acknowledged after it (or later than it by the writer's clock).
   */
  public java.time.Instant takenAt() {
    return takenAt;
  }

  public Map<String, FreshShard> shards() {
    return shards;
  }

  public FreshShard shard(String shardId) {
    return shards.get(shardId);
  }

  /**
   * The newest fresh row of every key: across the lanes of a bucket, the row with the highest write
   * sequence; of equal ones the later shard's, as the merge picks (its inputs are in the same order).
   */
  public synchronized Map<String, Winner> winners() {
    if (winners == null) {
      Map<String, Winner> m = new HashMap<>();
      for (FreshShard s : shards.values()) {
        for (Map.Entry<String, FreshShard.RowRef> e : s.newest().entrySet()) {
          Winner current = m.get(e.getKey());
          if (current == null || newer(e.getValue().sequence(), current.ref().sequence(), true)) {
            m.put(e.getKey(), new Winner(s, e.getValue()));
          }
        }
      }
      winners = java.util.Collections.unmodifiableMap(m);
      if (onWinnersComputed != null) {
        onWinnersComputed.accept(winners);
      }
    }
    return winners;
  }

  /** Tells this snapshot each shard's bucket: a key's rows are all in the lanes of its bucket. */
  void bucketsOf(Function<String, Integer> bucketOfShard) {
    this.bucketOfShard = bucketOfShard;
  }

  /**
   * How many keys of the fresh tier have a newest row that is not a tombstone, as {@link #winners()} picks them,
   * but counted bucket by bucket from each view's own map of newest rows (built once per view and shared with the
   * views of later snapshots), without the map of the whole snapshot's winners: a count-only read needs no more.
   */
  public long liveFreshCount() {
    Map<String, Winner> known;
    synchronized (this) {
      known = winners;
    }
    if (known != null || bucketOfShard == null) {
      return (known != null ? known : winners()).values().stream().filter(w -> !w.ref().tombstone()).count();
    }
    Map<Integer, List<FreshShard>> buckets = new LinkedHashMap<>();
    for (FreshShard s : shards.values()) {
      buckets.computeIfAbsent(bucketOfShard.apply(s.shardId()), b -> new java.util.ArrayList<>()).add(s);
    }
    long count = 0;
    for (List<FreshShard> lanes : buckets.values()) {
      List<FreshShard> holding = lanes.stream().filter(v -> !v.newest().isEmpty()).toList();
      if (holding.size() == 1) {
        count += holding.get(0).liveKeys();  // one lane holds the bucket's fresh keys (its other lane is merged)
        continue;
      }
      List<Map<String, FreshShard.RowRef>> maps = holding.stream().map(FreshShard::newest).toList();
      for (int i = 0; i < maps.size(); i++) {
        for (Map.Entry<String, FreshShard.RowRef> e : maps.get(i).entrySet()) {
          if (!e.getValue().tombstone() && newestIn(maps, i, e.getKey(), e.getValue().sequence())) {
            count++;
          }
        }
      }
    }
    return count;
  }

  /**
   * Whether lane {@code i}'s row of {@code key} is the newest of its bucket: no lane has a higher sequence, and of
   * equal ones the later lane's wins.
   */
  private static boolean newestIn(List<Map<String, FreshShard.RowRef>> lanes, int i, String key, long sequence) {
    for (int j = 0; j < lanes.size(); j++) {
      FreshShard.RowRef other = j == i ? null : lanes.get(j).get(key);
      if (other != null && newer(other.sequence(), sequence, j > i)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether a fresh row of write sequence {@code sequence} wins its key over one of {@code than}: the higher
   * sequence, and of equal ones the row of the later shard in the snapshot's order ({@code later}), as a merge
   * picks. The one rule of {@link #winners()} and {@link #liveFreshCount()}.
   */
  private static boolean newer(long sequence, long than, boolean later) {
    return sequence > than || sequence == than && later;
  }

  /**
   * Takes {@code known} as this snapshot's winners: those another snapshot computed over the very same view
   * instances (a view is immutable, so the same instances hold the same rows). Read-only once shared.
   */
  synchronized void useWinners(Map<String, Winner> known) {
    if (winners == null) {
      winners = known;
    }
  }

  /** Shares {@code values} with the other snapshots that hold the very same rows (see {@link #derived}). */
  void shareDerived(com.github.benmanes.caffeine.cache.Cache<Object, Object> values) {
    this.derived = values;
  }

  /**
   * A value derived from this snapshot's rows alone (what {@code key} names), as a snapshot holding the same rows
   * kept it ({@link #keepDerived}); null if none did, or this snapshot shares none (a pinned or partial one).
   */
  public Object derived(Object key) {
    return derived == null ? null : derived.getIfPresent(key);
  }

  /** Keeps {@code value}, derived from this snapshot's rows alone, for the snapshots holding the same rows. */
  public void keepDerived(Object key, Object value) {
    if (derived != null) {
      derived.put(key, value);
    }
  }

  /** Tells {@code listener} the winners this snapshot computes, if it computes them (to share them). */
  synchronized void onWinnersComputed(java.util.function.Consumer<Map<String, Winner>> listener) {
    this.onWinnersComputed = listener;
  }

  /**
   * The rows at {@code (source, batch)} of {@code shard} that are the newest rows of their keys and not tombstones,
   * by row (for a generation: its row offset, batch 0); null if none. Made from {@link #winners()} once per
   * snapshot: a scan then tells a row's visibility without decoding its key and looking it up.
   */
  public synchronized java.util.BitSet liveWinners(FreshShard shard, int source, int batch) {
    if (liveWinners == null) {
      Map<FreshShard, Map<Long, java.util.BitSet>> index = new java.util.IdentityHashMap<>();
      for (Winner w : winners().values()) {
        if (!w.ref().tombstone()) {
          index.computeIfAbsent(w.shard(), s -> new HashMap<>())
              .computeIfAbsent(place(w.ref().source(), w.ref().batch()), p -> new java.util.BitSet())
              .set(w.ref().row());
        }
      }
      liveWinners = index;
    }
    Map<Long, java.util.BitSet> of = liveWinners.get(shard);
    return of == null ? null : of.get(place(source, batch));
  }

  private static long place(int source, int batch) {
    return ((long) source << 32) | (batch & 0xffffffffL);
  }

  /** The newest fresh row of one key, or null if the fresh tier does not hold it. */
  public Winner winner(String key) {
    synchronized (this) {
      if (winners != null) {
        return winners.get(key);
      }
    }
    Winner best = null;
    for (FreshShard s : shards.values()) {
      FreshShard.RowRef ref = s.ref(key);
      if (ref != null && (best == null || ref.sequence() >= best.ref().sequence())) {
        best = new Winner(s, ref);
      }
    }
    return best;
  }

  /** Every key with a row (or tombstone) in the fresh tier (all of it, also when this holds part of it). */
  public Set<String> freshKeys() {
    return hashedFreshKeys().keys();
  }

  /**
   * Those of {@code keys} the fresh tier holds, with their hashes: each looked up in the views ({@link #winner}),
   * not through the map of every fresh key, unless this snapshot already has that. For a read confined to keys
   * (which live in the buckets of the views such a read holds).
   */
  HashedKeys hashedFreshKeysAmong(Set<String> keys) {
    synchronized (this) {
      if (givenFreshKeys != null || computedFreshKeys != null) {
        return hashedFreshKeys();
      }
    }
    Set<String> held = new java.util.HashSet<>();
    for (String k : keys) {
      if (winner(k) != null) {
        held.add(k);
      }
    }
    return new HashedKeys(held);
  }

  /** {@link #freshKeys()} with their hashes. */
  synchronized HashedKeys hashedFreshKeys() {
    if (givenFreshKeys != null) {
      return givenFreshKeys;
    }
    if (computedFreshKeys == null) {
      computedFreshKeys = new HashedKeys(winners().keySet());
      if (onFreshKeysComputed != null) {
        onFreshKeysComputed.accept(computedFreshKeys);
      }
    }
    return computedFreshKeys;
  }

  /** Tells {@code listener} the fresh keys this snapshot computes, if it computes them (to share them). */
  synchronized void onFreshKeysComputed(java.util.function.Consumer<HashedKeys> listener) {
    this.onFreshKeysComputed = listener;
  }

  /**
   * The keys that live records supersede (see {@link SupersededKeys}), computed on first use.
   *
   * @param spec the store's spec
   * @param allocator for the scans that compute them
   */
  public synchronized Set<String> superseded(io.lancecontext.core.schema.SchemaSpec spec,
      org.apache.arrow.memory.BufferAllocator allocator) {
    if (superseded == null) {
      superseded = supersededSource != null ? supersededSource.apply(this) : SupersededKeys.compute(spec, this, allocator);
    }
    return superseded;
  }

  /** Whether the shard views this snapshot holds have any row (or tombstone), without {@link #winners()}. */
  public boolean holdsFreshRows() {
    for (FreshShard s : shards.values()) {
      for (FreshSource source : s.sources()) {
        if (source.rows() > 0) {
          return true;
        }
      }
    }
    return false;
  }

  /** Keys with a row (or tombstone) in the shard views this snapshot holds. */
  public int freshRows() {
    return winners().size();
  }

  @Override
  public void close() {
    shards.values().forEach(FreshShard::release);
    base.release();
  }
  /** Pins what this snapshot sees, stamped with {@link #takenAt()}. */
  public ReadSplit.Snapshot pin() {
    java.time.Instant plannedAt = takenAt;
    Map<String, ReadSplit.PinnedShard> pinned = new java.util.LinkedHashMap<>();
    for (FreshShard s : shards().values()) {
      List<Long> positions = new java.util.ArrayList<>();
      Map<Integer, java.util.TreeSet<Long>> txns = new java.util.TreeMap<>();
      for (FreshSource source : s.sources()) {
        if (source instanceof WalSource w) {
          positions.add(w.entry().position());
        } else if (source instanceof GenerationSource g && g.transactionPart() != null) {
          txns.computeIfAbsent(g.transactionPart().bucket(), b -> new java.util.TreeSet<>())
              .add(g.transactionPart().sequence());
        }
      }
      pinned.put(s.shardId(), new ReadSplit.PinnedShard(s.watermark(), s.manifest().version(), positions));
      // a bucket's published transactions, pinned under its transaction shard: their publish sequences
      for (var t : txns.entrySet()) {
        String txnShard = io.lancecontext.core.internal.txn.TxnIds.txnShardId(t.getKey());
        pinned.put(txnShard, new ReadSplit.PinnedShard(base.watermark(txnShard), 0, List.copyOf(t.getValue())));
      }
    }
    return new ReadSplit.Snapshot(base().version(), pinned, plannedAt);
  }

}
