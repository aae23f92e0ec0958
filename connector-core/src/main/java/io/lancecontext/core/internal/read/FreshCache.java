package io.lancecontext.core.internal.read;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;

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
 *
 * <p>Sources are loaded by {@link FreshLoader}; what is known of each shard's files is kept and refreshed
 * by its {@link ShardCache}.
 */
public final class FreshCache implements AutoCloseable {
  private final StoreConfig config;
  private final StoreFiles files;
  private final FreshLoader loader;
  private final Map<String, ShardCache> shards = new ConcurrentHashMap<>();
  /** Loaded sources by {@code <shard>/<source id>}; one reference each, released on removal. */
  private final Cache<String, FreshSource> sources;
  private final long recheckNanos;
  private volatile boolean closed;

  /**
   * @param staged the keys of parts this JVM staged, taken instead of reading them once they are published
   * @param keyHashes told the keys of the parts it loads that a merge may append to the base as they are (null:
   *     none)
   */
  FreshCache(StoreConfig config, SchemaSpec spec, StoreFiles files, BufferAllocator allocator, StagedKeys staged,
      BaseKeyHashes keyHashes) {
    this.config = config;
    this.files = files;
    this.loader = new FreshLoader(config, spec, files, allocator, staged, keyHashes);
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

  private static String cacheKey(String shardId, String sourceId) {
    return shardId + "/" + sourceId;
  }

  /** Generations indexed from the WAL entries they were sealed from ({@link FreshLoader#generation}). */
  long generationsFromWal() {
    return loader.generationsFromWal();
  }

  /**
   * Loads a flushed generation, handing the loader the WAL entries it was sealed from when this cache still holds
   * all of them ({@link ShardCache#sealed}): the same rows, already in memory. Called under the shard's lock.
   */
  private GenerationSource generation(ShardCache shard, String shardId, ShardManifest.FlushedGeneration g) {
    ShardCache.Sealed sealed = shard.sealed;
    List<WalSource> held = new ArrayList<>();
    try {
      boolean all = sealed != null && sealed.path().equals(g.path());
      for (long p = all ? sealed.first() : 0; all && p <= sealed.last(); p++) {
        if (sources.getIfPresent(cacheKey(shardId, "wal:" + p)) instanceof WalSource w && !w.incomplete()
            && w.retain()) {
          held.add(w);
        } else {
          all = false;
        }
      }
      return loader.generation(shardId, g, all ? held : null);
    } finally {
      releaseAll(held);
    }
  }

  /**
   * The cached source {@code sourceId} of {@code shardId}, loaded if absent, with one reference taken for
   * the caller. Called under the shard's lock, so a source is loaded once.
   */
  private FreshSource acquire(ShardCache shard, String shardId, String sourceId, Supplier<FreshSource> load) {
    String key = cacheKey(shardId, sourceId);
    shard.loaded.add(key);
    while (true) {
      FreshSource s = sources.getIfPresent(key);
      if (s == null) {
        FreshSource loaded = load.get();
        loaded.retain();  // the caller's, taken before the cache may evict it
        FreshSource prior = sources.asMap().putIfAbsent(key, loaded);
        if (prior == null) {
          if (closed) {
            sources.invalidate(key);
          }
          return noted(shard, loaded);
        }
        loaded.release();
        loaded.release();
        s = prior;
      }
      if (s.retain()) {
        return noted(shard, s);
      }
      sources.asMap().remove(key, s);  // freed after its eviction began: load it again
    }
  }

  /** {@code s}, noted in {@code shard} if it is an incomplete WAL entry (the manifest is then checked on every view). */
  private static FreshSource noted(ShardCache shard, FreshSource s) {
    if (s instanceof WalSource w && w.incomplete()) {
      shard.holdsIncomplete = true;
    }
    return s;
  }

  private static void releaseAll(List<? extends FreshSource> list) {
    list.forEach(FreshSource::release);
  }

  private ShardCache shardCache(String shardId) {
    if (closed) {
      throw new IllegalStateException("store closed");
    }
    return shards.computeIfAbsent(shardId, k -> new ShardCache(k, config.uri(), files, sources, recheckNanos,
        config.get(StoreOptions.GC_GRACE).toNanos()));
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
        cache.refresh(watermark);
        ShardCache.ViewState state = cache.state(watermark, parts);
        FreshShard current = cache.current;
        if (current != null && state.equals(cache.currentState) && current.retain()) {
          return current;  // nothing changed: no source to look up, no signature to build (a get per add)
        }
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
          FreshSource s = acquire(cache, shardId, "gen:" + g.path(), () -> generation(cache, shardId, g));
          acquired.add(s);
          inView.add(s);
          keep.add(cacheKey(shardId, s.id()));
        }
        StringBuilder txns = new StringBuilder();
        for (var part : parts) {
          FreshSource s = acquire(cache, shardId, part.id(), () -> loader.part(shardId, part));
          acquired.add(s);
          inView.add(s);
          keep.add(cacheKey(shardId, s.id()));
          txns.append('|').append(part.id());
        }
        List<WalSource> wal = new ArrayList<>();
        for (long p : cache.positions) {
          WalSource w = (WalSource) acquire(cache, shardId, "wal:" + p, () -> loader.wal(shardId, p));
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
        cache.currentState = state;
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
            acquired.add(acquire(cache, shardId, "gen:" + g.path(), () -> generation(cache, shardId, g)));
          }
        }
        for (var part : parts) {
          acquired.add(acquire(cache, shardId, part.id(), () -> loader.part(shardId, part)));
        }
        for (long p : positions) {
          acquired.add(acquire(cache, shardId, "wal:" + p, () -> loader.wal(shardId, p)));
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
