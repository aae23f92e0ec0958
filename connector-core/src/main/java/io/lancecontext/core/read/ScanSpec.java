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
 */
public record ScanSpec(List<String> columns, Predicate filter, long offset, long limit, boolean includeSuperseded,
    boolean includeExpired, Instant now, String snapshot) implements Serializable {

  public ScanSpec {
    columns = columns == null ? null : List.copyOf(columns);
    filter = filter == null ? Predicate.alwaysTrue() : filter;
    if (offset < 0) {
      throw new IllegalArgumentException("offset must not be negative");
    }
  }

  /** A read of the store as it is now (no snapshot). */
  public ScanSpec(List<String> columns, Predicate filter, long offset, long limit, boolean includeSuperseded,
      boolean includeExpired, Instant now) {
    this(columns, filter, offset, limit, includeSuperseded, includeExpired, now, null);
  }

  public static ScanSpec all() {
    return new ScanSpec(null, null, 0, -1, false, false, null, null);
  }

  public ScanSpec withColumns(List<String> cols) {
    return new ScanSpec(cols, filter, offset, limit, includeSuperseded, includeExpired, now, snapshot);
  }

  public ScanSpec withFilter(Predicate p) {
    return new ScanSpec(columns, p, offset, limit, includeSuperseded, includeExpired, now, snapshot);
  }

  public ScanSpec withLimit(long l) {
    return new ScanSpec(columns, filter, offset, l, includeSuperseded, includeExpired, now, snapshot);
  }

  public ScanSpec withOffset(long o) {
    return new ScanSpec(columns, filter, o, limit, includeSuperseded, includeExpired, now, snapshot);
  }

  public ScanSpec withIncludeSuperseded(boolean include) {
    return new ScanSpec(columns, filter, offset, limit, include, includeExpired, now, snapshot);
  }

  public ScanSpec withIncludeExpired(boolean include) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, include, now, snapshot);
  }

  public ScanSpec withNow(Instant instant) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, includeExpired, Objects.requireNonNull(instant), snapshot);
  }

  /**
   * Reads the snapshot {@code tokenOrTag} names (a {@link StoreSnapshot#token()} or a tag) instead of the store
   * as it is now; null reads the store as it is now.
   */
  public ScanSpec atSnapshot(String tokenOrTag) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, includeExpired, now, tokenOrTag);
  }

  public boolean hasLimit() {
    return limit >= 0;
  }
}
