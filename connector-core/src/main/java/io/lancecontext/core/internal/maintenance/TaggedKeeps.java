package io.lancecontext.core.internal.maintenance;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.ShardManifests;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.read.ReadSplit;
import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the tagged snapshots read, which garbage collection keeps whatever its age: per tag its base version, and
 * per shard the manifest version it pinned, the generation directories that manifest lists above the pinned
 * watermark, its WAL entries, and the transactions its transaction shards name (their records and parts). Nothing
 * later snapshots superseded is kept on a tag's account, so a tag costs what its own snapshot reads.
 */
final class TaggedKeeps {
  /** Generations a shard-manifest version lists, by store, shard and version (manifest versions never change). */
  private static final Cache<String, List<ShardManifest.FlushedGeneration>> LISTED =
      Caffeine.newBuilder().maximumSize(20_000).build();

  private final Set<Long> baseVersions = new HashSet<>();
  private final Map<String, Set<String>> generations = new HashMap<>();
  private final Map<String, Set<Long>> walPositions = new HashMap<>();
  private final Map<String, Set<Long>> manifests = new HashMap<>();
  private final Map<Integer, Set<Long>> transactions = new HashMap<>();

  private TaggedKeeps() {}

  /** What {@code tagged} (snapshots of a store of {@code buckets} buckets, its files {@code files}) read. */
  static TaggedKeeps of(List<ReadSplit.Snapshot> tagged, int buckets, StoreFiles files) throws IOException {
    TaggedKeeps keeps = new TaggedKeeps();
    Set<String> lanes = new HashSet<>(ShardIds.all(buckets));
    Map<String, Integer> txnShards = new HashMap<>();
    for (int b = 0; b < buckets; b++) {
      txnShards.put(TxnIds.txnShardId(b), b);
    }
    for (ReadSplit.Snapshot s : tagged) {
      keeps.baseVersions.add(s.baseVersion());
      for (var e : s.shards().entrySet()) {
        String shard = e.getKey();
        ReadSplit.PinnedShard p = e.getValue();
        Integer bucket = txnShards.get(shard);
        if (bucket != null) {
          keeps.transactions.computeIfAbsent(bucket, k -> new HashSet<>()).addAll(p.walPositions());
        } else if (lanes.contains(shard)) {
          keeps.walPositions.computeIfAbsent(shard, k -> new HashSet<>()).addAll(p.walPositions());
          if (p.manifestVersion() > 0) {
            keeps.manifests.computeIfAbsent(shard, k -> new HashSet<>()).add(p.manifestVersion());
            for (ShardManifest.FlushedGeneration g : listed(files, shard, p.manifestVersion())) {
              if (g.generation() > p.watermark()) {
                keeps.generations.computeIfAbsent(shard, k -> new HashSet<>()).add(g.path());
              }
            }
          }
        }
      }
    }
    return keeps;
  }

  private static List<ShardManifest.FlushedGeneration> listed(StoreFiles files, String shard, long version)
      throws IOException {
    String key = files + "\n" + shard + "\n" + version;
    List<ShardManifest.FlushedGeneration> listed = LISTED.getIfPresent(key);
    if (listed == null) {
      try {
        listed = List.copyOf(ShardManifests.read(files, shard, version).flushed());
      } catch (StoreFiles.NotFound e) {
        return List.of();  // collected by a build that kept tags otherwise: reading at the tag fails alike
      }
      LISTED.put(key, listed);
    }
    return listed;
  }

  /** The base versions tags read. */
  Set<Long> baseVersions() {
    return baseVersions;
  }

  /** Whether a tag reads the generation directory {@code dir} of {@code shard}. */
  boolean generation(String shard, String dir) {
    return generations.getOrDefault(shard, Set.of()).contains(dir);
  }

  /** Whether a tag reads the WAL entry at {@code position} of {@code shard}. */
  boolean walEntry(String shard, long position) {
    return walPositions.getOrDefault(shard, Set.of()).contains(position);
  }

  /** Whether a tag reads version {@code version} of {@code shard}'s manifest. */
  boolean manifest(String shard, long version) {
    return manifests.getOrDefault(shard, Set.of()).contains(version);
  }

  /** Whether a tag reads a transaction published with {@code sequences} (bucket → publish sequence). */
  boolean transaction(Map<Integer, Long> sequences) {
    for (var e : sequences.entrySet()) {
      if (transactions.getOrDefault(e.getKey(), Set.of()).contains(e.getValue())) {
        return true;
      }
    }
    return false;
  }
}
