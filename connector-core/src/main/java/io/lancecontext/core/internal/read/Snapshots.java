package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.BaseVersions;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.schema.SchemaSpec;
import java.io.IOException;
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
 *   <li>the latest base table is swapped atomically; checking for a newer version runs outside any lock,
 *       and only the readers that found one wait for its single opening;</li>
 *   <li>the fresh tier loads per shard, under that shard's lock ({@link FreshCache});</li>
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
  private final Function<String, Collection<String>> shardsOfKey;
  private final FreshCache fresh;
  private final BaseKeyHashes keyHashes;
  private final io.lancecontext.core.internal.txn.Transactions transactions;
  private final Function<String, Integer> txnBucket;
  private final AtomicReference<BaseTable> latest = new AtomicReference<>();
  /**
   * The base table of the last read pinned to an older version than the latest, kept for the next such read: a
   * stream's incremental reads start at the same or the previous snapshot again and again (opening a version
   * costs about 1.5 ms locally, a few requests on object storage).
   */
  private final AtomicReference<BaseTable> lastPinned = new AtomicReference<>();
  private final Object opening = new Object();
  private final SingleFlight<PinKey, HashedKeys> pinnedFreshKeys = new SingleFlight<>(PINNED_SNAPSHOTS_KEPT);
  /**
   * The fresh keys (with hashes) of the latest live snapshots that computed them, by their views'
   * shard ids and signatures: a scan or count of an unchanged fresh tier reuses them instead of hashing every
   * key again.
   */
  private final com.github.benmanes.caffeine.cache.Cache<List<String>, HashedKeys> liveFreshKeys =
      com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(2).executor(Runnable::run).build();
  private final SingleFlight<PinKey, Set<String>> pinnedSuperseded = new SingleFlight<>(PINNED_SNAPSHOTS_KEPT);
  /**
   * The superseded keys of the latest live snapshots of every shard that computed them, by base version and the
   * views' signatures: searches and scans of an unchanged store skip the pass over every fresh row (20 ms of a
   * 50 ms search with 20,000 fresh rows).
   */
  private final com.github.benmanes.caffeine.cache.Cache<List<String>, Set<String>> liveSuperseded =
      com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(2).executor(Runnable::run).build();
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
  private final com.github.benmanes.caffeine.cache.Cache<List<String>, com.github.benmanes.caffeine.cache.Cache<Object, Object>>
      liveDerived = com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(2).executor(Runnable::run).build();
  private volatile boolean closed;
  private final BaseVersions versions;

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
  /** How long an opened base table is trusted with next-version checks alone. */
  private final long reopenNanos;
  private volatile long openedNanos;

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
   */
  public Snapshots(StoreConfig config, SchemaSpec spec, StoreFiles files, BufferAllocator allocator,
      List<String> allShards, Function<String, Collection<String>> shardsOfKey,
      io.lancecontext.core.internal.txn.Transactions transactions, Function<String, Integer> txnBucket) {
    this.config = config;
    this.spec = spec;
    this.files = files;
    this.allocator = allocator;
    this.allShards = List.copyOf(allShards);
    this.shardsOfKey = shardsOfKey;
    this.transactions = transactions;
    this.txnBucket = txnBucket;
    this.fresh = new FreshCache(config, spec, files, allocator);
    this.keyHashes = new BaseKeyHashes(config.get(io.lancecontext.core.options.StoreOptions.FRESH_CACHE_BYTES)
        / KEY_HASHES_SHARE);
    this.versions = new BaseVersions(files);
    this.reopenNanos = Math.max(java.util.concurrent.TimeUnit.SECONDS.toNanos(1),
        config.get(io.lancecontext.core.options.StoreOptions.GC_GRACE).toNanos() / 2);
  }

  public FreshCache freshCache() {
    return fresh;
  }

  /** What this store's key hashes hold, for stats. */
  public io.lancecontext.core.result.StoreStats.KeyHashes keyHashes() {
    return keyHashes.footprint();
  }

  /**
   * The latest base table, retained for the caller. A newer version is detected with one existence check
   * of the next version's manifest ({@link BaseVersions}); besides, the table is reopened at the latest
   * version once {@link #reopenNanos} passed since it was opened, which catches what that check cannot:
   * a reader idle for longer than {@code gc.grace} whose next version was cleaned up meanwhile (Lance's
   * cleanup removes superseded versions), or a table whose manifests were migrated to the other naming
   * scheme.
   */
  public BaseTable base() {
    while (true) {
      ensureOpen();
      BaseTable seen = latest.get();
      boolean stale;
      try {
        stale = seen == null || System.nanoTime() - openedNanos >= reopenNanos || versions.exists(seen.version() + 1);
      } catch (IOException e) {
        throw LanceErrors.translate("check the base table version", e);
      }
      if (!stale) {
        if (seen.retain()) {
          return seen;
        }
        continue;  // replaced and freed meanwhile
      }
      synchronized (opening) {
        if (latest.get() == seen) {
          BaseTable next = BaseTable.of(StoreDatasets.open(config.uri(), config, allocator), keyHashes);
          openedNanos = System.nanoTime();
          try {
            if (seen != null && next.version() > seen.version() + 1) {
              versions.forget();  // versions the next-version check could not see: learn the scheme again
            }
            versions.learn(next.version());
          } catch (IOException e) {
            next.release();
            throw LanceErrors.translate("check the base table version", e);
          }
          latest.set(next);
          if (seen != null) {
            seen.release();
          }
        }
      }
    }
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
  private static List<io.lancecontext.core.internal.txn.PublishedPart> unmerged(
      List<io.lancecontext.core.internal.txn.PublishedPart> parts, BaseTable b, int bucket) {
    if (parts == null) {
      return List.of();
    }
    long merged = b.watermark(io.lancecontext.core.internal.txn.TxnIds.txnShardId(bucket));
    return parts.stream().filter(p -> p.sequence() > merged).toList();
  }

  /**
   * The transaction parts a pinned snapshot held for the shard {@code id} carrying them: those whose
   * publish sequences it pinned under the bucket's transaction shard.
   */
  private List<io.lancecontext.core.internal.txn.PublishedPart> pinnedParts(ReadSplit.Snapshot pinned, String id) {
    Integer bucket = txnBucket.apply(id);
    if (bucket == null) {
      return List.of();
    }
    ReadSplit.PinnedShard t = pinned.shards().get(io.lancecontext.core.internal.txn.TxnIds.txnShardId(bucket));
    if (t == null || t.walPositions().isEmpty()) {
      return List.of();
    }
    Set<Long> sequences = new HashSet<>(t.walPositions());
    var parts = transactions.publishedParts().get(bucket);
    if (parts == null) {
      parts = List.of();
    }
    List<io.lancecontext.core.internal.txn.PublishedPart> out = parts.stream()
        .filter(p -> sequences.contains(p.sequence())).toList();
    if (out.stream().map(p -> p.sequence()).distinct().count() != sequences.size()) {
      throw new io.lancecontext.core.error.StorageException(config.uri() + ": a transaction the read's snapshot "
          + "holds is gone (it is older than gc.grace); plan the read again", null);
    }
    return out;
  }

  /** The base table at {@code version}, retained for the caller: the latest one if it is that version. */
  private BaseTable baseAt(long version) {
    BaseTable b = latest.get();
    if (b != null && b.version() == version && b.retain()) {
      return b;
    }
    BaseTable kept = lastPinned.get();
    if (kept != null && kept.version() == version && kept.retain()) {
      return kept;
    }
    BaseTable opened = BaseTable.of(StoreDatasets.open(config.uri(), config, allocator, version), keyHashes);
    opened.retain();  // the cache's reference
    BaseTable replaced = lastPinned.getAndSet(opened);
    if (replaced != null) {
      replaced.release();
    }
    if (closed) {
      releasePinned();  // closed meanwhile: close() may have missed it
    }
    return opened;
  }

  private void releasePinned() {
    BaseTable b = lastPinned.getAndSet(null);
    if (b != null) {
      b.release();
    }
  }

  /** A live snapshot over the given shards (all when null). */
  public LsmSnapshot snapshot(Set<String> shardIds) {
    Instant takenAt = Instant.now();
    BaseTable b = base();
    try {
      List<String> ids = allShards.stream().filter(id -> shardIds == null || shardIds.contains(id)).toList();
      Map<Integer, List<io.lancecontext.core.internal.txn.PublishedPart>> parts =
          ids.stream().anyMatch(id -> txnBucket.apply(id) != null) ? transactions.publishedParts() : Map.of();
      List<FreshShard> views = views(ids, id -> {
        Integer bucket = txnBucket.apply(id);
        return bucket == null ? fresh.view(id, b.watermark(id))
            : fresh.view(id, b.watermark(id), unmerged(parts.get(bucket), b, bucket));
      });
      List<String> signatures = views.stream().map(v -> v.shardId() + "=" + v.signature()).toList();
      HashedKeys known = liveFreshKeys.getIfPresent(signatures);
      List<String> liveKey = shardIds == null ? liveKey(b, signatures) : null;
      LsmSnapshot snap = new LsmSnapshot(b, views, known, shardIds == null ? liveSuperseded(liveKey) : null, takenAt);
      if (known == null) {
        snap.onFreshKeysComputed(k -> liveFreshKeys.put(signatures, k));
      }
      if (shardIds == null) {
        snap.shareDerived(liveDerived.get(liveKey, k -> com.github.benmanes.caffeine.cache.Caffeine.newBuilder()
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
   * Builds the views of several shards at once, which after a publish or a seal each load new sources
   * (a part of 12,500 rows: 10–50 ms): the first on the calling thread, the others on a small pool shared by
   * the JVM, or on the calling thread too when the pool is busy. Each shard has its own lock, so they never
   * wait on each other. On failure every view built is released and the first failure thrown.
   */
  private static List<FreshShard> views(List<String> ids, Function<String, FreshShard> view) {
    if (ids.size() <= 1) {
      return ids.isEmpty() ? List.of() : List.of(view.apply(ids.get(0)));
    }
    List<java.util.concurrent.Future<FreshShard>> others = new ArrayList<>();
    for (String id : ids.subList(1, ids.size())) {
      others.add(VIEW_BUILDERS.submit(() -> view.apply(id)));
    }
    FreshShard[] out = new FreshShard[ids.size()];
    RuntimeException failure = null;
    try {
      out[0] = view.apply(ids.get(0));
    } catch (RuntimeException e) {
      failure = e;
    }
    boolean interrupted = false;
    for (int i = 0; i < others.size(); i++) {
      while (true) {
        try {
          out[i + 1] = others.get(i).get();
          break;
        } catch (InterruptedException e) {
          interrupted = true;  // the view is being built and holds references: wait for it, then release it
        } catch (java.util.concurrent.ExecutionException e) {
          RuntimeException cause = e.getCause() instanceof RuntimeException r ? r
              : new IllegalStateException("building a shard view failed", e.getCause());
          if (failure == null) {
            failure = cause;
          } else {
            failure.addSuppressed(cause);
          }
          break;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (failure != null) {
      for (FreshShard v : out) {
        if (v != null) {
          v.release();
        }
      }
      throw failure;
    }
    return List.of(out);
  }

  /**
   * Threads building shard views beside a reader's own (see {@link #views}); idle ones end after 30 s. They
   * are shared by every store and caller of the JVM, so they carry this library's class loader as context,
   * never that of the caller that happened to start them (a Flink job's user-code loader, closed when the
   * job ends).
   */
  private static final java.util.concurrent.ExecutorService VIEW_BUILDERS = new java.util.concurrent.ThreadPoolExecutor(0,
      Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors())), 30, java.util.concurrent.TimeUnit.SECONDS,
      new java.util.concurrent.SynchronousQueue<>(), r -> {
        Thread t = new Thread(r, "lancecontext-shard-views");
        t.setDaemon(true);
        t.setContextClassLoader(Snapshots.class.getClassLoader());
        return t;
      }, new java.util.concurrent.ThreadPoolExecutor.CallerRunsPolicy());

  /**
   * The snapshot a read split pinned, holding what that split reads: for a base split no shard views but
   * the fresh tier's key set; for a fresh split the views of its shards; for the whole view every shard.
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
      BaseTable b = baseAt(pinned.baseVersion());
      return new LsmSnapshot(b, List.of(), keys, superseded, pinned.plannedAt());
    }
    return pinnedViews(pinned, split.part() == ReadSplit.Part.FRESH ? split.shards() : null, superseded);
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
    BaseTable b = baseAt(pinned.baseVersion());
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
      return new LsmSnapshot(b, views, null, superseded, pinned.plannedAt());
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

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("store closed");
    }
  }

  /** Frees the cache and the latest base table (snapshots still open keep what they hold). */
  @Override
  public void close() {
    closed = true;
    keyHashes.close();
    fresh.close();
    pinnedFreshKeys.clear();
    pinnedSuperseded.clear();
    liveFreshKeys.invalidateAll();
    liveSuperseded.invalidateAll();
    liveDerived.invalidateAll();
    liveWinners.set(null);
    BaseTable b = latest.getAndSet(null);
    if (b != null) {
      b.release();
    }
    releasePinned();
  }
}
