package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What one scan returns, resolved once for every tier it reads: the output columns, the filter
 * {@linkplain Predicates#normalize normalised} and joined with the lifecycle rule (the fresh tier's
 * filter), the same with the tombstone rule (the base table's), and the superseded keys to hide.
 */
public final class ScanRules {
  final SchemaSpec spec;
  final ScanSpec scan;
  final List<String> columns;
  /** The user's filter, normalised. */
  final Predicate filter;
  /** The filter and the lifecycle rule: what a fresh row must match. */
  final Predicate freshFilter;
  /** The fresh filter and "not a tombstone": what a base row must match. */
  final Predicate baseFilter;
  /** Keys a live record supersedes (empty unless capability supersession hides them). */
  final Set<String> superseded;
  /**
   * Whether the scan only counts: no output column, no filter (lifecycle rule included), nothing superseded, no
   * offset or limit. Such a read takes a base fragment's count from its key hashes when no fresh key can be in
   * it, and a fresh shard's from its map of newest rows, without reading either.
   */
  final boolean countOnly;

  ScanRules(SchemaSpec spec, LsmSnapshot snapshot, ScanSpec scan, BufferAllocator allocator) {
    this.spec = spec;
    this.scan = scan;
    this.columns = resolveColumns(spec, scan);
    Predicates.validate(spec, scan.filter());
    this.filter = Predicates.normalize(spec, scan.filter());
    Instant now = scan.now() == null ? Instant.now() : scan.now();
    Predicate visible = spec.has(Capability.LIFECYCLE) && !scan.includeExpired()
        ? Predicates.lifecycleVisible(spec, now) : Predicate.alwaysTrue();
    this.freshFilter = Predicate.and(filter, visible);
    this.baseFilter = Predicate.and(freshFilter, Predicates.notTombstone(spec));
    this.superseded = spec.has(Capability.SUPERSESSION) && !scan.includeSuperseded()
        ? snapshot.superseded(spec, allocator) : Set.of();
    this.countOnly = columns.isEmpty() && freshFilter instanceof Predicate.True && superseded.isEmpty()
        && !scan.hasLimit() && scan.offset() == 0;
  }

  /**
   * Whether a read of {@code scan} over a {@code spec} store only counts ({@link #countOnly}), whatever its snapshot:
   * a read of the whole view, of no column, without filter, limit or offset, of a store whose rows no lifecycle
   * rule or supersession hides (or one that reads those too).
   */
  public static boolean countsOnly(SchemaSpec spec, ScanSpec scan) {
    return scan.columns() != null && scan.columns().isEmpty() && !scan.incremental()
        && Predicates.normalize(spec, scan.filter()) instanceof Predicate.True
        && (!spec.has(Capability.LIFECYCLE) || scan.includeExpired())
        && (!spec.has(Capability.SUPERSESSION) || scan.includeSuperseded())
        && !scan.hasLimit() && scan.offset() == 0;
  }

  /** The columns a scan returns: the requested top-level columns, or every declared one. */
  static List<String> resolveColumns(SchemaSpec spec, ScanSpec scan) {
    if (scan.columns() == null) {
      return spec.columnNames();
    }
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (String c : scan.columns()) {
      Predicates.resolve(spec, c);
      if (c.contains(".")) {
        throw new SchemaException(c, "project top-level columns only");
      }
      if (!seen.add(c)) {
        throw new SchemaException(c, "is asked for twice; name each column once");
      }
    }
    return scan.columns();
  }

  boolean hasBlobs() {
    for (String c : columns) {
      if (spec.column(c).blob()) {
        return true;
      }
    }
    return false;
  }
}
