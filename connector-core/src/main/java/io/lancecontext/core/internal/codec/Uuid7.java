package io.lancecontext.core.internal.codec;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * UUID version 7 (RFC 9562 §5.7): 48-bit Unix milliseconds, version 7, 12-bit {@code rand_a}, variant
 * {@code 10}, 62-bit {@code rand_b}. Within one JVM the values are strictly increasing: {@code rand_a}
 * is used as a counter inside a millisecond (RFC 9562 §6.2, method 1), and the timestamp is borrowed
 * forward if the counter overflows. Thread-safe.
 */
public final class Uuid7 {
  private Uuid7() {}

  private static final Object LOCK = new Object();
  private static long lastMillis = -1;
  private static int counter;

  /** A new time-ordered UUIDv7. */
  public static UUID next() {
    long millis;
    int seq;
    synchronized (LOCK) {
      long now = System.currentTimeMillis();
      if (now > lastMillis) {
        lastMillis = now;
        // start low in the 12-bit space so a burst inside one millisecond rarely overflows
        counter = ThreadLocalRandom.current().nextInt(1 << 10);
      } else if (++counter > 0xFFF) {
        lastMillis++;
        counter = 0;
      }
      millis = lastMillis;
      seq = counter;
    }
    long msb = (millis & 0xFFFF_FFFF_FFFFL) << 16 | 0x7000L | (seq & 0xFFFL);
    long lsb = (ThreadLocalRandom.current().nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
    return new UUID(msb, lsb);
  }

  public static String nextString() {
    return next().toString();
  }

  /** The Unix millisecond timestamp embedded in a UUIDv7. */
  public static long timestampMillis(UUID uuid) {
    if (uuid.version() != 7) {
      throw new IllegalArgumentException("not a UUIDv7: " + uuid);
    }
    return uuid.getMostSignificantBits() >>> 16;
  }
}
