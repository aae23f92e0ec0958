package io.lancecontext.core.internal.lance;

import java.util.ArrayList;
import java.util.List;

/**
 * One version of a MemWAL shard manifest ({@code _mem_wal/<shard>/manifest/*.binpb}), decoded. Field
 * numbers observed with lance-core 7.0.0: 1 version, 2 writer_epoch, 3 replay_after_wal_entry_position,
 * 4 wal_entry_position_last_seen, 6 current_generation, 8 repeated flushed_generations {1 generation,
 * 2 path}.
 *
 * <p>Without memtable rotation (lancecontext seals by closing the writer), every WAL entry at or below
 * {@link #replayAfter()} is contained in {@link #flushed()}, and no entry above it is.
 */
public record ShardManifest(long version, long writerEpoch, long replayAfter, long lastSeen, long currentGeneration,
    List<FlushedGeneration> flushed) {

  /** A sealed generation: its number and its directory name under the shard directory. */
  public record FlushedGeneration(long generation, String path) {}

  /** A shard nobody has written to yet. */
  public static ShardManifest empty() {
    return new ShardManifest(0, 0, 0, 0, 0, List.of());
  }

  static ShardManifest decode(byte[] bytes) {
    long version = 0;
    long epoch = 0;
    long replay = 0;
    long lastSeen = 0;
    long current = 0;
    List<FlushedGeneration> flushed = new ArrayList<>();
    for (Protobuf.Field f : Protobuf.parse(bytes)) {
      switch (f.number()) {
        case 1 -> version = f.varint();
        case 2 -> epoch = f.varint();
        case 3 -> replay = f.varint();
        case 4 -> lastSeen = f.varint();
        case 6 -> current = f.varint();
        case 8 -> {
          long g = 0;
          String path = null;
          for (Protobuf.Field x : Protobuf.parse(f.bytes())) {
            if (x.number() == 1) {
              g = x.varint();
            } else if (x.number() == 2) {
              path = new String(x.bytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
          }
          if (path == null) {
            throw new IllegalArgumentException("flushed generation " + g + " has no path");
          }
          flushed.add(new FlushedGeneration(g, path));
        }
        default -> {
          // fields lancecontext does not need (shard id, spec id, ...)
        }
      }
    }
    flushed.sort(java.util.Comparator.comparingLong(FlushedGeneration::generation));
    return new ShardManifest(version, epoch, replay, lastSeen, current, List.copyOf(flushed));
  }
}
