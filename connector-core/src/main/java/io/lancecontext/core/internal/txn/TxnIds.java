package io.lancecontext.core.internal.txn;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Names and places of transactions: {@code _lc/txn/<txid>/} holds the staged parts
 * ({@code b<bucket>/<part name>}, each a small Lance dataset) and the transaction's one decision, its
 * {@code record} (published or aborted, created once with put-if-not-exists). Each bucket also has a
 * pseudo MemWAL shard id whose merged watermark in the base table is the highest publish sequence of the
 * bucket merged into the base.
 */
public final class TxnIds {
  private TxnIds() {}

  public static final String ROOT = "_lc/txn";

  /** Overwritten by every publish (see {@link Transactions}); outside {@link #ROOT}, which holds transactions only. */
  public static final String PUBLISHED_MARKER = "_lc/txn-published";
  private static final Pattern VALID = Pattern.compile("(?:(?!\\.\\.)[A-Za-z0-9._-]){1,128}");
  /** A later attempt of a transaction: {@code <txid>..<n>} (see {@link #attempt}). */
  private static final Pattern ATTEMPT = Pattern.compile("((?:(?!\\.\\.)[A-Za-z0-9._-]){1,128})\\.\\.([1-9]\\d{0,5})");
  private static final Pattern PART = Pattern.compile("p(\\d{13})-[0-9a-f]{8}-\\d+-[0-9a-f]{8}");
  private static final Pattern LIVE = Pattern.compile("live-(\\d{13})-[0-9a-f]{8}");

  /**
   * @throws IllegalArgumentException unless {@code txid} is 1 to 128 characters of {@code [A-Za-z0-9._-]}
   *     without {@code ..} (reserved: {@code <txid>..<n>} names a later {@link #attempt})
   */
  public static void requireValid(String txid) {
    if (txid == null || !VALID.matcher(txid).matches() || txid.equals(".")) {
      throw new IllegalArgumentException("a transaction id is 1 to 128 characters of [A-Za-z0-9._-] without '..', "
          + "not '" + txid + "'");
    }
  }

  /** Whether {@code id} is a transaction's own id or one of its later attempts (a directory of this build). */
  public static boolean isTransactionDir(String id) {
    return (VALID.matcher(id).matches() && !id.equals(".")) || ATTEMPT.matcher(id).matches();
  }

  /**
   * Attempt {@code n} of transaction {@code txid}: {@code txid} itself for 0, else {@code <txid>..<n>}. A
   * transaction whose attempt expired (nobody renewed it within {@code txn.timeout}, see {@link TxnLiveness})
   * is staged and published again under its next attempt when its owner replays it: an expired record is
   * final, and the next attempt is a new directory with a record of its own.
   */
  public static String attempt(String txid, int n) {
    return n == 0 ? txid : txid + ".." + n;
  }

  /** The transaction an attempt id belongs to ({@code id} itself for attempt 0). */
  public static String transactionOf(String id) {
    var m = ATTEMPT.matcher(id);
    return m.matches() ? m.group(1) : id;
  }

  public static String dir(String txid) {
    return ROOT + "/" + txid;
  }

  public static String record(String txid) {
    return dir(txid) + "/record";
  }

  public static String bucketDir(String txid, int bucket) {
    return dir(txid) + "/b" + bucket;
  }

  public static String partDir(String txid, int bucket, String name) {
    return bucketDir(txid, bucket) + "/" + name;
  }

  /** A new, unique part name; it carries the time it was staged (for garbage collection). */
  public static String newPartName(String partId, int index, long nowMillis) {
    return String.format("p%013d-%08x-%d-%08x", nowMillis, partId.hashCode(), index,
        java.util.concurrent.ThreadLocalRandom.current().nextInt());
  }

  /** The time a part was staged, from its name; -1 if the name is not a part's. */
  public static long stagedAt(String name) {
    var m = PART.matcher(name);
    return m.matches() ? Long.parseLong(m.group(1)) : -1;
  }

  /** Whether {@code name} is a part name this build writes. */
  public static boolean isPartName(String name) {
    return PART.matcher(name).matches();
  }

  /**
   * A new liveness marker of {@code txid}: an empty object whose name carries the time until which its
   * owner keeps the transaction alive (garbage collection reads it from a listing, no object is read).
   */
  public static String newLiveMarker(String txid, long liveUntilMillis) {
    return dir(txid) + "/" + String.format("live-%013d-%08x", liveUntilMillis,
        java.util.concurrent.ThreadLocalRandom.current().nextInt());
  }

  /** The time until which a liveness marker keeps its transaction alive, from its name; -1 if not a marker's. */
  public static long liveUntil(String name) {
    var m = LIVE.matcher(name);
    return m.matches() ? Long.parseLong(m.group(1)) : -1;
  }

  /** The prefix of the transactions the bulk path publishes itself. */
  public static final String BULK_PREFIX = "bulk-";

  /** Whether {@code txid} is one the bulk path published itself (a user's transaction id may not start so). */
  public static boolean isBulk(String txid) {
    return txid.startsWith(BULK_PREFIX);
  }

  /** The pseudo shard whose merged watermark is the bucket's highest merged publish sequence. */
  public static String txnShardId(int bucket) {
    return UUID.nameUUIDFromBytes(("lancecontext-bucket-" + bucket + "-txn").getBytes(StandardCharsets.UTF_8))
        .toString();
  }
}
