package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.options.StoreConfig;
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
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.ipc.ScanOptions;

/**
 * Builds shard views of the fresh tier from what is on disk, reusing what it loaded before: a flushed
 * generation's keys and a WAL entry's rows never change, so each is read once per JVM (per store) and
 * released when it leaves the fresh tier (merged, or sealed into a generation).
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
  private final Map<String, ShardCache> shards = new HashMap<>();
  private boolean closed;

  public FreshCache(StoreConfig config, SchemaSpec spec, StoreFiles files, BufferAllocator allocator) {
    this.config = config;
    this.spec = spec;
    this.files = files;
    this.allocator = allocator;
  }

  private static final class ShardCache {
    final Map<String, FreshSource> sources = new HashMap<>();
    FreshShard current;
    ShardManifest manifest;
    final java.util.TreeSet<Long> positions = new java.util.TreeSet<>();
  }

  /** The current view of a shard whose merged watermark is {@code watermark}, retained for the caller. */
  public FreshShard view(String shardId, long watermark) {
    try {
      synchronized (this) {
        if (closed) {
          throw new IllegalStateException("store closed");
        }
        ShardCache cache = shards.computeIfAbsent(shardId, k -> new ShardCache());
        refresh(shardId, cache);
        ShardManifest manifest = cache.manifest;
        List<ShardManifest.FlushedGeneration> gens = new ArrayList<>();
        for (ShardManifest.FlushedGeneration g : manifest.flushed()) {
          if (g.generation() > watermark) {
            gens.add(g);
          }
        }
        List<FreshSource> sources = new ArrayList<>();
        for (ShardManifest.FlushedGeneration g : gens) {
          sources.add(cache.sources.computeIfAbsent("gen:" + g.path(), k -> loadGeneration(shardId, g)));
        }
        List<WalSource> wal = new ArrayList<>();
        for (long p : cache.positions) {
          wal.add((WalSource) cache.sources.computeIfAbsent("wal:" + p, k -> loadWal(shardId, p)));
        }
        WalSource.requireNoneLost(config.uri(), shardId, wal);
        long newestEpoch = manifest.writerEpoch();
        for (WalSource w : wal) {
          newestEpoch = Math.max(newestEpoch, w.entry().epoch());
        }
        long e = newestEpoch;
        boolean relogged = wal.stream().anyMatch(w -> w.entry().epoch() == e);
        StringBuilder signature = new StringBuilder().append(watermark).append('|').append(manifest.version());
        for (WalSource w : wal) {
          if (!relogged || w.entry().epoch() == e) {
            sources.add(w);
            signature.append(',').append(w.entry().position());
          }
        }
        Set<String> inView = new HashSet<>();
        for (ShardManifest.FlushedGeneration g : gens) {
          inView.add("gen:" + g.path());
        }
        for (long p : cache.positions) {
          inView.add("wal:" + p);
        }
        cache.sources.entrySet().removeIf(en -> {
          if (!inView.contains(en.getKey())) {
            en.getValue().release();
            return true;
          }
          return false;
        });
        String sig = signature.toString();
        FreshShard previous = cache.current;
        if (previous == null || !previous.signature().equals(sig)) {
          boolean extends_ = previous != null && previous.watermark() == watermark
              && previous.manifest().version() == manifest.version() && previous.isPrefixOf(sources);
          cache.current = extends_ ? new FreshShard(previous, sources, sig)
              : new FreshShard(shardId, watermark, manifest, sources, sig);
        }
        if (!cache.current.retain()) {
          throw new IllegalStateException("fresh sources of shard " + shardId + " were freed while in view");
        }
        return cache.current;
      }
    } catch (IOException e) {
      throw LanceErrors.translate("read the fresh tier of shard " + shardId, e);
    }
  }

  /**
   * A view pinned to what another view saw (a read split's snapshot): the generations a given manifest
   * version lists above {@code watermark}, and exactly the given WAL positions. Retained for the caller.
   */
  public FreshShard pinnedView(String shardId, long watermark, long manifestVersion, List<Long> positions) {
    try {
      synchronized (this) {
        if (closed) {
          throw new IllegalStateException("store closed");
        }
        ShardCache cache = shards.computeIfAbsent(shardId, k -> new ShardCache());
        ShardManifest manifest = manifestVersion == 0 ? ShardManifest.empty()
            : ShardManifests.read(files, shardId, manifestVersion);
        List<FreshSource> sources = new ArrayList<>();
        StringBuilder signature = new StringBuilder("pinned|").append(watermark).append('|').append(manifestVersion);
        for (ShardManifest.FlushedGeneration g : manifest.flushed()) {
          if (g.generation() > watermark) {
            sources.add(cache.sources.computeIfAbsent("gen:" + g.path(), k -> loadGeneration(shardId, g)));
          }
        }
        for (long p : positions) {
          sources.add(cache.sources.computeIfAbsent("wal:" + p, k -> loadWal(shardId, p)));
          signature.append(',').append(p);
        }
        FreshShard view = new FreshShard(shardId, watermark, manifest, sources, signature.toString());
        if (!view.retain()) {
          throw new IllegalStateException("fresh sources of shard " + shardId + " were freed while in view");
        }
        return view;
      }
    } catch (java.nio.file.NoSuchFileException e) {
      throw new io.lancecontext.core.error.StorageException("shard " + shardId + ": the read's snapshot is gone (it is "
          + "older than gc.grace); plan the read again", e);
    } catch (IOException e) {
      throw LanceErrors.translate("read the fresh tier of shard " + shardId, e);
    }
  }

  /**
   * Brings a shard's manifest and WAL positions up to date with a few existence checks: manifest
   * versions and WAL positions are consecutive and only ever added above what is known (garbage
   * collection removes only entries at or below the replay position). A changed manifest is read and the
   * WAL directory listed in full.
   */
  private void refresh(String shardId, ShardCache cache) throws IOException {
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
    long replayAfter = cache.manifest.replayAfter();
    if (changed) {
      // an incomplete entry is moved aside by the next writer (a new manifest version), which may write a
      // complete entry at the same position
      cache.sources.entrySet().removeIf(en -> {
        if (en.getValue() instanceof WalSource w && w.incomplete()) {
          w.release();
          return true;
        }
        return false;
      });
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
    while (files.exists(WalEntry.path(shardId, next))) {
      cache.positions.add(next++);
    }
    requireConsecutive(shardId, cache);
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
      if (files.exists(WalEntry.path(shardId, p))) {
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
    } catch (java.nio.file.NoSuchFileException e) {
      throw new io.lancecontext.core.error.StorageException(config.uri() + ": WAL entry " + WalEntry.path(shardId, position)
          + " was removed while it was read (garbage collection of a read older than gc.grace, or by hand)", e);
    } catch (IOException e) {
      throw LanceErrors.translate("read WAL entry " + WalEntry.path(shardId, position), e);
    }
  }

  private GenerationSource loadGeneration(String shardId, ShardManifest.FlushedGeneration g) {
    String uri = config.uri() + "/" + ShardLayout.generationDir(shardId, g.path());
    Dataset ds = StoreDatasets.open(uri, config, allocator);
    try {
      List<String> columns = new ArrayList<>();
      columns.add(spec.key());
      boolean hasTombstones = ds.getSchema().getFields().stream().anyMatch(f -> f.getName().equals(SystemColumns.TOMBSTONE));
      if (hasTombstones) {
        columns.add(SystemColumns.TOMBSTONE);
      }
      columns.add(SystemColumns.SEQUENCE);
      List<String> keys = new ArrayList<>();
      List<Boolean> tombs = new ArrayList<>();
      List<Long> seqs = new ArrayList<>();
      ScanOptions options = new ScanOptions.Builder().columns(columns).build();
      try (ScanHandle scan = ScanHandle.open(ds, options)) {
        ArrowReader reader = scan.reader();
        while (reader.loadNextBatch()) {
          VectorSchemaRoot batch = reader.getVectorSchemaRoot();
          VarCharVector key = (VarCharVector) batch.getVector(spec.key());
          BitVector tomb = hasTombstones ? (BitVector) batch.getVector(SystemColumns.TOMBSTONE) : null;
          org.apache.arrow.vector.BigIntVector seq = (org.apache.arrow.vector.BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
          for (int r = 0; r < batch.getRowCount(); r++) {
            keys.add(new String(key.get(r), StandardCharsets.UTF_8));
            tombs.add(tomb != null && !tomb.isNull(r) && tomb.get(r) != 0);
            seqs.add(seq.isNull(r) ? 0L : seq.get(r));
          }
        }
      }
      boolean[] t = new boolean[tombs.size()];
      for (int i = 0; i < t.length; i++) {
        t[i] = tombs.get(i);
      }
      long[] q = seqs.stream().mapToLong(Long::longValue).toArray();
      return new GenerationSource(shardId, g.generation(), g.path(), ds, keys.toArray(new String[0]), q,
          hasTombstones ? t : null);
    } catch (Exception e) {
      ds.close();
      throw LanceErrors.translate("read generation " + g.path() + " of shard " + shardId, e);
    }
  }

  /** Rows and sources held, for stats. */
  public synchronized long[] footprint() {
    long rows = 0;
    long sources = 0;
    for (ShardCache c : shards.values()) {
      for (FreshSource s : c.sources.values()) {
        rows += s.rows();
        sources++;
      }
    }
    return new long[] {sources, rows};
  }

  @Override
  public synchronized void close() {
    closed = true;
    for (ShardCache c : shards.values()) {
      c.sources.values().forEach(FreshSource::release);
      c.sources.clear();
      c.current = null;
    }
    shards.clear();
  }
}
