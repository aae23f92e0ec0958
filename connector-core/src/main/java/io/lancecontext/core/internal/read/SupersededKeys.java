package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HashMap;
import java.util.Map;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * The keys that live records supersede ({@code supersession} capability): the {@code supersedes}
 * values of the newest, non-deleted row of every key. Only newest rows count, so a record that stops
 * naming a key (or is deleted) makes it visible again.
 */
final class SupersededKeys {
  private SupersededKeys() {}

  static final String COLUMN = "supersedes";

  static Set<String> compute(SchemaSpec spec, LsmSnapshot snapshot, BufferAllocator allocator) {
    Set<String> out = new HashSet<>();
    Set<String> fresh = snapshot.freshKeys();
    for (String[] row : snapshot.base().superseding(spec)) {
      if (!fresh.contains(row[0])) {
        out.add(row[1]);
      }
    }
    try {
      if (!snapshot.shards().isEmpty()) {
        snapshot.winners();  // one map for the look-ups below (see FreshScan)
      }
      for (FreshShard shard : snapshot.shards().values()) {
        collectFresh(spec, snapshot, shard, out);
      }
    } catch (Exception e) {
      throw LanceErrors.translate("find superseded records", e);
    }
    return out;
  }

  /** The key and {@code supersedes} value of every live base row that names one. */
  static List<String[]> readBase(SchemaSpec spec, LanceDataset dataset) {
    List<String[]> out = new ArrayList<>();
    String filter = LanceSql.render(Predicate.and(Predicate.isNotNull(COLUMN), Predicates.notTombstone(spec))).orElseThrow();
    ScanRequest request = ScanRequest.of(List.of(spec.key(), COLUMN)).filter(filter);
    try (ScanHandle scan = dataset.scan(request)) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot b = reader.getVectorSchemaRoot();
        VarCharVector key = (VarCharVector) b.getVector(spec.key());
        VarCharVector sup = (VarCharVector) b.getVector(COLUMN);
        for (int r = 0; r < b.getRowCount(); r++) {
          out.add(new String[] {new String(key.get(r), StandardCharsets.UTF_8), new String(sup.get(r), StandardCharsets.UTF_8)});
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("find superseded records", e);
    }
    return List.copyOf(out);
  }

  private static void collectFresh(SchemaSpec spec, LsmSnapshot snapshot, FreshShard shard, Set<String> out)
      throws Exception {
    for (int s = 0; s < shard.sources().size(); s++) {
      FreshSource source = shard.sources().get(s);
      if (source instanceof WalSource w) {
        List<VectorSchemaRoot> batches = w.entry().batches();
        for (int b = 0; b < batches.size(); b++) {
          VectorSchemaRoot batch = batches.get(b);
          VarCharVector key = FreshShard.keyVector(batch);
          VarCharVector sup = (VarCharVector) batch.getVector(COLUMN);
          for (int r = 0; r < batch.getRowCount(); r++) {
            if (sup.isNull(r)) {
              continue;  // most rows name no key: no key decoded, no winner looked up
            }
            LsmSnapshot.Winner win = snapshot.winner(new String(key.get(r), StandardCharsets.UTF_8));
            if (win.is(shard, s, b, r) && !win.ref().tombstone()) {
              out.add(new String(sup.get(r), StandardCharsets.UTF_8));
            }
          }
        }
      } else {
        GenerationSource g = (GenerationSource) source;
        for (Map.Entry<Integer, String> e : g.superseding(gen -> readGeneration(spec, gen)).entrySet()) {
          LsmSnapshot.Winner win = snapshot.winner(g.keys()[e.getKey()]);
          if (win.is(shard, s, 0, e.getKey()) && !win.ref().tombstone()) {
            out.add(e.getValue());
          }
        }
      }
    }
  }

  /** The rows of a generation naming a superseded key: row offset → that key. */
  private static Map<Integer, String> readGeneration(SchemaSpec spec, GenerationSource g) {
    Map<Integer, String> out = new HashMap<>();
    ScanRequest request = ScanRequest.of(List.of(COLUMN)).withRowId(true).filter(LanceSql.column(COLUMN) + " IS NOT NULL");
    try (ScanHandle scan = g.dataset().scan(request)) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot batch = reader.getVectorSchemaRoot();
        VarCharVector sup = (VarCharVector) batch.getVector(COLUMN);
        var rowIds = batch.getVector(RowIds.ROW_ID);
        for (int r = 0; r < batch.getRowCount(); r++) {
          out.put((int) RowIds.get(rowIds, r), new String(sup.get(r), StandardCharsets.UTF_8));
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("find superseded records", e);
    }
    return Map.copyOf(out);
  }
}
