package io.lancecontext.core.internal.store;

import io.lancecontext.core.error.SnapshotNotFoundException;
import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.read.ReadSplit;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A pinned snapshot ({@link ReadSplit.Snapshot}) as a short string and back: {@code lc.} followed by URL-safe
 * base64 of variable-length numbers (format version, bucket count, base version, the time it was taken, and per
 * pinned shard its index among the store's shards, watermark, manifest version and WAL positions or transaction
 * sequences, delta-coded). Shards are named by index, not by their 36-character ids, so a token of a
 * four-bucket store with a few WAL entries per lane takes about 60 characters.
 */
public final class SnapshotTokens {
  /** What every token starts with; a tag name cannot. */
  public static final String PREFIX = "lc.";
  private static final int FORMAT = 1;

  private SnapshotTokens() {}

  public static boolean isToken(String s) {
    return s.startsWith(PREFIX);
  }

  /** The token of {@code pinned}, a snapshot of a store with {@code buckets} buckets. */
  public static String encode(ReadSplit.Snapshot pinned, int buckets) {
    Map<String, Integer> index = indexOf(buckets);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    put(out, FORMAT);
    put(out, buckets);
    put(out, pinned.baseVersion());
    put(out, pinned.plannedAt().getEpochSecond());
    put(out, pinned.plannedAt().getNano());
    put(out, pinned.shards().size());
    java.util.TreeMap<Integer, ReadSplit.PinnedShard> byIndex = new java.util.TreeMap<>();  // one token per snapshot
    pinned.shards().forEach((id, p) -> {
      Integer i = index.get(id);
      if (i == null) {
        throw new IllegalStateException("shard " + id + " is not one of a " + buckets + "-bucket store's");
      }
      byIndex.put(i, p);
    });
    for (var e : byIndex.entrySet()) {
      int i = e.getKey();
      ReadSplit.PinnedShard p = e.getValue();
      put(out, i);
      put(out, p.watermark());
      put(out, p.manifestVersion());
      put(out, p.walPositions().size());
      long previous = 0;
      for (long position : p.walPositions()) {
        put(out, zigzag(position - previous));
        previous = position;
      }
    }
    return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(out.toByteArray());
  }

  /**
   * The snapshot {@code token} names, for a store with {@code buckets} buckets at {@code uri}.
   *
   * @throws SnapshotNotFoundException if it is not a token, or one of a store with another bucket count
   */
  public static ReadSplit.Snapshot decode(String token, int buckets, String uri) {
    ByteBuffer in;
    try {
      in = ByteBuffer.wrap(Base64.getUrlDecoder().decode(token.substring(PREFIX.length())));
    } catch (IllegalArgumentException | StringIndexOutOfBoundsException e) {
      throw notAToken(token, uri);
    }
    try {
      if (get(in) != FORMAT) {
        throw notAToken(token, uri);
      }
      long tokenBuckets = get(in);
      if (tokenBuckets != buckets) {
        throw new SnapshotNotFoundException("snapshot token " + token + " is of a store with " + tokenBuckets
            + " shards, not of the store at " + uri + " (" + buckets + " shards)");
      }
      long baseVersion = get(in);
      Instant plannedAt = Instant.ofEpochSecond(get(in), get(in));
      List<String> ids = ids(buckets);
      long count = get(in);
      Map<String, ReadSplit.PinnedShard> shards = new LinkedHashMap<>();
      for (long n = 0; n < count; n++) {
        long i = get(in);
        if (i < 0 || i >= ids.size()) {
          throw notAToken(token, uri);
        }
        long watermark = get(in);
        long manifestVersion = get(in);
        long positions = get(in);
        List<Long> walPositions = new ArrayList<>();
        long previous = 0;
        for (long k = 0; k < positions; k++) {
          previous += unzigzag(get(in));
          walPositions.add(previous);
        }
        shards.put(ids.get((int) i), new ReadSplit.PinnedShard(watermark, manifestVersion, walPositions));
      }
      if (in.hasRemaining()) {
        throw notAToken(token, uri);
      }
      return new ReadSplit.Snapshot(baseVersion, shards, plannedAt);
    } catch (java.nio.BufferUnderflowException | java.time.DateTimeException e) {
      throw notAToken(token, uri);
    }
  }

  private static SnapshotNotFoundException notAToken(String token, String uri) {
    return new SnapshotNotFoundException("'" + token + "' is not a snapshot token of the store at " + uri
        + " (tokens are what ContextStore.snapshot() returns)");
  }

  /** The store's shards in token order: every lane of every bucket, then every bucket's transaction shard. */
  private static List<String> ids(int buckets) {
    List<String> ids = new ArrayList<>(ShardIds.all(buckets));
    for (int b = 0; b < buckets; b++) {
      ids.add(TxnIds.txnShardId(b));
    }
    return ids;
  }

  private static Map<String, Integer> indexOf(int buckets) {
    List<String> ids = ids(buckets);
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < ids.size(); i++) {
      index.put(ids.get(i), i);
    }
    return index;
  }

  private static long zigzag(long v) {
    return (v << 1) ^ (v >> 63);
  }

  private static long unzigzag(long v) {
    return (v >>> 1) ^ -(v & 1);
  }

  /** An unsigned variable-length number (7 bits per byte; negative values are not written). */
  private static void put(ByteArrayOutputStream out, long v) {
    if (v < 0) {
      throw new IllegalArgumentException("negative " + v);
    }
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static long get(ByteBuffer in) {
    long v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      byte b = in.get();
      v |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
    throw new java.nio.BufferUnderflowException();
  }
}
