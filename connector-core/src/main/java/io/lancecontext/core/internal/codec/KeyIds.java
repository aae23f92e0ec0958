package io.lancecontext.core.internal.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.UUID;

/**
 * The keys given to rows written without one. Without a seed: a random, time-ordered UUIDv7 per row.
 * With a seed: the name-based UUID (version 5, RFC 9562 §5.5) of the seed and the row's ordinal, so the
 * same seed and ordinal always give the same key: a retried task that writes the same rows in the same
 * order (same seed) writes the same keys, and its rows replace those of the failed attempt instead of
 * duplicating them. The name hashed is {@code utf8(seed) 0x00 ordinal} (the ordinal as 8 bytes, big
 * endian) in the namespace {@link #NAMESPACE}. Immutable and thread-safe.
 */
public final class KeyIds {
  /** The UUIDv5 namespace of seeded keys (the name-based UUID of "lancecontext.io/keyless-ids"). */
  public static final UUID NAMESPACE = UUID.nameUUIDFromBytes("lancecontext.io/keyless-ids".getBytes(StandardCharsets.UTF_8));

  private static final KeyIds RANDOM = new KeyIds(null);

  private final byte[] prefix;
  private final String seed;

  private KeyIds(String seed) {
    this.seed = seed;
    if (seed == null) {
      this.prefix = null;
    } else {
      byte[] s = seed.getBytes(StandardCharsets.UTF_8);
      ByteBuffer b = ByteBuffer.allocate(16 + s.length + 1);
      b.putLong(NAMESPACE.getMostSignificantBits()).putLong(NAMESPACE.getLeastSignificantBits()).put(s).put((byte) 0);
      this.prefix = b.array();
    }
  }

  /** Random UUIDv7 keys. */
  public static KeyIds random() {
    return RANDOM;
  }

  /** Keys derived from {@code seed} and each row's ordinal; a null seed gives {@link #random()}. */
  public static KeyIds seeded(String seed) {
    return seed == null ? RANDOM : new KeyIds(seed);
  }

  public boolean isSeeded() {
    return seed != null;
  }

  /** The key of the keyless row with this ordinal (ignored without a seed). */
  public String key(long ordinal) {
    if (seed == null) {
      return Uuid7.nextString();
    }
    return v5(ordinal).toString();
  }

  private UUID v5(long ordinal) {
    MessageDigest sha1;
    try {
      sha1 = MessageDigest.getInstance("SHA-1");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-1", e);
    }
    sha1.update(prefix);
    sha1.update(ByteBuffer.allocate(8).putLong(ordinal).array());
    byte[] h = sha1.digest();
    h[6] = (byte) ((h[6] & 0x0f) | 0x50);  // version 5
    h[8] = (byte) ((h[8] & 0x3f) | 0x80);  // variant 10
    ByteBuffer b = ByteBuffer.wrap(h, 0, 16);
    return new UUID(b.getLong(), b.getLong());
  }
}
