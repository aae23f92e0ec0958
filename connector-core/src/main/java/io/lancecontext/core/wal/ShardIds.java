package io.lancecontext.core.wal;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Bucket number → MemWAL shard id. Deterministic (a name-based UUID of the bucket number), so every
 * process routes a key to the same shard without coordination.
 */
public final class ShardIds {
  private ShardIds() {}

  public static String forBucket(int bucket) {
    return UUID.nameUUIDFromBytes(("lancecontext-bucket-" + bucket).getBytes(StandardCharsets.UTF_8)).toString();
  }
}
