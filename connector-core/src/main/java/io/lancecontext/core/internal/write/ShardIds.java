package io.lancecontext.core.internal.write;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Bucket (and lane) → MemWAL shard id. Deterministic (name-based UUIDs), so every process routes a key to
 * the same shards without coordination. Each bucket has {@value #LANES} lanes, i.e. two MemWAL shards
 * written in turn: while one lane's generation is sealed (a slow flush) the other takes the puts, and
 * the rows of a key in both lanes are ordered by their write sequence ({@code _lc_seq}).
 */
public final class ShardIds {
  private ShardIds() {}

  public static final int LANES = 2;

  public static String forLane(int bucket, int lane) {
    String name = lane == 0 ? "lancecontext-bucket-" + bucket : "lancecontext-bucket-" + bucket + "-lane-" + lane;
    return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
  }

  /** The shards of one bucket, lane 0 first. */
  public static List<String> forBucket(int bucket) {
    List<String> out = new ArrayList<>(LANES);
    for (int lane = 0; lane < LANES; lane++) {
      out.add(forLane(bucket, lane));
    }
    return out;
  }

  /** Every shard of a store with {@code buckets} buckets, bucket by bucket. */
  public static List<String> all(int buckets) {
    List<String> out = new ArrayList<>(buckets * LANES);
    for (int b = 0; b < buckets; b++) {
      out.addAll(forBucket(b));
    }
    return out;
  }
}
