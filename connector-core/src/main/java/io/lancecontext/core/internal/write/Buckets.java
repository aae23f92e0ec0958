package io.lancecontext.core.internal.write;

import java.nio.charset.StandardCharsets;

/**
 * The bucket of a key: Iceberg's bucket transform, {@code (murmur3_x86_32(utf8(key), seed 0) &
 * Integer.MAX_VALUE) % buckets}. Pure Java, so engines can cluster rows by bucket before writing (one
 * writing task per bucket means one writing JVM per shard) and any process routes a key to the same
 * shard. Spark's and Trino's {@code bucket} functions compute the same value for strings.
 */
public final class Buckets {
  private Buckets() {}

  public static int of(String key, int buckets) {
    byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
    return of(utf8, 0, utf8.length, buckets);
  }

  /** The bucket of the UTF-8 key in {@code bytes[offset, offset + length)}. */
  public static int of(byte[] bytes, int offset, int length, int buckets) {
    return (murmur3(bytes, offset, length) & Integer.MAX_VALUE) % buckets;
  }

  private static final java.lang.invoke.VarHandle INTS =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(int[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

  static int murmur3(byte[] data, int offset, int length) {
    final int c1 = 0xcc9e2d51;
    final int c2 = 0x1b873593;
    int h1 = 0;
    int i = offset;
    int end = offset + length;
    while (i + 4 <= end) {
      int k1 = (int) INTS.get(data, i);  // four bytes, little-endian, in one bounds-checked load
      k1 *= c1;
      k1 = Integer.rotateLeft(k1, 15);
      k1 *= c2;
      h1 ^= k1;
      h1 = Integer.rotateLeft(h1, 13);
      h1 = h1 * 5 + 0xe6546b64;
      i += 4;
    }
    int k1 = 0;
    int tail = end - i;
    if (tail == 3) {
      k1 ^= (data[i + 2] & 0xff) << 16;
    }
    if (tail >= 2) {
      k1 ^= (data[i + 1] & 0xff) << 8;
    }
    if (tail >= 1) {
      k1 ^= data[i] & 0xff;
      k1 *= c1;
      k1 = Integer.rotateLeft(k1, 15);
      k1 *= c2;
      h1 ^= k1;
    }
    h1 ^= length;
    h1 ^= h1 >>> 16;
    h1 *= 0x85ebca6b;
    h1 ^= h1 >>> 13;
    h1 *= 0xc2b2ae35;
    h1 ^= h1 >>> 16;
    return h1;
  }
}
