package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.io.ReadLeases;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LogNames;
import io.lancecontext.core.internal.lance.MergedWatermarks;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.lance.VersionCleanup;
import io.lancecontext.core.internal.lance.VersionCleanup.TableVersion;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.txn.Transactions;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.txn.TxnRecord;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.GcResult;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *       still refers to ({@link VersionCleanup});</li>
 *   <li>WAL entries at or below the replay position (sealed into a generation), old shard-manifest
 *       versions (the newest {@value #KEEP_MANIFESTS} always stay) and orphaned generation directories
 *       (unlisted, below a listed generation; an unlisted one above every listed one may be a flush in
 *       progress and stays), {@code gc.grace} after the time the {@link GcLedger} recorded for them.</li>
 * </ul>
 *
 * A read that holds a lease ({@link ReadLeases}) counts as planned now for
 * as long as the lease lasts: the cutoff is never later than the planning time of the oldest leased read. A tagged
 * snapshot keeps exactly what it reads ({@link TaggedKeeps}), whatever its age: its base version (a lance-core tag,
 * {@link VersionCleanup#removeBefore}), its shard-manifest versions, generations and WAL entries, and the records
 * and parts of the transactions it holds. The leases are listed before the tags: a tag written after that was of a
 * snapshot young or leased enough for this collection's cutoff to keep.
 *
 * <p>No file or directory modification time is used. Callers hold the {@link MaintenanceLock}; every
 * deletion is preceded by a check that they still do.
 */
final class GarbageCollector {
  private static final Logger LOG = LoggerFactory.getLogger(GarbageCollector.class);

  private GarbageCollector() {}

  private static final Pattern GENERATION_DIR = Pattern.compile("[0-9a-f]+_gen_(\\d{1,18})");
  /** A leased read's planning time is taken this much earlier (its snapshot was taken just before). */
  static final long LEASE_MARGIN_MILLIS = 1_000;
  /** Newest manifest versions always kept, whatever their age. */
  static final int KEEP_MANIFESTS = 8;

  static GcResult collect(StoreConfig config, int shards, StoreFiles files, BufferAllocator allocator, Duration grace,
      MaintenanceLock lease, Transactions transactions, Supplier<List<ReadSplit.Snapshot>> tagged) throws IOException {
    long now = System.currentTimeMillis();
    // a leased read planned at t keeps everything it needs: collect as if it had been planned just now
    long leased = ReadLeases.oldestPlannedAt(files, now);
    long cutoff = Math.min(now - grace.toMillis(), leased == Long.MAX_VALUE ? Long.MAX_VALUE : leased - LEASE_MARGIN_MILLIS);
    // a shard view may use a manifest this much older than the newest (ShardCache.refresh): WAL entries and
    // manifests stay that much longer, so a read planned at t still finds its files until t + gc.grace
    long logCutoff = cutoff - io.lancecontext.core.internal.read.FreshCache.manifestRecheckNanos(grace) / 1_000_000;
    TaggedKeeps keeps = TaggedKeeps.of(tagged.get(), shards, files);
    int gens = 0;
    int wal = 0;
    int manifests = 0;
    long bytes = 0;
    long versions = 0;
    try (LanceDataset base = StoreDatasets.open(config.uri(), config, allocator)) {
      List<TableVersion> history = VersionCleanup.history(base);
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
          if (delete && !keeps.generation(shard, name)) {
            String dir = ShardLayout.generationDir(shard, name) + "/";
            bytes += bytes(files.listPrefix(dir));
            lease.ensureHeld();
            files.deletePrefix(dir);
            gens++;
          }
        }
        // one listing each of the WAL and manifest prefixes (sizes included); what they hold is bounded by
        // collection itself: the WAL tail not sealed yet plus what became obsolete less than gc.grace ago
        List<String> obsolete = new ArrayList<>();
        ledger.walObsolete(shard, manifest.replayAfter(), now);
        for (StoreFiles.Entry e : files.listPrefix(ShardLayout.walDir(shard) + "/")) {
          long p = LogNames.number(e.name(), LogNames.WAL_SUFFIX);
          long since = p >= 0 && p <= manifest.replayAfter() ? ledger.walObsoleteSince(shard, p) : -1;
          if (since >= 0 && since <= logCutoff && e.path().equals(WalEntry.path(shard, p)) && !keeps.walEntry(shard, p)) {
            obsolete.add(e.path());
            bytes += e.size();
            wal++;
          }
        }
        ledger.manifestsSuperseded(shard, manifest.version(), now);
        List<StoreFiles.Entry> versionsStored = new ArrayList<>();
        for (StoreFiles.Entry e : files.listPrefix(ShardLayout.manifestDir(shard) + "/")) {
          if (LogNames.number(e.name(), LogNames.MANIFEST_SUFFIX) >= 0
              && e.path().equals(ShardLayout.manifestDir(shard) + "/" + e.name())) {
            versionsStored.add(e);
          }
        }
        versionsStored.sort(Comparator.comparingLong(e -> LogNames.number(e.name(), LogNames.MANIFEST_SUFFIX)));
        for (int i = 0; i < versionsStored.size() - KEEP_MANIFESTS; i++) {
          StoreFiles.Entry e = versionsStored.get(i);
          long version = LogNames.number(e.name(), LogNames.MANIFEST_SUFFIX);
          long since = ledger.manifestSupersededSince(shard, version);
          if (since >= 0 && since <= logCutoff && !keeps.manifest(shard, version)) {
            obsolete.add(e.path());
            bytes += e.size();
            manifests++;
          }
        }
        if (!obsolete.isEmpty()) {
          lease.ensureHeld();
          files.deleteAll(obsolete);
        }
      }
      if (transactions != null) {
        long[] removed = collectTransactions(transactions, files, collectable, keeps, cutoff, now - grace.toMillis(),
            now, config.get(StoreOptions.TXN_TIMEOUT), lease);
        gens += (int) removed[0];
        bytes += removed[1];
        transactions.intents().collectStale(now, lease::ensureHeld);  // publishers that died in their publish
      }
      ledger.prune(logCutoff, orphansSeen);
      lease.ensureHeld();
      ledger.write(files);

      // never a version an index still refers to, nor one a tag reads (VersionCleanup.removeBefore)
      VersionCleanup.Removed removed = VersionCleanup.removeBefore(base, firstVersionToKeep(history, cutoff), history,
          keeps.baseVersions(), lease::ensureHeld);
      versions = removed.versions();
      bytes += removed.bytes();
    }
    return new GcResult(true, gens, wal, manifests, versions, bytes);
  }

  private static long bytes(List<StoreFiles.Entry> entries) {
    long total = 0;
    for (StoreFiles.Entry e : entries) {
      total += e.size();
    }
    return total;
  }

  /**
   * The first version to keep: every earlier version was superseded at least {@code gc.grace} ago (its
   * successor was committed at or before {@code cutoffMillis}). The latest version is always kept.
   */
  static long firstVersionToKeep(List<TableVersion> history, long cutoffMillis) {
    for (int i = 0; i + 1 < history.size(); i++) {
      if (history.get(i + 1).committedAtMillis() > cutoffMillis) {
        return history.get(i).id();
      }
    }
    return history.isEmpty() ? 0 : history.get(history.size() - 1).id();
  }

  /** The newest version committed at or before {@code cutoffMillis}, or -1 if none was. */
  static long newestCommittedBy(List<TableVersion> history, long cutoffMillis) {
    long newest = -1;
    for (TableVersion v : history) {
      if (v.committedAtMillis() <= cutoffMillis) {
        newest = v.id();
      }
    }
    return newest;
  }

  /**
   * Staged transaction data no read can need any more, {@code gc.grace} after that became so:
   * <ul>
   *   <li>a transaction without a record that is no longer alive: its newest liveness marker
   *       ({@link io.lancecontext.core.internal.txn.TxnLiveness}) names a time before now or, without any, its
   *       newest part was staged more than {@code txn.timeout} (this store's) ago. It is decided expired first
   *       (its record written once, so a late publish fails instead of naming deleted parts), then its parts
   *       are deleted. Liveness markers go once the transaction is decided, or once they are {@code gc.grace}
   *       past their time when nothing was staged;</li>
   *   <li>an aborted transaction's parts, once its record is older than {@code cutoff};</li>
   *   <li>a published transaction's parts it did not name, likewise; the parts it named once every bucket's
   *       transaction watermark at the newest base version committed by {@code cutoff} reaches its publish
   *       sequence (merged at least {@code gc.grace} ago), unless a tag reads it.</li>
   * </ul>
   * A published transaction whose named parts are all deleted that way (merged, at least {@code gc.grace}
   * ago) and whose record is older than {@code cutoff} is folded into the compact {@link
   * io.lancecontext.core.internal.txn.TxnLedger} and its directory, record included, is deleted, so the
   * records under {@code _lc/txn} stay bounded by what is unmerged or younger than the grace; a replayed
   * publish still finds it decided (through the ledger). The bulk path's own transactions (which nobody
   * publishes again) are deleted without a ledger entry. Aborted transactions keep their records.
   *
   * @return part directories deleted, bytes freed
   */
  private static long[] collectTransactions(Transactions transactions, StoreFiles files, Map<String, Long> collectable,
      TaggedKeeps keeps, long cutoff, long graceCutoff, long now, Duration txnTimeout, MaintenanceLock lease)
      throws IOException {
    long parts = 0;
    long bytes = 0;
    List<TxnRecord> compactable = new ArrayList<>();
    for (String txid : transactions.transactionIds()) {
      if (!TxnIds.isTransactionDir(txid)) {
        continue;  // not a transaction of this build
      }
      var record = transactions.record(txid);
      boolean decidedNow = false;
      Map<String, Long> staged = new java.util.TreeMap<>();  // "b<bucket>/<part name>" -> bytes
      long newest = -1;
      boolean others = false;  // objects of another kind: the transaction's directory is kept
      boolean recordFile = false;
      List<String> markers = new ArrayList<>();
      long liveUntil = -1;
      String prefix = TxnIds.dir(txid) + "/";
      for (StoreFiles.Entry e : files.listPrefix(prefix)) {
        String[] p = e.path().substring(prefix.length()).split("/", 3);
        long until = p.length == 1 ? TxnIds.liveUntil(p[0]) : -1;
        if (until >= 0) {
          markers.add(e.path());
          liveUntil = Math.max(liveUntil, until);
        } else if (p.length == 3 && p[0].matches("b\\d{1,9}")) {
          staged.merge(p[0] + "/" + p[1], e.size(), Long::sum);
          newest = Math.max(newest, TxnIds.stagedAt(p[1]));
        } else if (e.path().equals(TxnIds.record(txid))) {
          recordFile = true;
        } else {
          others = true;
        }
      }
      if (!recordFile && record.isPresent() && record.get().published() && !others) {
        // compacted into the ledger by a collection that stopped before removing all of it
        lease.ensureHeld();
        files.deletePrefix(prefix);
        continue;
      }
      if (record.isEmpty()) {
        if (newest < 0) {
          if (!markers.isEmpty() && liveUntil <= cutoff && !others) {
            // held by a job that never staged anything and is gone: only its markers are left
            lease.ensureHeld();
            files.deleteAll(markers);
          }
          continue;  // nothing staged yet
        }
        long alive = markers.isEmpty() ? newest + txnTimeout.toMillis() : liveUntil;
        if (alive > now) {
          continue;  // its owner still renews it, or did so less than its timeout ago
        }
        lease.ensureHeld();
        TxnRecord mine = TxnRecord.expired(txid, System.currentTimeMillis());
        TxnRecord decided = transactions.decide(mine);
        if (decided != mine) {
          continue;  // published (or aborted) meanwhile: judged by its record at the next collection
        }
        LOG.warn("{}: transaction {} expired: nobody renewed it, so it was alive until {} (txn.timeout); it is "
            + "aborted and its {} staged parts are deleted, and a publish of it fails", transactions.files(), txid,
            Instant.ofEpochMilli(alive), staged.size());
        record = java.util.Optional.of(decided);
        decidedNow = true;  // never visible to any read: nothing to wait for
      }
      if (!markers.isEmpty()) {
        lease.ensureHeld();
        files.deleteAll(markers);  // decided: nothing left to keep alive
      }
      TxnRecord r = record.get();
      Set<String> named = new HashSet<>();
      boolean merged = !keeps.transaction(r.sequences());  // a tag's transactions count as not merged yet
      for (var p : r.parts()) {
        named.add("b" + p.bucket() + "/" + p.name());
      }
      for (var e : r.sequences().entrySet()) {
        merged &= collectable.getOrDefault(TxnIds.txnShardId(e.getKey()), 0L) >= e.getValue();
      }
      boolean old = r.atMillis() <= cutoff;
      // parts no read ever saw (aborted, or not named by the publish) wait gc.grace only, whatever reads are leased
      boolean unreadOld = r.atMillis() <= graceCutoff;
      int left = staged.size();
      Map<String, List<String>> byBucket = new java.util.TreeMap<>();  // bucket dir -> its parts to delete
      Map<String, Integer> inBucket = new HashMap<>();
      for (var s : staged.entrySet()) {
        String b = s.getKey().substring(0, s.getKey().indexOf('/'));
        inBucket.merge(b, 1, Integer::sum);
        boolean isNamed = r.published() && named.contains(s.getKey());
        if (isNamed ? merged : unreadOld || decidedNow) {
          byBucket.computeIfAbsent(b, k -> new ArrayList<>()).add(s.getKey());
          bytes += s.getValue();
          parts++;
          left--;
        }
      }
      for (var e : byBucket.entrySet()) {
        lease.ensureHeld();
        if (e.getValue().size() == inBucket.get(e.getKey())) {
          files.deletePrefix(prefix + e.getKey() + "/");  // the whole bucket directory, in one listing
        } else {
          for (String part : e.getValue()) {
            files.deletePrefix(prefix + part + "/");
          }
        }
      }
      if (r.published() && merged && old && left == 0 && !others) {
        if (TxnIds.isBulk(txid)) {
          // the bulk path's own transactions are never published again by anyone: their records just go
          lease.ensureHeld();
          files.deletePrefix(prefix);
        } else {
          compactable.add(r);
        }
      }
    }
    if (!compactable.isEmpty()) {
      // the ledger version first, then the records: a record is gone only once the ledger names it
      lease.ensureHeld();
      if (transactions.compact(compactable)) {
        for (TxnRecord r : compactable) {
          lease.ensureHeld();
          files.deletePrefix(TxnIds.dir(r.txid()) + "/");
        }
      }
    }
    List<String> superseded = transactions.supersededLedgerVersions();
    if (!superseded.isEmpty()) {
      lease.ensureHeld();
      files.deleteAll(superseded);
    }
    return new long[] {parts, bytes};
  }

  /**
   * The merged watermarks of base version {@code version} (none when -1): generations at or below them
   * were merged by a commit at least {@code gc.grace} old.
   */
  private static Map<String, Long> watermarksAt(StoreConfig config, BufferAllocator allocator, LanceDataset latest,
      long version) {
    if (version < 0) {
      return Map.of();
    }
    if (version == latest.version()) {
      return MergedWatermarks.read(latest);
    }
    try (LanceDataset old = StoreDatasets.open(config.uri(), config, allocator, version)) {
      return MergedWatermarks.read(old);
    }
  }
}
