package io.lancecontext.core.read;

import io.lancecontext.core.options.StoreConfig;
import java.io.Serializable;
import java.util.List;
import java.util.Map;

/**
 * One independent part of a read, for engines that read in parallel (a Spark input partition, a Flink
 * source split): either some base-table fragments (rows of keys the fresh tier holds excluded) or the
 * whole fresh tier. Every split of a plan reads the same snapshot, so together they return exactly the
 * LSM view. Serializable; read it with {@code ContextStore.read(split)} in any process, within
 * {@code gc.grace} of planning.
 *
 * @param config the store's options
 * @param snapshot the snapshot all splits of the plan read
 * @param scan what to read (offset not allowed; a limit applies per split)
 * @param part which part of the view
 * @param fragments base fragments to read ({@link StoreScan.Part#BASE} only)
 */
public record ReadSplit(StoreConfig config, Snapshot snapshot, ScanSpec scan, StoreScan.Part part,
    List<Integer> fragments) implements Serializable {

  public ReadSplit {
    fragments = fragments == null ? null : List.copyOf(fragments);
  }

  /**
   * A snapshot, pinned: the base-table version, and per shard what its fresh tier held.
   *
   * @param baseVersion base-table version
   * @param shards shard id → pinned fresh tier
   */
  public record Snapshot(long baseVersion, Map<String, PinnedShard> shards) implements Serializable {
    public Snapshot {
      shards = Map.copyOf(shards);
    }

    /** Pins what {@code snapshot} sees. */
    public static Snapshot of(LsmSnapshot snapshot) {
      Map<String, PinnedShard> pinned = new java.util.LinkedHashMap<>();
      for (FreshShard s : snapshot.shards().values()) {
        List<Long> positions = new java.util.ArrayList<>();
        for (FreshSource source : s.sources()) {
          if (source instanceof WalSource w) {
            positions.add(w.entry().position());
          }
        }
        pinned.put(s.shardId(), new PinnedShard(s.watermark(), s.manifest().version(), positions));
      }
      return new Snapshot(snapshot.base().version(), pinned);
    }
  }

  /**
   * One shard's fresh tier, pinned.
   *
   * @param watermark merged watermark at the base version
   * @param manifestVersion shard-manifest version whose generations above the watermark it holds
   * @param walPositions the WAL entries it holds
   */
  public record PinnedShard(long watermark, long manifestVersion, List<Long> walPositions) implements Serializable {
    public PinnedShard {
      walPositions = List.copyOf(walPositions);
    }
  }
}
