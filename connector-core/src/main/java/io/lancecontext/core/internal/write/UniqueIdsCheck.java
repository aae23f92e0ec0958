package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.UniqueKeyViolationException;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Capability {@code unique-ids}: an add of a key that exists with other content fails
 * ({@link UniqueKeyViolationException}) before its rows are put; a stored row equal to the one being added is
 * this add retried after it failed unacknowledged, not a violation. The write path runs it twice: over the
 * whole batch first (fail fast, nothing written), then per bucket under its writer's lock right before the put
 * (the binding check: no other add of these keys in this JVM lands in between).
 */
final class UniqueIdsCheck {
  private final SchemaSpec spec;
  private final RecordCodec codec;
  private final StoreWrites.Reads reads;
  private final String uri;

  UniqueIdsCheck(SchemaSpec spec, RecordCodec codec, StoreWrites.Reads reads, String uri) {
    this.spec = spec;
    this.codec = codec;
    this.reads = reads;
    this.uri = uri;
  }

  /** {@link #rejectExisting(VectorSchemaRoot, Collection, boolean)} for the rows {@code lastRow} maps keys to. */
  void rejectExisting(VectorSchemaRoot batch, Map<String, Integer> lastRow, BitVector tombstone) {
    List<String> keys = new ArrayList<>();
    for (var e : lastRow.entrySet()) {
      if (!StoreWrites.isTombstone(tombstone, e.getValue())) {
        keys.add(e.getKey());
      }
    }
    Map<String, Map<String, Object>> existing = existing(keys);
    if (existing.isEmpty()) {
      return;
    }
    List<String> clashing = new ArrayList<>();
    for (String k : keys) {
      Map<String, Object> stored = existing.get(k);
      if (stored != null && !sameRecord(stored, codec.decodeRow(batch, lastRow.get(k)))) {
        clashing.add(k);
      }
    }
    throwIfAny(clashing, false);
  }

  /**
   * Capability {@code unique-ids}: fails if a key of {@code batch} (dataset schema, one row per key)
   * exists with other content. A stored row equal to the one being added is not a violation: it is this
   * add, retried after it failed unacknowledged. Tombstone rows are not checked.
   */
  void rejectExisting(VectorSchemaRoot batch, Collection<String> keys, boolean otherBuckets) {
    Map<String, Map<String, Object>> existing = existing(keys);
    if (existing.isEmpty()) {
      return;
    }
    BitVector tombstone = spec.has(Capability.TOMBSTONES) ? (BitVector) batch.getVector(SystemColumns.TOMBSTONE) : null;
    List<Map<String, Object>> rows = codec.decode(batch);
    List<String> clashing = new ArrayList<>();
    for (int r = 0; r < rows.size(); r++) {
      if (StoreWrites.isTombstone(tombstone, r)) {
        continue;
      }
      Map<String, Object> row = rows.get(r);
      String k = (String) row.get(spec.key());
      Map<String, Object> stored = existing.get(k);
      if (stored != null && !sameRecord(stored, row)) {
        clashing.add(k);
      }
    }
    throwIfAny(clashing, otherBuckets);
  }

  private void throwIfAny(List<String> clashing, boolean otherBuckets) {
    if (clashing.isEmpty()) {
      return;
    }
    throw new UniqueKeyViolationException("capability unique-ids: " + clashing.size()
        + " key(s) already exist in " + uri + " with other content: " + clashing.stream().limit(10).toList()
        + (clashing.size() > 10 ? " ..." : "") + "; " + (otherBuckets
        ? "their rows were not written (rows of this call in other shards may have been)" : "nothing was written"),
        clashing);
  }

  /** The stored records of those {@code keys} that exist (deleted keys do not; expired ones do). */
  private Map<String, Map<String, Object>> existing(Collection<String> keys) {
    Map<String, Map<String, Object>> out = new HashMap<>();
    if (keys.isEmpty()) {
      return out;
    }
    for (Map<String, Object> r : reads.lookup(new ArrayList<>(keys), spec.columnNames(), true, Instant.now())) {
      out.put((String) r.get(spec.key()), r);
    }
    return out;
  }

  /** Whether two decoded records hold the same values (arrays and nested values compared by content). */
  static boolean sameRecord(Object a, Object b) {
    if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
      Set<Object> names = new HashSet<>(ma.keySet());
      names.addAll(mb.keySet());
      for (Object n : names) {
        if (!sameRecord(ma.get(n), mb.get(n))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof List<?> la && b instanceof List<?> lb) {
      if (la.size() != lb.size()) {
        return false;
      }
      for (int i = 0; i < la.size(); i++) {
        if (!sameRecord(la.get(i), lb.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a == null && b instanceof byte[] bytes || b == null && a instanceof byte[] bytes2) {
      return (a == null ? (byte[]) b : (byte[]) a).length == 0;  // an empty blob is stored as null
    }
    return java.util.Objects.deepEquals(a, b);
  }
}
