package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.read.BaseTable;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a background merge is due: {@code merge.trigger.generations} generations and transaction parts
 * unmerged, or one of them older than {@code merge.trigger.interval}. Checked every tick, so it keeps what
 * it read between ticks (each shard's newest manifest, each unmerged generation's commit time) and reads
 * only what changed.
 */
final class MergeTriggers {
  private static final Logger LOG = LoggerFactory.getLogger(Maintenance.class);

  private final Maintenance.Host host;

  /** Commit times of unmerged flushed generations, by "shard path"; see {@link #generationMade}. */
  private final Map<String, Instant> generationMade = new ConcurrentHashMap<>();
  /** The newest manifest seen of each shard, and when it was looked for; see {@link #manifest}. */
  private final Map<String, Seen> manifests = new ConcurrentHashMap<>();

  private record Seen(ShardManifest manifest, long lookedNanos) {}

  MergeTriggers(Maintenance.Host host) {
    this.host = host;
  }

  /** Whether a merge is due now. */
  boolean due(StoreConfig config) {
    int trigger = config.get(StoreOptions.MERGE_GENERATIONS);
    Instant ageCutoff = Instant.now().minus(config.get(StoreOptions.MERGE_INTERVAL));
    BaseTable base = host.base();
    try {
      int unmerged = 0;
      for (String shard : ShardIds.all(host.shards())) {
        long w = base.watermark(shard);
        for (ShardManifest.FlushedGeneration g : manifest(shard, config).flushed()) {
          if (g.generation() > w) {
            unmerged++;
            Instant made = generationMade(config, shard, g.path());
            if (made != null && made.isBefore(ageCutoff)) {
              return true;
            }
          } else {
            generationMade.remove(shard + " " + g.path());
          }
        }
      }
      for (var e : host.transactions().publishedParts().entrySet()) {
        long w = base.watermark(io.lancecontext.core.internal.txn.TxnIds.txnShardId(e.getKey()));
        for (var p : e.getValue()) {
          if (p.sequence() > w) {
            unmerged++;
            var record = host.transactions().record(p.txid());
            if (record.isPresent() && record.get().atMillis() < ageCutoff.toEpochMilli()) {
              return true;
            }
          }
        }
      }
      return unmerged >= trigger;
    } catch (IOException e) {
      throw LanceErrors.translate("check the merge triggers", e);
    } finally {
      base.release();
    }
  }

  /**
   * The newest manifest of a shard, kept between ticks: versions are written once, consecutively, so one existence
   * check of the next version (one request on an object store) finds out whether it changed, and only a changed one
   * is read; after a pause of {@code gc.grace} or more (ticks held up by a long merge or index build), whose
   * collections may have removed the next version, the versions are listed ({@link ShardManifests#newest}).
   */
  private ShardManifest manifest(String shard, StoreConfig config) throws IOException {
    Seen seen = manifests.get(shard);
    long now = System.nanoTime();
    ShardManifest newest = ShardManifests.newest(host.files(), shard, seen == null ? null : seen.manifest(),
        seen == null ? 0 : now - seen.lookedNanos(), config.get(StoreOptions.GC_GRACE).toNanos());
    manifests.put(shard, new Seen(newest, now));
    return newest;
  }

  /**
   * When a flushed generation was made: the commit time lance-core wrote into the generation's own manifest
   * when it flushed it (never a file or directory time). A generation never changes, so this is read once
   * (one dataset open) and kept until the generation is merged; null if it cannot be read now (gone, or the
   * store unreachable: the age trigger then waits for the next tick).
   */
  private Instant generationMade(StoreConfig config, String shard, String path) {
    String key = shard + " " + path;
    Instant known = generationMade.get(key);
    if (known != null) {
      return known;
    }
    String uri = config.uri() + "/" + ShardLayout.generationDir(shard, path);
    try (LanceDataset generation = StoreDatasets.open(uri, config, host.allocator())) {
      Instant made = generation.committedAt();
      generationMade.put(key, made);
      return made;
    } catch (RuntimeException e) {
      LOG.debug("{}: no commit time for generation {} of shard {} yet: {}", host.name(), path, shard, e.toString());
      return null;
    }
  }
}
