package io.lancecontext.core.internal.lance;

/**
 * File names lance-core uses for numbered MemWAL files: the 64-bit position (or version) with its bits
 * reversed, written as 64 binary digits, plus an extension ({@code .arrow} for WAL entries,
 * {@code .binpb} for shard manifests). Temporary files share the directory and are not matched.
 */
public final class LogNames {
  private LogNames() {}

  public static final String WAL_SUFFIX = ".arrow";
  public static final String MANIFEST_SUFFIX = ".binpb";

  public static String name(long number, String suffix) {
    String bits = Long.toBinaryString(Long.reverse(number));
    return "0".repeat(64 - bits.length()) + bits + suffix;
  }

  /** The number a file name encodes, or -1 if the name is not exactly 64 binary digits plus {@code suffix}. */
  public static long number(String fileName, String suffix) {
    if (fileName.length() != 64 + suffix.length() || !fileName.endsWith(suffix)) {
      return -1;
    }
    for (int i = 0; i < 64; i++) {
      char c = fileName.charAt(i);
      if (c != '0' && c != '1') {
        return -1;
      }
    }
    return Long.reverse(Long.parseUnsignedLong(fileName.substring(0, 64), 2));
  }
}
