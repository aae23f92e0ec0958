package io.lancecontext.core.read;

import java.io.Serializable;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * What to read: columns (null = every declared column), a filter, offset/limit, and which records
 * hidden by the store's capabilities to show anyway. Tombstoned (deleted) keys are never returned.
 * Immutable and serializable, so engines can ship it with their splits.
 *
 * @param columns columns to return, in order; null for all declared columns
 * @param filter rows to keep
 * @param offset rows to skip
 * @param limit maximum rows to return (0 returns none); negative for no limit
 * @param includeSuperseded also return records another record supersedes ({@code supersession})
 * @param includeExpired also return retired or expired records ({@code lifecycle})
 * @param now the instant expiry is judged against; null for the time the scan starts (for a read at a snapshot,
 *     the time the snapshot was taken)
 * @param snapshot the snapshot to read: a token ({@link StoreSnapshot#token()}) or a tag name; null for the
 *     store as it is now
 * @param since with it, an incremental read ({@link #between}): only what changed after this snapshot (a token
 *     or a tag) and at or before {@code snapshot}; null for a read of the whole view
 */
public record ScanSpec(List<String> columns, Predicate filter, long offset, long limit, boolean includeSuperseded,
    boolean includeExpired, Instant now, String snapshot, String since) implements Serializable {

  /**
   * The column an incremental read with capability {@code tombstones} adds after the columns asked for: a
   * non-null boolean, {@code true} on a row reporting a key deleted between the two snapshots (that row holds
   * the key, if it is among the columns, and nulls elsewhere), {@code false} on a new or changed row.
   */
  public static final String DELETED = "_lc_deleted";

  public ScanSpec {
    columns = columns == null ? null : List.copyOf(columns);
    filter = filter == null ? Predicate.alwaysTrue() : filter;
    if (offset < 0) {
      throw new IllegalArgumentException("offset must not be negative");
    }
  }

  /** A read of the whole view at {@code snapshot} (not incremental). */
  public ScanSpec(List<String> columns, Predicate filter, long offset, long limit, boolean includeSuperseded,
      boolean includeExpired, Instant now, String snapshot) {
    this(columns, filter, offset, limit, includeSuperseded, includeExpired, now, snapshot, null);
  }

  /** A read of the store as it is now (no snapshot). */
  public ScanSpec(List<String> columns, Predicate filter, long offset, long limit, boolean includeSuperseded,
      boolean includeExpired, Instant now) {
    this(columns, filter, offset, limit, includeSuperseded, includeExpired, now, null);
  }

  public static ScanSpec all() {
    return new ScanSpec(null, null, 0, -1, false, false, null, null, null);
  }

  public ScanSpec withColumns(List<String> cols) {
    return new ScanSpec(cols, filter, offset, limit, includeSuperseded, includeExpired, now, snapshot, since);
  }

  public ScanSpec withFilter(Predicate p) {
    return new ScanSpec(columns, p, offset, limit, includeSuperseded, includeExpired, now, snapshot, since);
  }

  public ScanSpec withLimit(long l) {
    return new ScanSpec(columns, filter, offset, l, includeSuperseded, includeExpired, now, snapshot, since);
  }

  public ScanSpec withOffset(long o) {
    return new ScanSpec(columns, filter, o, limit, includeSuperseded, includeExpired, now, snapshot, since);
  }

  public ScanSpec withIncludeSuperseded(boolean include) {
    return new ScanSpec(columns, filter, offset, limit, include, includeExpired, now, snapshot, since);
  }

  public ScanSpec withIncludeExpired(boolean include) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, include, now, snapshot, since);
  }

  public ScanSpec withNow(Instant instant) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, includeExpired, Objects.requireNonNull(instant), snapshot, since);
  }

  /**
   * Reads the snapshot {@code tokenOrTag} names (a {@link StoreSnapshot#token()} or a tag) instead of the store
   * as it is now; null reads the store as it is now.
   */
  public ScanSpec atSnapshot(String tokenOrTag) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, includeExpired, now, tokenOrTag, since);
  }

  /**
   * An incremental read: the rows whose newest version at {@code toTokenOrTag} (null: the store as it is
   * now) is not the newest version they had at {@code fromTokenOrTag}: keys added and keys changed (upserted)
   * in between, each once, as it is at {@code to}. With capability {@code tombstones} every key deleted in
   * between (visible at {@code from}, deleted or gone at {@code to}) is reported too, as a row whose
   * {@link #DELETED} column is true. A version is the row a write made: a key rewritten with identical
   * content by a write whose rows carry no write sequence (a whole-appended transaction part) counts as
   * unchanged. The filter, the lifecycle rule and supersession apply to the rows at {@code to}; deleted keys
   * are reported whatever the filter. Both snapshots must be kept ({@code SnapshotNotFoundException}
   * otherwise) and {@code from} may not be later than {@code to}.
   */
  public ScanSpec between(String fromTokenOrTag, String toTokenOrTag) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, includeExpired, now, toTokenOrTag,
        Objects.requireNonNull(fromTokenOrTag, "fromTokenOrTag"));
  }

  /** Whether this is an incremental read ({@link #between}). */
  public boolean incremental() {
    return since != null;
  }

  public boolean hasLimit() {
    return limit >= 0;
  }
}
