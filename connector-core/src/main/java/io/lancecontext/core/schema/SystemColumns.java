package io.lancecontext.core.schema;

import java.util.List;
import java.util.Locale;

/** Names lancecontext and Lance reserve; user columns may not use them. */
public final class SystemColumns {
  private SystemColumns() {}

  /**
   * The tombstone sentinel: a bool system column present in stores with the {@code tombstones}
   * capability; {@code true} marks a row that deletes its key.
   */
  public static final String TOMBSTONE = "_lc_tombstone";

  /**
   * The write sequence: an int64 the store stamps on every row it writes, increasing per bucket (a
   * hybrid clock: microseconds since the epoch, or one more than the previous value). Orders the rows
   * of a key across the two lanes of its bucket; every dataset has it.
   */
  public static final String SEQUENCE = "_lc_seq";

  /** Prefix of every lancecontext system column. */
  public static final String SYSTEM_PREFIX = "_lc_";

  /** Exact names Lance gives to virtual columns in scans and searches. */
  public static final List<String> RESERVED_NAMES =
      List.of("_rowid", "_rowaddr", "_rowoffset", "_distance", "_score", "_memtable_gen", TOMBSTONE, SEQUENCE);

  /** Name prefixes reserved by Lance's MemWAL, Lance itself and lancecontext. */
  public static final List<String> RESERVED_PREFIXES = List.of("_mem_wal", "_lance", SYSTEM_PREFIX);

  /** Why {@code name} is reserved, or null if it is free to use (compared case-insensitively). */
  public static String reservation(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    if (RESERVED_NAMES.contains(lower)) {
      return lower.equals(TOMBSTONE) ? "is the tombstone sentinel" : "is a Lance system column";
    }
    for (String prefix : RESERVED_PREFIXES) {
      if (lower.startsWith(prefix)) {
        return "starts with the reserved prefix '" + prefix + "'";
      }
    }
    return null;
  }
}
