package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LogNames;
import io.lancecontext.core.internal.lance.MergedWatermarks;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.txn.TxnRecord;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.GcResult;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.Version;
import org.lance.cleanup.CleanupPolicy;
import org.lance.cleanup.RemovalStats;
import org.lance.index.Index;

/**
 * Deletes what no reader needs any more, {@code gc.grace} after it stopped being needed (so that a read
 * planned before that moment can still finish, see {@link io.lancecontext.core.read.ReadSplit}):
 *
 * <ul>
 *   <li>a generation directory once the merge that folded it into the base is {@code gc.grace} old: it
 *       is at or below the merged watermark of the newest base version committed at least
 *       {@code gc.grace} ago (base-table version timestamps);</li>
 *   <li>an old base-table version once the version that superseded it is {@code gc.grace} old (Lance's
 *       cleanup, below the first version whose successor is younger), but never a version an index
 *       still refers to;</li>
 *   <li>WAL entries at or below the replay position (sealed into a generation), old shard-manifest
 *       versions (the newest {@value #KEEP_MANIFESTS} always stay) and orphaned generation directories
 *       (unlisted, below a listed generation; an unlisted one above every listed one may be a flush in
 *       progress and stays), {@code gc.grace} after the time the {@link GcLedger} recorded for them.</li>
 * </ul>
 *
 * No file or directory modification time is used. Callers hold the {@link MaintenanceLock}; every
 * deletion is preceded by a check that they still do.
 */
final class GarbageCollector {
  private GarbageCollector() {}

  private static final Pattern GENERATION_DIR = Pattern.compile("[0-9a-f]+_gen_(\\d{1,18})");
  /** Newest manifest versions always kept, whatever their age. */
  static final int KEEP_MANIFESTS = 8;

  static GcResult collect(StoreConfig config, int shards, StoreFiles files, BufferAllocator allocator, Duration grace,
      MaintenanceLock lease) throws IOException {
    return collect(config, shards, files, allocator, grace, lease, null);
  }

  static GcResult collect(StoreConfig config, int shards, StoreFiles files, BufferAllocator allocator, Duration grace,
      MaintenanceLock lease, Transactions transactions) throws IOException {
    long now = System.currentTimeMillis();
    long cutoff = now - grace.toMillis();
    int gens = 0;
    int wal = 0;
    int manifests = 0;
    long bytes = 0;
    long versions = 0;
    try (Dataset base = StoreDatasets.open(config.uri(), config, allocator)) {
      List<Version> history = new ArrayList<>(LanceErrors.call("list the base-table versions", base::listVersions));
      history.sort(Comparator.comparingLong(Version::getId));
      Map<String, Long> collectable = watermarksAt(config, allocator, base, newestCommittedBy(history, cutoff));
      GcLedger ledger = GcLedger.read(files);
      Set<String> orphansSeen = new HashSet<>();
      for (String shard : ShardIds.all(shards)) {
        ShardManifest manifest = ShardManifests.latest(files, shard);
        Set<String> listed = new HashSet<>();
        long newestListed = 0;
        for (ShardManifest.FlushedGeneration g : manifest.flushed()) {
          listed.add(g.path());
          newestListed = Math.max(newestListed, g.generation());
        }
        long mergedLongAgo = collectable.getOrDefault(shard, 0L);
        for (String name : files.list(ShardLayout.shardDir(shard))) {
          Matcher m = GENERATION_DIR.matcher(name);
          if (!m.matches()) {
            continue;
          }
          long generation = Long.parseLong(m.group(1));
          boolean delete = generation <= mergedLongAgo;
          if (!delete && !listed.contains(name) && generation < newestListed) {
            // below a listed generation: a fenced writer's orphan, which no manifest (so no read) names
            orphansSeen.add(shard + " " + name);
            delete = ledger.orphanedSince(shard, name, now) <= cutoff;
          }
          if (delete) {
            String dir = ShardLayout.generationDir(shard, name);
            lease.ensureHeld();
            bytes += files.totalBytes(dir);
            files.deleteRecursively(dir);
            gens++;
          }
        }
        ledger.walObsolete(shard, manifest.replayAfter(), now);
        for (long p : WalEntry.positions(files, shard)) {
          long since = p <= manifest.replayAfter() ? ledger.walObsoleteSince(shard, p) : -1;
          if (since >= 0 && since <= cutoff) {
            String path = WalEntry.path(shard, p);
            lease.ensureHeld();
            bytes += Math.max(0, files.size(path));
            files.deleteRecursively(path);
            wal++;
          }
        }
        ledger.manifestsSuperseded(shard, manifest.version(), now);
        List<Long> versionsOnDisk = ShardManifests.versions(files, shard);
        for (int i = 0; i < versionsOnDisk.size() - KEEP_MANIFESTS; i++) {
          long v = versionsOnDisk.get(i);
          long since = ledger.manifestSupersededSince(shard, v);
          if (since >= 0 && since <= cutoff) {
            String path = ShardLayout.manifestDir(shard) + "/" + LogNames.name(v, LogNames.MANIFEST_SUFFIX);
            lease.ensureHeld();
            bytes += Math.max(0, files.size(path));
            files.deleteRecursively(path);
            manifests++;
          }
        }
      }
      if (transactions != null) {
        long[] removed = collectTransactions(transactions, files, collectable, cutoff, lease);
        gens += (int) removed[0];
        bytes += removed[1];
      }
      ledger.prune(cutoff, orphansSeen);
      lease.ensureHeld();
      ledger.write(files);

      long keepFrom = firstVersionToKeep(history, cutoff);
      // lance-core 7.0.0 reads an index's metadata at the version the index was last written
      // (Index.datasetVersion()); cleanup does not protect that version, and removing it makes every
      // later compaction fail with "_versions/<v>.manifest was not found". Keep it.
      for (Index index : base.getIndexes()) {
        keepFrom = Math.min(keepFrom, index.datasetVersion());
      }
      if (!history.isEmpty() && keepFrom > history.get(0).getId()) {
        CleanupPolicy policy = CleanupPolicy.builder().withBeforeVersion(keepFrom).build();
        lease.ensureHeld();
        RemovalStats removed = LanceErrors.call("clean up old base-table versions", () -> base.cleanupWithPolicy(policy));
        versions = removed.getOldVersions();
        bytes += removed.getBytesRemoved();
      }
    }
    return new GcResult(true, gens, wal, manifests, versions, bytes);
  }

  /**
   * The first version to keep: every earlier version was superseded at least {@code gc.grace} ago (its
   * successor was committed at or before {@code cutoffMillis}). The latest version is always kept.
   */
  static long firstVersionToKeep(List<Version> history, long cutoffMillis) {
    for (int i = 0; i + 1 < history.size(); i++) {
      if (millis(history.get(i + 1)) > cutoffMillis) {
        return history.get(i).getId();
      }
    }
    return history.isEmpty() ? 0 : history.get(history.size() - 1).getId();
  }

  /** The newest version committed at or before {@code cutoffMillis}, or -1 if none was. */
  static long newestCommittedBy(List<Version> history, long cutoffMillis) {
    long newest = -1;
    for (Version v : history) {
      if (millis(v) <= cutoffMillis) {
        newest = v.getId();
      }
    }
    return newest;
  }

  private static long millis(Version v) {
    return v.getDataTime().toInstant().toEpochMilli();
  }

  /**
   * Staged transaction data no read can need any more, {@code gc.grace} after that became so:
   * <ul>
   *   <li>a transaction without a record whose newest part was staged before {@code cutoff}: it is decided
   *       aborted first (its record written once, so a late publish fails instead of naming deleted parts),
   *       then its parts are deleted;</li>
   *   <li>an aborted transaction's parts, once its record is older than {@code cutoff};</li>
   *   <li>a published transaction's parts it did not name, likewise; the parts it named once every bucket's
   *       transaction watermark at the newest base version committed by {@code cutoff} reaches its publish
   *       sequence (merged at least {@code gc.grace} ago).</li>
   * </ul>
   * Records are kept (a few hundred bytes each), so a replayed publish still finds its transaction decided;
   * only the bulk path's own transactions (which nobody publishes again) lose theirs once merged.
   *
   * @return part directories deleted, bytes freed
   */
  private static long[] collectTransactions(Transactions transactions, StoreFiles files, Map<String, Long> collectable,
      long cutoff, MaintenanceLock lease) throws IOException {
    long parts = 0;
    long bytes = 0;
    for (String txid : transactions.transactionIds()) {
      try {
        TxnIds.requireValid(txid);
      } catch (IllegalArgumentException e) {
        continue;  // not a transaction of this build
      }
      var record = transactions.record(txid);
      boolean decidedNow = false;
      List<String[]> staged = new ArrayList<>();  // {bucket dir, part name}
      long newest = -1;
      for (String b : files.list(TxnIds.dir(txid))) {
        if (!b.matches("b\\d{1,9}")) {
          continue;
        }
        for (String name : files.list(TxnIds.dir(txid) + "/" + b)) {
          staged.add(new String[] {b, name});
          newest = Math.max(newest, TxnIds.stagedAt(name));
        }
      }
      if (record.isEmpty()) {
        if (newest < 0 || newest > cutoff) {
          continue;  // still being staged, or nothing staged yet
        }
        lease.ensureHeld();
        TxnRecord mine = TxnRecord.aborted(txid, System.currentTimeMillis());
        TxnRecord decided = transactions.decide(mine);
        if (decided != mine) {
          continue;  // published (or aborted) meanwhile: judged by its record at the next collection
        }
        record = java.util.Optional.of(decided);
        decidedNow = true;  // never visible to any read: nothing to wait for
      }
      TxnRecord r = record.get();
      Set<String> named = new HashSet<>();
      boolean merged = true;
      for (var p : r.parts()) {
        named.add("b" + p.bucket() + "/" + p.name());
      }
      for (var e : r.sequences().entrySet()) {
        merged &= collectable.getOrDefault(TxnIds.txnShardId(e.getKey()), 0L) >= e.getValue();
      }
      boolean old = r.atMillis() <= cutoff;
      for (String[] s : staged) {
        boolean isNamed = r.published() && named.contains(s[0] + "/" + s[1]);
        if (isNamed ? merged : old || decidedNow) {
          String dir = TxnIds.dir(txid) + "/" + s[0] + "/" + s[1];
          lease.ensureHeld();
          bytes += files.totalBytes(dir);
          files.deleteRecursively(dir);
          parts++;
        }
      }
      for (String b : files.list(TxnIds.dir(txid))) {
        if (b.matches("b\\d{1,9}") && files.list(TxnIds.dir(txid) + "/" + b).isEmpty()) {
          files.deleteRecursively(TxnIds.dir(txid) + "/" + b);
        }
      }
      if (TxnIds.isBulk(txid) && r.published() && merged && old && files.list(TxnIds.dir(txid)).equals(
          List.of("record"))) {
        // the bulk path's own transactions are never published again by anyone: their records can go
        lease.ensureHeld();
        files.deleteRecursively(TxnIds.dir(txid));
      }
    }
    return new long[] {parts, bytes};
  }

  /**
   * The merged watermarks of base version {@code version} (none when -1): generations at or below them
   * were merged by a commit at least {@code gc.grace} old.
   */
  private static Map<String, Long> watermarksAt(StoreConfig config, BufferAllocator allocator, Dataset latest,
      long version) {
    if (version < 0) {
      return Map.of();
    }
    if (version == latest.version()) {
      return MergedWatermarks.read(latest);
    }
    try (Dataset old = StoreDatasets.open(config.uri(), config, allocator, version)) {
      return MergedWatermarks.read(old);
    }
  }
}
