package io.lancecontext.core.internal.read;

import java.util.Arrays;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.VarCharVector;

/**
 * An immutable set of 64-bit key hashes: sorted, with a directory on their top bits so that a membership
 * test reads one directory slot and about four hashes (one or two cache lines) instead of a binary
 * search's twenty scattered reads. A lookup of 200 keys tests every fragment of the base, so the test is
 * the inner loop (a binary search per key and fragment was half of a polling reader's Java time). About
 * 9-10 bytes per hash (8 for the hash, up to 2 for the directory), plus 4 when it keeps the row offset of each
 * hash in its fragment (then a lookup by key takes its rows without searching for them).
 */
public final class KeyHashSet {
  /** Hashes per directory slot, on average. */
  private static final int PER_SLOT = 4;

  private final long[] hashes;
  /** The row offset of each hash ({@code offsets[i]} goes with {@code hashes[i]}); null when not kept. */
  private final int[] offsets;
  /** {@code starts[s]..starts[s+1]} are the hashes of slot {@code s}. */
  private final int[] starts;
  private final int shift;

  /** Takes ownership of {@code hashes} (any order, duplicates allowed). */
  KeyHashSet(long[] hashes) {
    this(hashes, null);
  }

  /**
   * Takes ownership of {@code hashes} (any order, duplicates allowed) and of {@code offsets} (null for none): the
   * row offset in its fragment of the row whose key hash is {@code hashes[i]}.
   */
  KeyHashSet(long[] hashes, int[] offsets) {
    int n = hashes.length;
    int bits = 1;
    while (bits < 30 && (1L << bits) * PER_SLOT < n) {
      bits++;
    }
    this.shift = 64 - bits;
    this.starts = new int[(1 << bits) + 1];
    for (long h : hashes) {
      starts[slot(h) + 1]++;
    }
    for (int s = 1; s < starts.length; s++) {
      starts[s] += starts[s - 1];
    }
    // into slot order (a counting sort on the top bits), then each slot (about PER_SLOT hashes) sorted in place
    long[] sorted = new long[n];
    int[] sortedOffsets = offsets == null ? null : new int[n];
    int[] next = Arrays.copyOf(starts, starts.length - 1);
    for (int i = 0; i < n; i++) {
      int at = next[slot(hashes[i])]++;
      sorted[at] = hashes[i];
      if (offsets != null) {
        sortedOffsets[at] = offsets[i];
      }
    }
    for (int s = 0; s + 1 < starts.length; s++) {
      for (int i = starts[s] + 1; i < starts[s + 1]; i++) {
        long h = sorted[i];
        int o = offsets == null ? 0 : sortedOffsets[i];
        int j = i - 1;
        for (; j >= starts[s] && sorted[j] > h; j--) {
          sorted[j + 1] = sorted[j];
          if (offsets != null) {
            sortedOffsets[j + 1] = sortedOffsets[j];
          }
        }
        sorted[j + 1] = h;
        if (offsets != null) {
          sortedOffsets[j + 1] = o;
        }
      }
    }
    this.hashes = sorted;
    this.offsets = sortedOffsets;
  }

  /**
   * The slot of {@code h}: its top bits read as unsigned after flipping the sign bit, which keeps the slots
   * in the order of a signed sort.
   */
  private int slot(long h) {
    return (int) ((h ^ Long.MIN_VALUE) >>> shift);
  }

  boolean contains(long h) {
    int s = slot(h);
    for (int i = starts[s], end = starts[s + 1]; i < end; i++) {
      if (hashes[i] == h) {
        return true;
      }
    }
    return false;
  }

  /** Whether it keeps the row offset of each hash ({@link #offsetsOf}). */
  boolean hasOffsets() {
    return offsets != null;
  }

  /** Hands the row offset of each hash equal to {@code h} to {@code out}; none without offsets. */
  void offsetsOf(long h, java.util.function.IntConsumer out) {
    if (offsets == null) {
      return;
    }
    int s = slot(h);
    for (int i = starts[s], end = starts[s + 1]; i < end; i++) {
      if (hashes[i] == h) {
        out.accept(offsets[i]);
      }
    }
  }

  /** Whether any of {@code wanted} is in the set. */
  boolean containsAny(long[] wanted) {
    for (long w : wanted) {
      if (contains(w)) {
        return true;
      }
    }
    return false;
  }

  /** Whether this set and {@code other} share a hash (the smaller one's hashes are tested against the larger). */
  boolean intersects(KeyHashSet other) {
    KeyHashSet small = size() <= other.size() ? this : other;
    KeyHashSet large = small == this ? other : this;
    for (long h : small.hashes) {
      if (large.contains(h)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A 64-bit hash of a key's UTF-8 bytes {@code utf8[0..length)} (FNV-1a, then MurmurHash3's finalizer to
   * spread the bits, which the directory's top-bit slots need).
   */
  public static long hash(byte[] utf8, int length) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < length; i++) {
      h = (h ^ (utf8[i] & 0xff)) * 0x100000001b3L;
    }
    return spread(h);
  }

  /**
   * The hash ({@link #hash(byte[], int)}) of the UTF-8 bytes of {@code key}'s value at {@code row}, read in place: eight
   * bytes at a load (one bounds check each), taken in their order.
   */
  public static long hash(VarCharVector key, int row) {
    ArrowBuf data = key.getDataBuffer();
    long i = key.getStartOffset(row);
    long end = key.getEndOffset(row);
    long h = 0xcbf29ce484222325L;
    if (LITTLE_ENDIAN) {
      for (; i + 8 <= end; i += 8) {
        long word = data.getLong(i);  // byte i in the low eight bits
        for (int shift = 0; shift < 64; shift += 8) {
          h = (h ^ ((word >>> shift) & 0xff)) * 0x100000001b3L;
        }
      }
    }
    for (; i < end; i++) {
      h = (h ^ (data.getByte(i) & 0xff)) * 0x100000001b3L;
    }
    return spread(h);
  }

  private static final boolean LITTLE_ENDIAN = java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN;

  /** MurmurHash3's finalizer over an FNV-1a hash. */
  private static long spread(long h) {
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }

  /** The hash of {@code key}'s UTF-8 bytes ({@link #hash(byte[], int)}). */
  public static long hash(String key) {
    byte[] utf8 = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return hash(utf8, utf8.length);
  }

  /** The hashes of {@code keys}, in iteration order. */
  static long[] hashes(java.util.Collection<String> keys) {
    long[] out = new long[keys.size()];
    int n = 0;
    for (String k : keys) {
      out[n++] = hash(k);
    }
    return out;
  }

  int size() {
    return hashes.length;
  }

  /** Bytes held. */
  long bytes() {
    return 8L * hashes.length + (offsets == null ? 0 : 4L * offsets.length) + 4L * starts.length + 40;
  }
}
