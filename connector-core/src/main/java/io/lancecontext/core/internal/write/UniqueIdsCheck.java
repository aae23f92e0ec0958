package io.lancecontext.core.internal.write;

import io.lancecontext.core.error.UniqueKeyViolationException;
import io.lancecontext.core.internal.codec.RecordCodec;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
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

  /**
   * The check over a whole batch before anything is put: fails if a key of the rows {@code rowsOf} names (the
   * winning row of each key, per bucket) exists with other content. Tombstone rows are not checked.
   */
  void rejectExisting(VectorSchemaRoot batch, List<int[]> rowsOf, BitVector tombstone) {
    int[] rows = rowsOf.stream().flatMapToInt(java.util.Arrays::stream).sorted().toArray();
    rejectExisting(batch, rows, tombstone, false);
  }

  /**
   * The binding check of one bucket's part (dataset schema, one row per key) under its writer's lock: fails if
   * a key of it exists with other content. A stored row equal to the one being added is not a violation: it
   * is this add, retried after it failed unacknowledged. Tombstone rows are not checked.
   *
   * @param otherBuckets whether the call that wrote this part has rows in other buckets too
   */
  void rejectExisting(VectorSchemaRoot part, boolean otherBuckets) {
    BitVector tombstone = StoreWrites.tombstones(spec, part);
    int[] rows = new int[part.getRowCount()];
    for (int r = 0; r < rows.length; r++) {
      rows[r] = r;
    }
    rejectExisting(part, rows, tombstone, otherBuckets);
  }

  private void rejectExisting(VectorSchemaRoot batch, int[] rows, BitVector tombstone, boolean otherBuckets) {
    VarCharVector keyVector = (VarCharVector) batch.getVector(spec.key());
    List<String> keys = new ArrayList<>(rows.length);
    List<Integer> rowOfKey = new ArrayList<>(rows.length);
    for (int r : rows) {
      if (!StoreWrites.isTombstone(tombstone, r)) {
        keys.add(new String(keyVector.get(r), StandardCharsets.UTF_8));
        rowOfKey.add(r);
      }
    }
    Map<String, Map<String, Object>> existing = existing(keys);
    if (existing.isEmpty()) {
      return;
    }
    List<String> clashing = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      Map<String, Object> stored = existing.get(keys.get(i));
      if (stored != null && !sameRecord(stored, codec.decodeRow(batch, rowOfKey.get(i)))) {
        clashing.add(keys.get(i));
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
