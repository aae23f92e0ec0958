package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
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
 * A merge's deduplication: key → (input index << 32 | row offset) of its newest row across the merge's
 * inputs ({@link #winners}), and per input its rows and its tombstones (a key's first row in the input
 * counted). Read from the inputs' keys and write sequences only.
 */
record NewestRows(Map<String, Long> winners, long[] rows, long[] tombstones) {

  /**
   * The newest row of every key: the highest write sequence (the two lanes of a bucket interleave in
   * time); within one generation, the first row of a key (lance-core writes a memtable out newest-first;
   * lancecontext never writes a key twice into one generation).
   */
  static NewestRows of(SchemaSpec spec, List<MergeInput> inputs) throws IOException {
    Map<String, Long> winners = new HashMap<>();
    Map<String, Long> sequences = new HashMap<>();
    long[] rows = new long[inputs.size()];
    long[] tombstones = new long[inputs.size()];
    for (int i = 0; i < inputs.size(); i++) {
      boolean tombs = hasTombstones(inputs.get(i).dataset());
      Map<String, Long> local = new HashMap<>();
      Map<String, Long> localSeq = new HashMap<>();
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
            String k = new String(key.get(r), StandardCharsets.UTF_8);
            if (local.putIfAbsent(k, ((long) i << 32) | offset) == null) {
              long fixed = inputs.get(i).sequence();
              localSeq.put(k, fixed >= 0 ? fixed : seq.isNull(r) ? 0L : seq.get(r));
              if (tomb != null && !tomb.isNull(r) && tomb.get(r) != 0) {
                tombstones[i]++;
              }
            }
          }
          rows[i] += key.getValueCount();
        }
      } catch (Exception e) {
        throw LanceErrors.translate("read generation " + inputs.get(i).path(), e);
      }
      for (Map.Entry<String, Long> e : local.entrySet()) {
        long q = localSeq.get(e.getKey());
        Long best = sequences.get(e.getKey());
        if (best == null || q >= best) {
          winners.put(e.getKey(), e.getValue());
          sequences.put(e.getKey(), q);
        }
      }
    }
    return new NewestRows(winners, rows, tombstones);
  }

  /**
   * Whether a generation or part has the tombstone column: every one of a store with capability
   * {@code tombstones}, and the deletion parts of a replace on any store ({@code internal.write.DeletionParts}).
   */
  static boolean hasTombstones(LanceDataset input) {
    return input.hasColumn(SystemColumns.TOMBSTONE);
  }
}
