package io.lancecontext.core.internal.write;

import java.nio.charset.StandardCharsets;

/** Test access to the raw hash. */
public final class BucketsTestAccess {
  private BucketsTestAccess() {}

  public static int murmur3(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    return Buckets.murmur3(b, 0, b.length);
  }
}
