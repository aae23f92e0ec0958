package io.lancecontext.core.internal.read;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Builds shard views of the fresh tier from what is on disk, reusing what it loaded before: a flushed
 * generation's keys and a WAL entry's rows never change, so each is read once and kept while it stays in
 * the fresh tier (until merged or sealed into a generation) and the cache has room for it.
 *
 * <p><b>Bounded by bytes.</b> Loaded sources sit in a Caffeine cache weighed by {@link FreshSource#bytes()}
 * and bounded by {@code read.fresh-cache-bytes}. The cache holds one reference on each source; every view
 * holds its own, so a source evicted (or removed) while an open snapshot uses it stays valid until that
 * snapshot is closed, and the next view loads it again.
 *
 * <p><b>Locking.</b> Each shard has its own lock, held while its manifest and WAL positions are refreshed
 * and its missing sources loaded (file I/O): a slow shard never blocks a read of another shard, and there
 * is no store-wide lock. Two reads of one shard load a source once (the second waits for the first).
 *
 * <p>Which WAL entries count: those above the manifest's replay position. When a new writer claims a
 * shard it re-logs what it replayed in its first entry, with its own epoch; from then on entries of
 * older epochs are redundant or are a fenced writer's orphans, and are ignored.
 */
public final class FreshCache implements AutoCloseable {
  private final StoreConfig config;
  private final SchemaSpec spec;
  private final StoreFiles files;
  private final BufferAllocator allocator;
  private final Map<String, ShardCache> shards = new ConcurrentHashMap<>();
  /** Loaded sources by {@code <shard>/<source id>}; one reference each, released on removal. */
  private final Cache<String, FreshSource> sources;
  private final long recheckNanos;
  private volatile boolean closed;

  public FreshCache(StoreConfig config, SchemaSpec spec, StoreFiles files, BufferAllocator allocator) {
    this.config = config;
    this.spec = spec;
    this.files = files;
    this.allocator = allocator;
    this.recheckNanos = manifestRecheckNanos(config.get(StoreOptions.GC_GRACE));
    this.sources = Caffeine.newBuilder()
        .maximumWeight(config.get(StoreOptions.FRESH_CACHE_BYTES))
        .weigher((String k, FreshSource v) -> (int) Math.min(Integer.MAX_VALUE, v.bytes()))
        .executor(Runnable::run)
        .removalListener((String k, FreshSource v, RemovalCause cause) -> {
          if (v != null) {
            v.release();
          }
        })
        .recordStats()
        .build();
  }

  /** Size of the cache, for stats. */
  public record Footprint(long bytes, long entries, long evictions, long rows) {}

  private static final class ShardCache {
    /** Cache keys of this shard's sources that may be in the cache (evicted ones linger until the next view). */
    final Set<String> loaded = new HashSet<>();
    FreshShard current;
    ShardManifest manifest;
    /** When {@link #manifest} was last found to be the newest version ({@link System#nanoTime()}). */
    long manifestCheckedNanos;
    /** The shard's merged watermark when {@link #manifest} was checked. */
    long watermarkAtCheck = -1;
    final java.util.TreeSet<Long> positions = new java.util.TreeSet<>();
  }

  private static String cacheKey(String shardId, String sourceId) {
    return shardId + "/" + sourceId;
  }

  /**
   * The cached source {@code sourceId} of {@code shardId}, loaded if absent, with one reference taken for
   * the caller. Called under the shard's lock, so a source is loaded once.
   */
  private FreshSource acquire(ShardCache shard, String shardId, String sourceId, Supplier<FreshSource> loader) {
    String key = cacheKey(shardId, sourceId);
    shard.loaded.add(key);
    while (true) {
      FreshSource s = sources.getIfPresent(key);
      if (s == null) {
        FreshSource loaded = loader.get();
        loaded.retain();  // the caller's, taken before the cache may evict it
        FreshSource prior = sources.asMap().putIfAbsent(key, loaded);
        if (prior == null) {
          if (closed) {
            sources.invalidate(key);
          }
          return loaded;
        }
        loaded.release();
        loaded.release();
        s = prior;
      }
      if (s.retain()) {
        return s;
      }
      sources.asMap().remove(key, s);  // freed after its eviction began: load it again
    }
  }

  private static void releaseAll(List<? extends FreshSource> list) {
    list.forEach(FreshSource::release);
  }

  private ShardCache shardCache(String shardId) {
    if (closed) {
      throw new IllegalStateException("store closed");
    }
    return shards.computeIfAbsent(shardId, k -> new ShardCache());
  }

  /** The current view of a shard whose merged watermark is {@code watermark}, retained for the caller. */
  public FreshShard view(String shardId, long watermark) {
    return view(shardId, watermark, List.of());
  }

  /**
   * As {@link #view(String, long)}, with the published, unmerged transaction parts {@code parts} (in
   * {@link io.lancecontext.core.internal.txn.PublishedPart#ORDER}) after the generations and before the WAL
   * entries: each reads as its publish sequence, and of equal ones the later part wins a key.
   */
  public FreshShard view(String shardId, long watermark, List<io.lancecontext.core.internal.txn.PublishedPart> parts) {
    ShardCache cache = shardCache(shardId);
    List<FreshSource> acquired = new ArrayList<>();
    try {
      synchronized (cache) {
        refresh(shardId, cache, watermark);
        ShardManifest manifest = cache.manifest;
        List<ShardManifest.FlushedGeneration> gens = new ArrayList<>();
        for (ShardManifest.FlushedGeneration g : manifest.flushed()) {
          if (g.generation() > watermark) {
            gens.add(g);
          }
        }
        List<FreshSource> inView = new ArrayList<>();
        Set<String> keep = new HashSet<>();
        for (ShardManifest.FlushedGeneration g : gens) {
          FreshSource s = acquire(cache, shardId, "gen:" + g.path(), () -> loadGeneration(shardId, g));
          acquired.add(s);
          inView.add(s);
          keep.add(cacheKey(shardId, s.id()));
        }
        StringBuilder txns = new StringBuilder();
        for (var part : parts) {
          FreshSource s = acquire(cache, shardId, part.id(), () -> loadPart(shardId, part));
          acquired.add(s);
          inView.add(s);
          keep.add(cacheKey(shardId, s.id()));
          txns.append('|').append(part.id());
        }
        List<WalSource> wal = new ArrayList<>();
        for (long p : cache.positions) {
          WalSource w = (WalSource) acquire(cache, shardId, "wal:" + p, () -> loadWal(shardId, p));
          acquired.add(w);
          wal.add(w);
          keep.add(cacheKey(shardId, w.id()));
        }
        WalSource.requireNoneLost(config.uri(), shardId, wal);
        long newestEpoch = manifest.writerEpoch();
        for (WalSource w : wal) {
          newestEpoch = Math.max(newestEpoch, w.entry().epoch());
        }
        long e = newestEpoch;
        boolean relogged = wal.stream().anyMatch(w -> w.entry().epoch() == e);
        StringBuilder signature = new StringBuilder().append(watermark).append('|').append(manifest.version())
            .append(txns);
        for (WalSource w : wal) {
          if (!relogged || w.entry().epoch() == e) {
            inView.add(w);
            signature.append(',').append(w.entry().position());
          }
        }
        for (var it = cache.loaded.iterator(); it.hasNext(); ) {
          String k = it.next();
          if (!keep.contains(k)) {
            sources.invalidate(k);
            it.remove();
          }
        }
        // the caller keeps one reference per source in the view; the others were taken for the epoch check
        List<FreshSource> extra = new ArrayList<>(acquired);
        for (FreshSource s : inView) {
          extra.remove(s);
        }
        acquired.clear();
        releaseAll(extra);
        String sig = signature.toString();
        FreshShard previous = cache.current;
        if (previous != null && previous.signature().equals(sig) && previous.sameSources(inView)) {
          return previous;
        }
        boolean extends_ = previous != null && previous.watermark() == watermark
            && previous.manifest().version() == manifest.version() && previous.isPrefixOf(inView);
        cache.current = extends_ ? new FreshShard(previous, inView, sig)
            : new FreshShard(shardId, watermark, manifest, inView, sig);
        return cache.current;
      }
    } catch (IOException e) {
      releaseAll(acquired);
      throw LanceErrors.translate("read the fresh tier of shard " + shardId, e);
    } catch (RuntimeException e) {
      releaseAll(acquired);
      throw e;
    }
  }

  /**
   * A view pinned to what another view saw (a read split's snapshot): the generations a given manifest
   * version lists above {@code watermark}, and exactly the given WAL positions. Retained for the caller.
   */
  public FreshShard pinnedView(String shardId, long watermark, long manifestVersion, List<Long> positions,
      List<io.lancecontext.core.internal.txn.PublishedPart> parts) {
    Pinned p = pinnedSources(shardId, watermark, manifestVersion, positions, parts);
    StringBuilder signature = new StringBuilder("pinned|").append(watermark).append('|').append(manifestVersion);
    parts.forEach(part -> signature.append('|').append(part.id()));
    positions.forEach(pos -> signature.append(',').append(pos));
    try {
      FreshShard pinned = new FreshShard(shardId, watermark, p.manifest(), p.sources(), signature.toString());
      ShardCache cache = shardCache(shardId);
      FreshShard live;
      synchronized (cache) {
        live = cache.current;
      }
      if (live != null) {
        pinned.shareNewest(live);  // the planner's live view, when the split saw the same sources
      }
      return pinned;
    } catch (RuntimeException e) {
      releaseAll(p.sources());
      throw e;
    }
  }

  /**
   * Every key with a row or tombstone in a pinned shard view (see {@link #pinnedView}): what a base split
   * excludes; with {@code among} not null, only those of its keys (a read confined to a few keys). Reads no
   * rows beyond what the cache holds or loads, and builds no index of newest rows.
   */
  public Set<String> pinnedKeys(String shardId, long watermark, long manifestVersion, List<Long> positions,
      List<io.lancecontext.core.internal.txn.PublishedPart> parts, Set<String> among) {
    Pinned p = pinnedSources(shardId, watermark, manifestVersion, positions, parts);
    try {
      Set<String> keys = new HashSet<>();
      for (FreshSource s : p.sources()) {
        s.collectKeys(keys, among);
      }
      return keys;
    } finally {
      releaseAll(p.sources());
    }
  }

  private record Pinned(ShardManifest manifest, List<FreshSource> sources) {}

  private Pinned pinnedSources(String shardId, long watermark, long manifestVersion, List<Long> positions,
      List<io.lancecontext.core.internal.txn.PublishedPart> parts) {
    ShardCache cache = shardCache(shardId);
    List<FreshSource> acquired = new ArrayList<>();
    try {
      ShardManifest manifest = manifestVersion == 0 ? ShardManifest.empty()
          : ShardManifests.read(files, shardId, manifestVersion);
      synchronized (cache) {
        for (ShardManifest.FlushedGeneration g : manifest.flushed()) {
          if (g.generation() > watermark) {
            acquired.add(acquire(cache, shardId, "gen:" + g.path(), () -> loadGeneration(shardId, g)));
          }
        }
        for (var part : parts) {
          acquired.add(acquire(cache, shardId, part.id(), () -> loadPart(shardId, part)));
        }
        for (long p : positions) {
          acquired.add(acquire(cache, shardId, "wal:" + p, () -> loadWal(shardId, p)));
        }
      }
      return new Pinned(manifest, acquired);
    } catch (StoreFiles.NotFound e) {
      releaseAll(acquired);
      throw new io.lancecontext.core.error.StorageException("shard " + shardId + ": the read's snapshot is gone (it is "
          + "older than gc.grace); plan the read again", e);
    } catch (IOException e) {
      releaseAll(acquired);
      throw LanceErrors.translate("read the fresh tier of shard " + shardId, e);
    } catch (RuntimeException e) {
      releaseAll(acquired);
      throw e;
    }
  }

  /** The longest a shard view uses a manifest without checking for a newer one (see {@link #manifestRecheckNanos}). */
  public static final java.time.Duration MANIFEST_RECHECK_MAX = java.time.Duration.ofSeconds(5);

  /**
   * How long a view may use a shard manifest without checking for a newer one when nothing else says it
   * changed: {@link #MANIFEST_RECHECK_MAX}, or half of {@code gc.grace} when that is shorter (0: every view
   * checks). Garbage collection keeps WAL entries and manifests this much longer than {@code gc.grace}.
   */
  public static long manifestRecheckNanos(java.time.Duration grace) {
    return Math.min(MANIFEST_RECHECK_MAX.toNanos(), grace.toNanos() / 2);
  }

  /**
   * Brings a shard's WAL positions, and when needed its manifest, up to date with as few requests as is
   * safe: manifest versions and WAL positions are consecutive and only ever added above what is known
   * (garbage collection removes only entries at or below the replay position). A changed manifest is read
   * and the WAL directory listed in full.
   *
   * <p>When nothing changed this costs one existence check: the next WAL position. The next manifest
   * version is checked only when (a) that probe found a new entry (a new writer seals a replayed tail and
   * writes a new manifest before its first entry, so a new entry is the sign that a claim or seal may have
   * happened), (b) the base table's merged watermark of the shard moved since the check (a merge may have
   * folded a generation this view has not seen: its rows must leave the fresh tier with it), (c) the view
   * holds an incomplete WAL entry (the next writer moves it aside under a new manifest and may write a whole
   * entry at its position) or (d) {@link #manifestRecheckNanos} passed, which also covers a reader idle for
   * longer than that (entries it never saw may have been sealed and collected meanwhile). What a
   * view misses while it skips the check is only a seal without a new entry: the sealed rows are still read
   * from the WAL entries that hold them, which garbage collection keeps for {@code gc.grace} plus the
   * recheck interval after the seal.
   */
  private void refresh(String shardId, ShardCache cache, long watermark) throws IOException {
    long now = System.nanoTime();
    if (cache.manifest != null && !manifestCheckDue(cache, watermark, now)) {
      long next = Math.max(cache.manifest.replayAfter(), cache.positions.isEmpty() ? 0 : cache.positions.last()) + 1;
      if (!files.objectExists(WalEntry.path(shardId, next))) {
        return;  // nothing new, and nothing that says the manifest changed
      }
    }
    boolean changed;
    if (cache.manifest == null || cache.manifest.version() == 0) {
      ShardManifest m = ShardManifests.latest(files, shardId);
      changed = cache.manifest == null || m.version() != cache.manifest.version();
      cache.manifest = m;
    } else {
      long v = cache.manifest.version();
      while (ShardManifests.exists(files, shardId, v + 1)) {
        v++;
      }
      changed = v != cache.manifest.version();
      if (changed) {
        cache.manifest = ShardManifests.read(files, shardId, v);
      }
    }
    cache.manifestCheckedNanos = now;
    cache.watermarkAtCheck = watermark;
    long replayAfter = cache.manifest.replayAfter();
    if (changed) {
      // an incomplete entry is moved aside by the next writer (a new manifest version), which may write a
      // complete entry at the same position
      for (String k : cache.loaded) {
        if (sources.getIfPresent(k) instanceof WalSource w && w.incomplete()) {
          sources.asMap().remove(k, w);
        }
      }
    }
    if (changed || cache.positions.isEmpty() && cache.manifest.version() == 0) {
      cache.positions.clear();
      for (long p : WalEntry.positions(files, shardId)) {
        if (p > replayAfter) {
          cache.positions.add(p);
        }
      }
    }
    long next = Math.max(replayAfter, cache.positions.isEmpty() ? 0 : cache.positions.last()) + 1;
    while (files.objectExists(WalEntry.path(shardId, next))) {
      cache.positions.add(next++);
    }
    requireConsecutive(shardId, cache);
  }

  private boolean manifestCheckDue(ShardCache cache, long watermark, long now) {
    if (now - cache.manifestCheckedNanos >= recheckNanos) {
      return true;
    }
    if (watermark != cache.watermarkAtCheck) {
      return true;
    }
    for (String k : cache.loaded) {
      if (sources.getIfPresent(k) instanceof WalSource w && w.incomplete()) {
        return true;
      }
    }
    return false;
  }

  /**
   * WAL positions above the replay position are consecutive: a missing one below the newest is an
   * acknowledged entry lost, unless a newer manifest version explains it (sealed and garbage-collected
   * since the manifest was read; the next view reads that manifest).
   */
  private void requireConsecutive(String shardId, ShardCache cache) throws IOException {
    if (cache.positions.isEmpty()) {
      return;
    }
    long last = cache.positions.last();
    for (long p = cache.manifest.replayAfter() + 1; p < last; p++) {
      if (cache.positions.contains(p)) {
        continue;
      }
      if (files.objectExists(WalEntry.path(shardId, p))) {
        cache.positions.add(p);  // created while the directory was listed
      } else if (ShardManifests.exists(files, shardId, cache.manifest.version() + 1)) {
        return;
      } else {
        throw new io.lancecontext.core.error.StorageException(config.uri() + ": WAL entry "
            + WalEntry.path(shardId, p) + " is missing although later entries exist: acknowledged rows are lost", null);
      }
    }
  }

  private WalSource loadWal(String shardId, long position) {
    try {
      return WalSource.load(config.uri(), files, shardId, position, allocator);
    } catch (StoreFiles.NotFound e) {
      throw new io.lancecontext.core.error.StorageException(config.uri() + ": WAL entry " + WalEntry.path(shardId, position)
          + " was removed while it was read (garbage collection of a read older than gc.grace, or by hand)", e);
    } catch (IOException e) {
      throw LanceErrors.translate("read WAL entry " + WalEntry.path(shardId, position), e);
    }
  }

  private GenerationSource loadGeneration(String shardId, ShardManifest.FlushedGeneration g) {
    return loadDataset(shardId, config.uri() + "/" + ShardLayout.generationDir(shardId, g.path()), g.generation(),
        g.path(), null);
  }

  private GenerationSource loadPart(String shardId, io.lancecontext.core.internal.txn.PublishedPart part) {
    try {
      return loadDataset(shardId, config.uri() + "/" + part.path(), -1, part.path(), part);
    } catch (io.lancecontext.core.error.LanceContextException e) {
      throw new io.lancecontext.core.error.StorageException(config.uri() + ": staged part " + part.path()
          + " of published transaction " + part.txid() + " cannot be read (removed by hand, or garbage-collected under "
          + "a read older than gc.grace)", e);
    }
  }

  /** A generation, or with {@code part} a transaction part whose rows all read as its publish sequence. */
  private GenerationSource loadDataset(String shardId, String uri, long generation, String path,
      io.lancecontext.core.internal.txn.PublishedPart part) {
    LanceDataset ds = StoreDatasets.open(uri, config, allocator);
    try {
      List<String> columns = new ArrayList<>();
      columns.add(spec.key());
      boolean hasTombstones = ds.hasColumn(SystemColumns.TOMBSTONE);
      if (hasTombstones) {
        columns.add(SystemColumns.TOMBSTONE);
      }
      if (part == null) {
        columns.add(SystemColumns.SEQUENCE);  // a part's rows all read as its publish sequence
      }
      long physical = 0;
      for (LanceFragment f : ds.fragments()) {
        physical += f.physicalRows();
      }
      int capacity = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(16, physical));
      String[] keys = new String[capacity];
      boolean[] t = hasTombstones ? new boolean[capacity] : null;
      long[] q = new long[capacity];
      int n = 0;
      try (ScanHandle scan = ds.scan(ScanRequest.of(columns))) {
        ArrowReader reader = scan.reader();
        while (reader.loadNextBatch()) {
          VectorSchemaRoot batch = reader.getVectorSchemaRoot();
          VarCharVector key = (VarCharVector) batch.getVector(spec.key());
          BitVector tomb = hasTombstones ? (BitVector) batch.getVector(SystemColumns.TOMBSTONE) : null;
          org.apache.arrow.vector.BigIntVector seq = part != null ? null
              : (org.apache.arrow.vector.BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
          int rows = batch.getRowCount();
          if (n + rows > keys.length) {  // more rows than the fragments said (never expected): grow
            int grown = Math.max(n + rows, keys.length * 2);
            keys = java.util.Arrays.copyOf(keys, grown);
            q = java.util.Arrays.copyOf(q, grown);
            t = t == null ? null : java.util.Arrays.copyOf(t, grown);
          }
          for (int r = 0; r < rows; r++, n++) {
            keys[n] = new String(key.get(r), StandardCharsets.UTF_8);
            if (t != null) {
              t[n] = !tomb.isNull(r) && tomb.get(r) != 0;
            }
            q[n] = part != null ? part.sequence() : seq.isNull(r) ? 0L : seq.get(r);
          }
        }
      }
      if (n < keys.length) {
        keys = java.util.Arrays.copyOf(keys, n);
        q = java.util.Arrays.copyOf(q, n);
        t = t == null ? null : java.util.Arrays.copyOf(t, n);
      }
      return new GenerationSource(shardId, generation, path, ds, keys, q, t, part);
    } catch (Exception e) {
      ds.close();
      throw LanceErrors.translate("read generation " + path + " of shard " + shardId, e);
    }
  }

  /** What the cache holds now (sources kept alive only by open snapshots are not counted). */
  public Footprint footprint() {
    long rows = 0;
    for (FreshSource s : sources.asMap().values()) {
      rows += s.rows();
    }
    long bytes = sources.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    return new Footprint(bytes, sources.estimatedSize(), sources.stats().evictionCount(), rows);
  }

  @Override
  public void close() {
    closed = true;
    for (ShardCache c : shards.values()) {
      synchronized (c) {
        c.current = null;
      }
    }
    sources.invalidateAll();
    sources.cleanUp();
    shards.clear();
  }
}
