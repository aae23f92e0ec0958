package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * A merge's deduplication: for every key, where its newest row across the merge's inputs is ({@link #winner}:
 * input index << 32 | row offset), and per input its rows and its tombstones (a key's first row in the input
 * counted). Read from the inputs' keys and write sequences only, in one pass with one map look-up per row.
 */
final class NewestRows {
  /** A key's newest row so far: where it is, its write sequence, and the last input that had the key. */
  private static final class Slot {
    long where;
    long sequence;
    int lastInput = -1;
  }

  private final Map<String, Slot> slots;
  private final long[] rows;
  private final long[] tombstones;
  private final boolean passable;

  private NewestRows(Map<String, Slot> slots, long[] rows, long[] tombstones, boolean passable) {
    this.slots = slots;
    this.rows = rows;
    this.tombstones = tombstones;
    this.passable = passable;
  }

  /**
   * The newest row of every key: the highest write sequence (the two lanes of a bucket interleave in
   * time; on a tie the later input); within one input, the first row of a key (lance-core writes a memtable
   * out newest-first; lancecontext never writes a key twice into one generation or part).
   */
  static NewestRows of(SchemaSpec spec, List<MergeInput> inputs) throws IOException {
    long expected = 0;
    for (MergeInput in : inputs) {
      expected += in.dataset().countRows();
    }
    Map<String, Slot> slots = new HashMap<>((int) Math.min(expected * 4 / 3 + 16, 1 << 22));
    long[] rows = new long[inputs.size()];
    long[] tombstones = new long[inputs.size()];
    boolean passable = true;
    for (int i = 0; i < inputs.size(); i++) {
      boolean tombs = hasTombstones(inputs.get(i).dataset());
      long fixed = inputs.get(i).sequence();
      List<String> columns = tombs ? List.of(spec.key(), SystemColumns.SEQUENCE, SystemColumns.TOMBSTONE)
          : List.of(spec.key(), SystemColumns.SEQUENCE);
      try (ScanHandle scan = inputs.get(i).dataset().scan(ScanRequest.of(columns))) {
        ArrowReader reader = scan.reader();
        long offset = 0;
        while (reader.loadNextBatch()) {
          VectorSchemaRoot b = reader.getVectorSchemaRoot();
          VarCharVector key = (VarCharVector) b.getVector(spec.key());
          BigIntVector seq = (BigIntVector) b.getVector(SystemColumns.SEQUENCE);
          BitVector tomb = tombs ? (BitVector) b.getVector(SystemColumns.TOMBSTONE) : null;
          for (int r = 0; r < key.getValueCount(); r++, offset++) {
            byte[] utf8 = key.get(r);
            passable = passable && LanceSql.passableUtf8(utf8);
            Slot slot = slots.computeIfAbsent(new String(utf8, StandardCharsets.UTF_8), k -> new Slot());
            if (slot.lastInput == i) {
              continue;  // not the key's first row in this input
            }
            long q = fixed >= 0 ? fixed : seq.isNull(r) ? 0L : seq.get(r);
            if (slot.lastInput < 0 || q >= slot.sequence) {
              slot.where = ((long) i << 32) | offset;
              slot.sequence = q;
            }
            slot.lastInput = i;
            if (tomb != null && !tomb.isNull(r) && tomb.get(r) != 0) {
              tombstones[i]++;
            }
          }
          rows[i] += key.getValueCount();
        }
      } catch (Exception e) {
        throw LanceErrors.translate("read generation " + inputs.get(i).path(), e);
      }
    }
    return new NewestRows(slots, rows, tombstones, passable);
  }

  /** Where the newest row of {@code key} is (input index << 32 | row offset), or -1 if no input has the key. */
  long winner(String key) {
    Slot s = slots.get(key);
    return s == null ? -1 : s.where;
  }

  /** Whether every key of the inputs is {@link LanceSql#passable} (filter text can carry it). */
  boolean passable() {
    return passable;
  }

  /** Every key of the inputs. */
  java.util.Set<String> keys() {
    return slots.keySet();
  }

  /** Per input, how many keys have their newest row there. */
  long[] winsPerInput() {
    long[] wins = new long[rows.length];
    for (Slot s : slots.values()) {
      wins[(int) (s.where >>> 32)]++;
    }
    return wins;
  }

  /** Per input, its rows. */
  long[] rows() {
    return rows;
  }

  /** Per input, its tombstones (a key's first row in the input counted). */
  long[] tombstones() {
    return tombstones;
  }

  /**
   * Whether a generation or part has the tombstone column: every one of a store with capability
   * {@code tombstones}, and the deletion parts of a replace on any store ({@code internal.write.DeletionParts}).
   */
  static boolean hasTombstones(LanceDataset input) {
    return input.hasColumn(SystemColumns.TOMBSTONE);
  }
}
