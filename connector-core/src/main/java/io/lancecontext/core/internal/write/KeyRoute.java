package io.lancecontext.core.internal.write;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;

/**
 * A batch's rows as every write takes them, staged or put: deduplicated by key (the last row of a key wins) and
 * routed to their buckets, straight from the key column's UTF-8 bytes. The keys' bytes are copied once per batch; no
 * {@code String} is made per key. Each winning row also gets a 64-bit hash of its key (murmur3 and a second hash
 * taken eight bytes at a step), with which a {@link StagingBuffer} notices a key that comes again in a later batch of
 * its bucket, and a lane a key that comes again in its open generation (a collision only writes a part or seals a
 * generation sooner). Rows losing to a later row of their key are dropped exactly: equal hashes are confirmed byte
 * by byte.
 */
final class KeyRoute {
  private KeyRoute() {}

  /** One bucket's winning rows of a batch, in batch order, their keys' hashes, and how many are tombstones. */
  record Bucket(int bucket, int[] rows, long[] keyHashes, int deletes) {}

  /** The buckets (of {@code buckets}) with winning rows, ascending, among the first {@code n} keys (none null). */
  static List<Bucket> of(VarCharVector keys, BitVector tombstone, int n, int buckets) {
    ArrowBuf offsets = keys.getOffsetBuffer();
    int first = offsets.getInt(0);
    int[] off = new int[n + 1];
    for (int r = 0; r <= n; r++) {
      off[r] = offsets.getInt((long) r * VarCharVector.OFFSET_WIDTH) - first;
    }
    byte[] bytes = new byte[off[n]];
    keys.getDataBuffer().getBytes(first, bytes);
    int[] murmur = new int[n];
    int[] bucketOf = new int[n];
    int[] table = new int[Integer.highestOneBit(Math.max(2, n) * 2 - 1) << 1];  // row + 1; 0 is empty
    int mask = table.length - 1;
    for (int r = 0; r < n; r++) {
      int h = Buckets.murmur3(bytes, off[r], off[r + 1] - off[r]);
      murmur[r] = h;
      bucketOf[r] = (h & Integer.MAX_VALUE) % buckets;
      int slot = (h ^ (h >>> 16)) & mask;
      while (true) {
        int other = table[slot] - 1;
        if (other < 0) {
          table[slot] = r + 1;
          break;
        }
        if (murmur[other] == h && sameKey(bytes, off, other, r)) {
          table[slot] = r + 1;
          bucketOf[other] = -1;  // a later row of this batch has the same key
          break;
        }
        slot = (slot + 1) & mask;
      }
    }
    int[] rowCount = new int[buckets];
    int[] deleteCount = new int[buckets];
    for (int r = 0; r < n; r++) {
      int b = bucketOf[r];
      if (b >= 0) {
        rowCount[b]++;
        if (StoreWrites.isTombstone(tombstone, r)) {
          deleteCount[b]++;
        }
      }
    }
    int[][] rowsOf = new int[buckets][];
    long[][] hashesOf = new long[buckets][];
    int[] filled = new int[buckets];
    for (int b = 0; b < buckets; b++) {
      rowsOf[b] = new int[rowCount[b]];
      hashesOf[b] = new long[rowCount[b]];
    }
    for (int r = 0; r < n; r++) {
      int b = bucketOf[r];
      if (b >= 0) {
        int i = filled[b]++;
        rowsOf[b][i] = r;
        hashesOf[b][i] = (long) murmur[r] << 32 | (second(bytes, off[r], off[r + 1]) & 0xffffffffL);
      }
    }
    List<Bucket> out = new ArrayList<>();
    for (int b = 0; b < buckets; b++) {
      if (rowCount[b] > 0) {
        out.add(new Bucket(b, rowsOf[b], hashesOf[b], deleteCount[b]));
      }
    }
    return out;
  }

  private static boolean sameKey(byte[] bytes, int[] off, int a, int b) {
    return java.util.Arrays.equals(bytes, off[a], off[a + 1], bytes, off[b], off[b + 1]);
  }

  private static final java.lang.invoke.VarHandle LONGS =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

  /**
   * A second hash of {@code bytes[from, to)}, eight bytes at a step: the low half of a key's 64-bit hash (murmur3 is
   * the high half).
   */
  private static int second(byte[] bytes, int from, int to) {
    long h = 0x9E3779B97F4A7C15L ^ (to - from);
    int i = from;
    for (; i + 8 <= to; i += 8) {
      h = Long.rotateLeft(h ^ (long) LONGS.get(bytes, i) * 0xC2B2AE3D27D4EB4FL, 31) * 0x9E3779B97F4A7C15L;
    }
    for (; i < to; i++) {
      h = (h ^ (bytes[i] & 0xff)) * 0x100000001B3L;
    }
    h ^= h >>> 29;
    h *= 0xBF58476D1CE4E5B9L;
    h ^= h >>> 32;
    return (int) h;
  }
}
