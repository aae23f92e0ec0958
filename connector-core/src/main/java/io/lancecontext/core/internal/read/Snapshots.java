package io.lancecontext.core.internal.read;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.BaseVersions;
import io.lancecontext.core.internal.txn.PublishedPart;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The read side of a resident store: the latest base table, snapshots (live, or pinned by a read split),
 * point lookups, and the fresh-tier cache. Thread-safe, and no file I/O runs under a lock shared by the
 * store's readers:
 * <ul>
 *   <li>the latest base table is swapped atomically ({@link BaseTables});</li>
 *   <li>the fresh tier loads per shard, under that shard's lock ({@link FreshCache}), several shards at once
 *       ({@link ShardViews});</li>
 *   <li>what pinned snapshots share between the splits of a plan (the fresh tier's key set, the superseded
 *       keys) is computed once per snapshot and JVM ({@link SingleFlight}), outside any lock.</li>
 * </ul>
 */
public final class Snapshots implements AutoCloseable {
  /** Pinned snapshots whose shared sets are kept (the plans an executor reads at a time). */
  private static final int PINNED_SNAPSHOTS_KEPT = 8;
  /** The hashes of base keys are bounded by this fraction of {@code read.fresh-cache-bytes}. */
  static final int KEY_HASHES_SHARE = 8;

  private final StoreConfig config;
  private final SchemaSpec spec;
  private final StoreFiles files;
  private final BufferAllocator allocator;
  private final List<String> allShards;
  private final Function<String, Integer> bucketOfShard;
  private final Function<String, Collection<String>> shardsOfKey;
  private final FreshCache fresh;
  private final BaseKeyHashes keyHashes;
  private final Transactions transactions;
  private final Function<String, Integer> txnBucket;
  private final BaseTables bases;
  private final SingleFlight<PinKey, HashedKeys> pinnedFreshKeys = new SingleFlight<>(PINNED_SNAPSHOTS_KEPT);
  /**
   * The fresh keys (with hashes) of the latest live snapshots that computed them, by their views'
   * shard ids and signatures: a scan or count of an unchanged fresh tier reuses them instead of hashing every
   * key again.
   */
  private final Cache<List<String>, HashedKeys> liveFreshKeys =
      Caffeine.newBuilder().maximumSize(2).executor(Runnable::run).build();
  private final SingleFlight<PinKey, Set<String>> pinnedSuperseded = new SingleFlight<>(PINNED_SNAPSHOTS_KEPT);
  /**
   * The superseded keys of the latest live snapshots of every shard that computed them, by base version and the
   * views' signatures: searches and scans of an unchanged store skip the pass over every fresh row (20 ms of a
   * 50 ms search with 20,000 fresh rows).
   */
  private final Cache<List<String>, Set<String>> liveSuperseded =
      Caffeine.newBuilder().maximumSize(2).executor(Runnable::run).build();
  /**
   * The winners (newest fresh row of each key) of the latest live snapshot of every shard that computed them, with
   * the view instances they point into: a snapshot over the same instances (nothing changed) takes them instead of
   * going through every fresh row again (2-7 ms for 20,000 rows).
   */
  private final AtomicReference<SharedWinners> liveWinners = new AtomicReference<>();
  /**
   * Values searches derive from the latest live snapshots of every shard (a text search's count of the base rows it
   * searches), by base version and the views' signatures, up to 16 per snapshot.
   */
  private final Cache<List<String>, Cache<Object, Object>>
      liveDerived = Caffeine.newBuilder().maximumSize(2).executor(Runnable::run).build();

  private record SharedWinners(List<FreshShard> views, Map<String, LsmSnapshot.Winner> winners) {
    boolean over(List<FreshShard> others) {
      if (others.size() != views.size()) {
        return false;
      }
      for (int i = 0; i < views.size(); i++) {
        if (others.get(i) != views.get(i)) {
          return false;
        }
      }
      return true;
    }
  }

  /** What a pinned snapshot's shared sets depend on (not when it was planned). */
  private record PinKey(long baseVersion, Map<String, ReadSplit.PinnedShard> shards) {
    static PinKey of(ReadSplit.Snapshot s) {
      return new PinKey(s.baseVersion(), s.shards());
    }
  }

  /**
   * @param allShards every MemWAL shard of the store, in bucket and lane order
   * @param shardsOfKey the shards (the lanes of its bucket) a key's rows are in
   * @param transactions the store's transactions, whose published, unmerged parts are in the fresh tier
   * @param txnBucket the bucket whose transaction parts a shard's views carry (null: none; one shard per bucket)
   * @param bucketOfShard the bucket of every shard (its lanes share it)
   */
  public Snapshots(StoreConfig config, SchemaSpec spec, StoreFiles files, BufferAllocator allocator,
      List<String> allShards, Function<String, Collection<String>> shardsOfKey,
      Transactions transactions, Function<String, Integer> txnBucket, Function<String, Integer> bucketOfShard) {
    this.bucketOfShard = bucketOfShard;
    this.config = config;
    this.spec = spec;
    this.files = files;
    this.allocator = allocator;
    this.allShards = List.copyOf(allShards);
    this.shardsOfKey = shardsOfKey;
    this.transactions = transactions;
    this.txnBucket = txnBucket;
    this.keyHashes = new BaseKeyHashes(config.get(StoreOptions.FRESH_CACHE_BYTES) / KEY_HASHES_SHARE);
    this.fresh = new FreshCache(config, spec, files, allocator,
        transactions == null ? new StagedKeys() : transactions.stagedKeys(), keyHashes);
    this.bases = new BaseTables(config, allocator, new BaseVersions(files), keyHashes);
  }

  public FreshCache freshCache() {
    return fresh;
  }

  /** What this store's key hashes hold, for stats. */
  public StoreStats.KeyHashes keyHashes() {
    return keyHashes.footprint();
  }

  /** The latest base table, retained for the caller (see {@link BaseTables#latest}). */
  public BaseTable base() {
    return bases.latest();
  }

  /** What the rows of a live snapshot of every shard depend on: its base version and views' signatures. */
  private static List<String> liveKey(BaseTable b, List<String> signatures) {
    List<String> key = new ArrayList<>(signatures);
    key.add("base@" + b.version());
    return key;
  }

  /** The superseded keys of a live snapshot of every shard: cached by {@link #liveKey}. */
  private Function<LsmSnapshot, Set<String>> liveSuperseded(List<String> key) {
    return snapshot -> {
      Set<String> known = liveSuperseded.getIfPresent(key);
      if (known == null) {
        known = Set.copyOf(SupersededKeys.compute(spec, snapshot, allocator));
        liveSuperseded.put(key, known);
      }
      return known;
    };
  }

  /** The parts of {@code bucket} above its transaction watermark at {@code b}. */
  private static List<PublishedPart> unmerged(
      List<PublishedPart> parts, BaseTable b, int bucket) {
    if (parts == null) {
      return List.of();
    }
    long merged = b.watermark(TxnIds.txnShardId(bucket));
    return parts.stream().filter(p -> p.sequence() > merged).toList();
  }

  /**
   * The transaction parts a pinned snapshot held for the shard {@code id} carrying them: those whose
   * publish sequences it pinned under the bucket's transaction shard.
   */
  private List<PublishedPart> pinnedParts(ReadSplit.Snapshot pinned, String id) {
    Integer bucket = txnBucket.apply(id);
    if (bucket == null) {
      return List.of();
    }
    ReadSplit.PinnedShard t = pinned.shards().get(TxnIds.txnShardId(bucket));
    if (t == null || t.walPositions().isEmpty()) {
      return List.of();
    }
    Set<Long> sequences = new HashSet<>(t.walPositions());
    var parts = transactions.publishedParts().get(bucket);
    if (parts == null) {
      parts = List.of();
    }
    List<PublishedPart> out = parts.stream()
        .filter(p -> sequences.contains(p.sequence())).toList();
    if (out.stream().map(p -> p.sequence()).distinct().count() != sequences.size()) {
      throw new StorageException(config.uri() + ": a transaction the read's snapshot "
          + "holds is gone (it is older than gc.grace); plan the read again", null);
    }
    return out;
  }

  /** What identifies the rows of {@code views}: each one's shard id and signature, in order. */
  private static List<String> signatures(List<FreshShard> views) {
    return views.stream().map(v -> v.shardId() + "=" + v.signature()).toList();
  }

  /** A live snapshot over the given shards (all when null). */
  public LsmSnapshot snapshot(Set<String> shardIds) {
    Instant takenAt = Instant.now();
    BaseTable b = base();
    try {
      List<String> ids = allShards.stream().filter(id -> shardIds == null || shardIds.contains(id)).toList();
      Map<Integer, List<PublishedPart>> parts =
          ids.stream().anyMatch(id -> txnBucket.apply(id) != null) ? transactions.publishedParts() : Map.of();
      List<FreshShard> views = ShardViews.build(ids, id -> {
        Integer bucket = txnBucket.apply(id);
        return bucket == null ? fresh.view(id, b.watermark(id))
            : fresh.view(id, b.watermark(id), unmerged(parts.get(bucket), b, bucket));
      });
      List<String> signatures = signatures(views);
      HashedKeys known = liveFreshKeys.getIfPresent(signatures);
      List<String> liveKey = shardIds == null ? liveKey(b, signatures) : null;
      LsmSnapshot snap = new LsmSnapshot(b, views, known, shardIds == null ? liveSuperseded(liveKey) : null, takenAt);
      snap.bucketsOf(bucketOfShard);
      if (known == null) {
        snap.onFreshKeysComputed(k -> liveFreshKeys.put(signatures, k));
      }
      if (shardIds == null) {
        snap.shareDerived(liveDerived.get(liveKey, k -> Caffeine.newBuilder()
            .maximumSize(16).executor(Runnable::run).build()));
        SharedWinners shared = liveWinners.get();
        if (shared != null && shared.over(views)) {
          snap.useWinners(shared.winners());
        } else {
          List<FreshShard> instances = List.copyOf(views);
          snap.onWinnersComputed(w -> liveWinners.set(new SharedWinners(instances, w)));
        }
      }
      return snap;
    } catch (RuntimeException e) {
      b.release();
      throw e;
    }
  }

  /**
   * The snapshot a read split pinned, holding what that split reads: for a base split no shard views but
   * the fresh tier's key set; for a fresh split the views of its shards; for the whole view those of its shards
   * when it names them (a read confined to keys: their buckets' lanes), else every shard's.
   * The superseded keys come from a snapshot of every shard, computed once per pinned snapshot.
   */
  public LsmSnapshot pinned(ReadSplit split) {
    ReadSplit.Snapshot pinned = split.snapshot();
    PinKey key = PinKey.of(pinned);
    Function<LsmSnapshot, Set<String>> superseded = s -> pinnedSuperseded.get(key, () -> {
      try (LsmSnapshot whole = pinnedViews(pinned, null, null)) {
        return Set.copyOf(SupersededKeys.compute(spec, whole, allocator));
      }
    });
    if (split.part() == ReadSplit.Part.BASE) {
      // a read confined to a few keys (id = .., id IN (..)) excludes only those of them the fresh tier holds: it
      // need not gather the fresh tier's every key (500,000 of them took a lookup query 100 ms and more)
      Set<String> confined = Predicates.keysReadByKey(spec, split.scan().filter());
      HashedKeys keys = confined != null ? new HashedKeys(freshKeys(pinned, confined))
          : pinnedFreshKeys.get(key, () -> new HashedKeys(freshKeys(pinned, null)));
      BaseTable b = bases.at(pinned.baseVersion());
      return new LsmSnapshot(b, List.of(), keys, superseded, pinned.plannedAt());
    }
    return pinnedViews(pinned, split.shards(), superseded);
  }

  /** The keys the pinned fresh tier holds (with {@code among} not null, only those of its keys). */
  private Set<String> freshKeys(ReadSplit.Snapshot pinned, Set<String> among) {
    Set<String> keys = new HashSet<>();
    for (String id : allShards) {
      var p = pinned.shards().get(id);
      if (p != null) {
        keys.addAll(fresh.pinnedKeys(id, p.watermark(), p.manifestVersion(), p.walPositions(), pinnedParts(pinned, id),
            among));
      }
    }
    return Set.copyOf(keys);
  }

  private LsmSnapshot pinnedViews(ReadSplit.Snapshot pinned, Collection<String> only,
      Function<LsmSnapshot, Set<String>> superseded) {
    BaseTable b = bases.at(pinned.baseVersion());
    List<FreshShard> views = new ArrayList<>();
    try {
      // in the store's shard order, as live snapshots: of equal write sequences the later lane's row wins
      for (String id : allShards) {
        ReadSplit.PinnedShard p = pinned.shards().get(id);
        if (p == null || only != null && !only.contains(id)) {
          continue;
        }
        views.add(fresh.pinnedView(id, p.watermark(), p.manifestVersion(), p.walPositions(), pinnedParts(pinned, id)));
      }
      // the fresh keys of the same views (by their signatures) as a live snapshot or an earlier split computed them:
      // a read of the whole view excludes them from the base, and each query pins a snapshot of its own
      List<String> signatures = signatures(views);
      HashedKeys known = liveFreshKeys.getIfPresent(signatures);
      LsmSnapshot snap = new LsmSnapshot(b, views, known, superseded, pinned.plannedAt());
      snap.bucketsOf(bucketOfShard);
      if (known == null) {
        snap.onFreshKeysComputed(k -> liveFreshKeys.put(signatures, k));
      }
      return snap;
    } catch (RuntimeException e) {
      views.forEach(FreshShard::release);
      b.release();
      throw e;
    }
  }

  /** The records of the {@code keys} that exist, read from a snapshot of the keys' shards only. */
  public List<Map<String, Object>> lookup(List<String> keys, List<String> columns, boolean includeExpired, Instant now,
      RecordCodec codec) {
    Set<String> shardIds = new HashSet<>();
    for (String k : keys) {
      shardIds.addAll(shardsOfKey.apply(k));
    }
    try (LsmSnapshot snap = snapshot(shardIds)) {
      List<VectorSchemaRoot> batches = PointLookup.lookup(spec, snap, keys, columns, includeExpired, now, allocator);
      List<Map<String, Object>> out = new ArrayList<>();
      try {
        for (VectorSchemaRoot b : batches) {
          out.addAll(codec.decode(b, columns));
        }
      } finally {
        batches.forEach(VectorSchemaRoot::close);
      }
      return out;
    }
  }

  /** Frees the cache and the latest base table (snapshots still open keep what they hold). */
  @Override
  public void close() {
    bases.close();
    keyHashes.close();
    fresh.close();
    pinnedFreshKeys.clear();
    pinnedSuperseded.clear();
    liveFreshKeys.invalidateAll();
    liveSuperseded.invalidateAll();
    liveDerived.invalidateAll();
    liveWinners.set(null);
  }
}
