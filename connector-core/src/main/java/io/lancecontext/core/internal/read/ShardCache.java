package io.lancecontext.core.internal.read;

import com.github.benmanes.caffeine.cache.Cache;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One shard's entry in the {@link FreshCache}: its current view, the cache keys of its loaded sources, and
 * what is known of its files (the newest manifest, the WAL positions above its replay position), which
 * {@link #refresh} brings up to date with as few requests as is safe. Guarded by its own monitor, which the
 * cache holds while it refreshes the shard and loads its sources.
 */
final class ShardCache {
  /**
   * The inputs of a view: the merged watermark, the manifest version, the transaction parts and the WAL
   * positions (consecutive above the replay position, so their count and bounds name them).
   */
  record ViewState(long watermark, long manifestVersion, java.util.List<?> parts, int positions, long firstPosition,
      long lastPosition) {}

  /** The state a view asked for now, with {@code watermark} and {@code parts}, would be built from. */
  ViewState state(long watermark, java.util.List<?> parts) {
    return new ViewState(watermark, manifest.version(), parts, positions.size(),
        positions.isEmpty() ? -1 : positions.first(), positions.isEmpty() ? -1 : positions.last());
  }

  /** Cache keys of this shard's sources that may be in the cache (evicted ones linger until the next view). */
  final Set<String> loaded = new HashSet<>();
  FreshShard current;
  /** What {@link #current} was built from: a view asked for in the same state is {@link #current} again. */
  ViewState currentState;
  ShardManifest manifest;
  /** Whether an incomplete WAL entry of this shard was loaded since the manifest last changed. */
  boolean holdsIncomplete;
  /** When {@link #manifest} was last found to be the newest version ({@link System#nanoTime()}). */
  private long manifestCheckedNanos;
  /** The shard's merged watermark when {@link #manifest} was checked. */
  private long watermarkAtCheck = -1;
  final java.util.TreeSet<Long> positions = new java.util.TreeSet<>();
  /** The WAL positions {@code first..last} the generation at {@code path} was sealed from. */
  record Sealed(String path, long first, long last) {}

  /**
   * The last generation flushed since the manifest read before, with the WAL positions it was sealed from, or null:
   * when a refresh finds exactly one new generation and the replay position moved, the entries between the two
   * replay positions are what the writer sealed into it (a view may still hold them, {@link FreshLoader}).
   */
  Sealed sealed;

  private final String shardId;
  private final String uri;
  private final StoreFiles files;
  /** The cache's loaded sources by {@code <shard>/<source id>}. */
  private final Cache<String, FreshSource> sources;
  private final long recheckNanos;
  /** {@code gc.grace}: a manifest check older than this lists the versions instead of probing the next one. */
  private final long graceNanos;

  ShardCache(String shardId, String uri, StoreFiles files, Cache<String, FreshSource> sources, long recheckNanos,
      long graceNanos) {
    this.shardId = shardId;
    this.uri = uri;
    this.files = files;
    this.sources = sources;
    this.recheckNanos = recheckNanos;
    this.graceNanos = graceNanos;
  }

  /**
   * Brings the shard's WAL positions, and when needed its manifest, up to date with as few requests as is
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
   * entry at its position) or (d) {@link FreshCache#manifestRecheckNanos} passed, which also covers a reader idle for
   * longer than that (entries it never saw may have been sealed and collected meanwhile). The next manifest
   * version is probed when the last check is younger than {@code gc.grace}; an older one lists the manifest
   * versions instead, since garbage collection may have removed the versions after the known one (it removes a
   * version {@code gc.grace} after it saw it superseded, so one written after the last check is still there until
   * that long after it). What a
   * view misses while it skips the check is only a seal without a new entry: the sealed rows are still read
   * from the WAL entries that hold them, which garbage collection keeps for {@code gc.grace} plus the
   * recheck interval after the seal. Called under this entry's monitor.
   */
  void refresh(long watermark) throws IOException {
    long now = System.nanoTime();
    if (manifest != null && !manifestCheckDue(watermark, now)) {
      long next = Math.max(manifest.replayAfter(), positions.isEmpty() ? 0 : positions.last()) + 1;
      if (!files.objectExists(WalEntry.path(shardId, next))) {
        return;  // nothing new, and nothing that says the manifest changed
      }
    }
    ShardManifest newest = ShardManifests.newest(files, shardId, manifest, now - manifestCheckedNanos, graceNanos);
    boolean changed = manifest == null || newest.version() != manifest.version();
    if (changed && manifest != null) {
      noteSealed(manifest, newest);
    }
    manifest = newest;
    manifestCheckedNanos = now;
    watermarkAtCheck = watermark;
    long replayAfter = manifest.replayAfter();
    if (changed) {
      // an incomplete entry is moved aside by the next writer (a new manifest version), which may write a
      // complete entry at the same position
      for (String k : loaded) {
        if (sources.getIfPresent(k) instanceof WalSource w && w.incomplete()) {
          sources.asMap().remove(k, w);
        }
      }
      holdsIncomplete = false;
    }
    if (changed || positions.isEmpty() && manifest.version() == 0) {
      positions.clear();
      for (long p : WalEntry.positions(files, shardId)) {
        if (p > replayAfter) {
          positions.add(p);
        }
      }
    }
    long next = Math.max(replayAfter, positions.isEmpty() ? 0 : positions.last()) + 1;
    while (files.objectExists(WalEntry.path(shardId, next))) {
      positions.add(next++);
    }
    requireConsecutive();
  }

  /** Records which WAL positions the one generation flushed between {@code before} and {@code after} held. */
  private void noteSealed(ShardManifest before, ShardManifest after) {
    sealed = null;
    Set<String> known = new HashSet<>();
    before.flushed().forEach(g -> known.add(g.path()));
    List<ShardManifest.FlushedGeneration> added = after.flushed().stream().filter(g -> !known.contains(g.path()))
        .toList();
    if (added.size() == 1 && after.replayAfter() > before.replayAfter()) {
      sealed = new Sealed(added.get(0).path(), before.replayAfter() + 1, after.replayAfter());
    }
  }

  private boolean manifestCheckDue(long watermark, long now) {
    if (now - manifestCheckedNanos >= recheckNanos) {
      return true;
    }
    return watermark != watermarkAtCheck || holdsIncomplete;
  }

  /**
   * WAL positions above the replay position are consecutive: a missing one below the newest is an
   * acknowledged entry lost, unless a newer manifest version explains it (sealed and garbage-collected
   * since the manifest was read; the next view reads that manifest).
   */
  private void requireConsecutive() throws IOException {
    if (positions.isEmpty()) {
      return;
    }
    long last = positions.last();
    for (long p = manifest.replayAfter() + 1; p < last; p++) {
      if (positions.contains(p)) {
        continue;
      }
      if (files.objectExists(WalEntry.path(shardId, p))) {
        positions.add(p);  // created while the directory was listed
      } else if (ShardManifests.exists(files, shardId, manifest.version() + 1)) {
        return;
      } else {
        throw new io.lancecontext.core.error.StorageException(uri + ": WAL entry "
            + WalEntry.path(shardId, p) + " is missing although later entries exist: acknowledged rows are lost", null);
      }
    }
  }
}
