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
 * @param now the instant expiry is judged against; null for the time the scan starts
 */
public record ScanSpec(List<String> columns, Predicate filter, long offset, long limit, boolean includeSuperseded,
    boolean includeExpired, Instant now) implements Serializable {

  public ScanSpec {
    columns = columns == null ? null : List.copyOf(columns);
    filter = filter == null ? Predicate.alwaysTrue() : filter;
    if (offset < 0) {
      throw new IllegalArgumentException("offset must not be negative");
    }
  }

  public static ScanSpec all() {
    return new ScanSpec(null, null, 0, -1, false, false, null);
  }

  public ScanSpec withColumns(List<String> cols) {
    return new ScanSpec(cols, filter, offset, limit, includeSuperseded, includeExpired, now);
  }

  public ScanSpec withFilter(Predicate p) {
    return new ScanSpec(columns, p, offset, limit, includeSuperseded, includeExpired, now);
  }

  public ScanSpec withLimit(long l) {
    return new ScanSpec(columns, filter, offset, l, includeSuperseded, includeExpired, now);
  }

  public ScanSpec withOffset(long o) {
    return new ScanSpec(columns, filter, o, limit, includeSuperseded, includeExpired, now);
  }

  public ScanSpec withIncludeSuperseded(boolean include) {
    return new ScanSpec(columns, filter, offset, limit, include, includeExpired, now);
  }

  public ScanSpec withIncludeExpired(boolean include) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, include, now);
  }

  public ScanSpec withNow(Instant instant) {
    return new ScanSpec(columns, filter, offset, limit, includeSuperseded, includeExpired, Objects.requireNonNull(instant));
  }

  public boolean hasLimit() {
    return limit >= 0;
  }
}
