package io.lancecontext.core.internal.write;

/**
 * A growing set of {@code long}s without boxing (open addressing, linear probing): the key hashes of a staged
 * bucket, of an open generation, of a group of puts.
 */
final class LongSet {
  private long[] slots;
  private boolean hasZero;
  private int size;

  /** Room for {@code expected} values before it grows. */
  LongSet(int expected) {
    slots = new long[Integer.highestOneBit(Math.max(8, expected) * 2 - 1) << 1];
  }

  /** Adds {@code v}; false if it was there already. */
  boolean add(long v) {
    if (v == 0) {
      boolean added = !hasZero;
      hasZero = true;
      size += added ? 1 : 0;
      return added;
    }
    if ((size + 1) * 2 > slots.length) {
      grow();
    }
    if (!insert(slots, v)) {
      return false;
    }
    size++;
    return true;
  }

  /** Whether {@code v} is in the set. */
  boolean contains(long v) {
    return v == 0 ? hasZero : slots[slot(slots, v)] == v;
  }

  /** Whether any of {@code values} is in the set. */
  boolean containsAny(long[] values) {
    for (long v : values) {
      if (contains(v)) {
        return true;
      }
    }
    return false;
  }

  /** Adds every one of {@code values}. */
  void addAll(long[] values) {
    for (long v : values) {
      add(v);
    }
  }

  /** Empties the set (keeping its room, unless it grew past {@code 1 << 16} slots). */
  void clear() {
    if (slots.length > 1 << 16) {
      slots = new long[16];
    } else {
      java.util.Arrays.fill(slots, 0L);
    }
    hasZero = false;
    size = 0;
  }

  int size() {
    return size;
  }

  private static boolean insert(long[] slots, long v) {
    int i = slot(slots, v);
    if (slots[i] == v) {
      return false;
    }
    slots[i] = v;
    return true;
  }

  /** The slot holding {@code v} (not 0), or the empty slot where it would go. */
  private static int slot(long[] slots, long v) {
    int mask = slots.length - 1;
    int i = (int) (v ^ (v >>> 32)) * 0x9e3779b9 & mask;
    while (slots[i] != 0 && slots[i] != v) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private void grow() {
    long[] bigger = new long[slots.length * 2];
    for (long v : slots) {
      if (v != 0) {
        insert(bigger, v);
      }
    }
    slots = bigger;
  }
}
