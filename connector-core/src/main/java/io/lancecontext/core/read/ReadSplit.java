package io.lancecontext.core.read;

import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import java.io.Serializable;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One independent part of a read, for engines that read in parallel (a Spark input partition, a Flink
 * source split): either some base-table fragments (rows of keys the fresh tier holds excluded) or the
 * fresh tier of some buckets (both lanes of each: a key's newest fresh row is decided across the two
 * lanes of its bucket, and a key lives in one bucket only). Every split of a plan ({@link ReadPlan}) reads
 * the same snapshot, so together they return exactly the LSM view. Serializable.
 *
 * <p>A split planned at time {@code t} ({@link Snapshot#plannedAt()}) reads exactly its snapshot until
 * {@code t + gc.grace}, whatever merges, compactions and garbage collections run meanwhile: garbage
 * collection removes a file only {@code gc.grace} after it stopped being needed by new snapshots
 * (a base version once its successor is that old, a generation once the merge that folded it in is,
 * WAL entries and shard manifests once the seal or manifest that superseded them is). Later, the read
 * may fail with a {@link io.lancecontext.core.error.StorageException}; plan again, or hold the plan with
 * {@code ContextStore.holdRead} for as long as it is used.
 *
 * <p><b>Secrets stay on the reading side.</b> {@code storage.*} options (credentials, endpoints) are never
 * part of a split: {@link #config()} holds the store's other options only. The process that reads a split
 * supplies its own, in one of two equivalent ways:
 * <ul>
 *   <li>{@code ContextStore.openForSplit(split, storageOptions)}: opens (or shares, in this JVM) the store
 *       the split names with the split's options plus {@code storageOptions} (keys {@code storage.*}, as a
 *       Spark data source option map or a Flink table option map holds them; other keys are ignored), then
 *       {@code read(split)} on that handle. This is what an engine's split reader calls.</li>
 *   <li>{@code read(split)} on any handle the reading process opened itself on the same store.</li>
 * </ul>
 * Engines take {@code storageOptions} from the reading process's own configuration (Spark: the options
 * its reader factory was built from, or the executor's configuration; Flink: the table options the source
 * reader was created with), never from the serialized split.
 *
 * @param config the store's options, without {@code storage.*}
 * @param snapshot the snapshot all splits of the plan read
 * @param scan what to read (offset not allowed; a limit applies per split)
 * @param part which part of the view
 * @param fragments base fragments to read ({@link Part#BASE} only)
 * @param shards the MemWAL shards whose fresh tier to read, whole buckets ({@link Part#FRESH}, or {@link
 *     Part#ALL} confined to keys: the buckets they live in); null for every shard of the snapshot
 */
public record ReadSplit(StoreConfig config, Snapshot snapshot, ScanSpec scan, Part part,
    List<Integer> fragments, List<String> shards) implements Serializable {

  /** Which part of the LSM view a split reads. */
  public enum Part { ALL, BASE, FRESH }

  public ReadSplit {
    config = withoutStorageOptions(config);
    fragments = fragments == null ? null : List.copyOf(fragments);
    shards = shards == null ? null : List.copyOf(shards);
  }

  /** A split of every fresh shard ({@code FRESH}) or of some fragments ({@code BASE}). */
  public ReadSplit(StoreConfig config, Snapshot snapshot, ScanSpec scan, Part part, List<Integer> fragments) {
    this(config, snapshot, scan, part, fragments, null);
  }

  private static StoreConfig withoutStorageOptions(StoreConfig config) {
    if (config == null || config.storageOptions().isEmpty()) {
      return config;
    }
    Map<String, String> options = new LinkedHashMap<>(config.asMap());
    options.keySet().removeIf(k -> k.startsWith(StoreOptions.STORAGE_PREFIX));
    return StoreConfig.of(options);
  }

  /**
   * A snapshot, pinned: the base-table version, and per shard what its fresh tier held.
   *
   * @param baseVersion base-table version
   * @param shards shard id → pinned fresh tier
   * @param plannedAt when the plan was made: the split is readable until {@code plannedAt + gc.grace}
   */
  public record Snapshot(long baseVersion, Map<String, PinnedShard> shards, Instant plannedAt) implements Serializable {
    public Snapshot {
      shards = Map.copyOf(shards);
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
