package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.result.FlushResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.StoreTest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * {@link ContextStore#merge()} seals first, and {@link ContextStore#flush()} leaves every acknowledged row in
 * the base table, as a plain lance-core {@link Dataset} reads it (no lancecontext read path).
 */
class FlushTest extends StoreTest {
  /** Options that keep rows where a test puts them: no background seal or merge during the test. */
  private Map<String, String> options(String name, String preset) {
    return options(dir, name, preset, "merge.trigger.generations", "1000", "merge.trigger.interval", "1h",
        "write.idle-timeout", "1h");
  }

  private static Map<String, Object> row(String key, String intColumn, int value) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put(intColumn, value);
    return r;
  }

  private static List<Map<String, Object>> rows(String prefix, int n, String intColumn, int value) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(row(prefix + i, intColumn, value));
    }
    return out;
  }

  /** key → int column, read with lance-core alone; fails on a key present twice. */
  static Map<String, Integer> readBaseWithLance(String path, String intColumn) throws Exception {
    Map<String, Integer> out = new TreeMap<>();
    try (BufferAllocator allocator = new RootAllocator();
        Dataset ds = Dataset.open(path, allocator);
        LanceScanner scanner = ds.newScan(new ScanOptions.Builder().columns(List.of("id", intColumn)).build());
        ArrowReader reader = scanner.scanBatches()) {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot b = reader.getVectorSchemaRoot();
        VarCharVector id = (VarCharVector) b.getVector("id");
        IntVector v = (IntVector) b.getVector(intColumn);
        for (int i = 0; i < b.getRowCount(); i++) {
          String k = new String(id.get(i), StandardCharsets.UTF_8);
          Integer previous = out.put(k, v.isNull(i) ? null : v.get(i));
          assertTrue(previous == null, "key " + k + " twice in the base table");
        }
      }
    }
    return out;
  }

  @Test
  void mergeOnAStoreWhoseRowsAreAllInTheWalTailMergesThem() throws Exception {
    Map<String, String> o = options("wal-only", "rollout");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(rows("w", 300, "sequence_order", 7));
      MergeResult r = store.merge();
      assertTrue(r.merged(), r::toString);
      assertEquals(300, r.rows());
      assertEquals(0, store.stats().freshRows(), "nothing is left outside the base table");
      assertEquals(300, store.count());
    }
    Map<String, Integer> base = readBaseWithLance(o.get("path"), "sequence_order");
    assertEquals(300, base.size());
    assertTrue(base.values().stream().allMatch(v -> v == 7));
  }

  @Test
  void flushLeavesEveryAcknowledgedRowOfEveryTierInTheBaseTableAndNoDeletedKey() throws Exception {
    Map<String, String> o = options("tiers", "context");
    Map<String, Integer> expected = new TreeMap<>();
    try (ContextStore store = ContextStore.open(o)) {
      store.add(rows("base-", 200, "token_count", 1));           // base table
      store.merge();
      store.add(rows("gen-", 150, "token_count", 2));            // a flushed generation
      store.add(rows("base-", 50, "token_count", 3));            // updates of base rows, in the generation
      store.seal();
      store.add(rows("wal-", 120, "token_count", 4));            // the WAL tail
      store.add(rows("gen-", 30, "token_count", 5));             // updates of generation rows, in the WAL tail
      List<String> deleted = new ArrayList<>();
      for (int i = 190; i < 200; i++) {
        deleted.add("base-" + i);                                // deletes of base rows
      }
      deleted.add("gen-149");                                    // of a generation row
      deleted.add("wal-119");                                    // of a WAL-tail row
      store.delete(deleted);
      for (int i = 0; i < 200; i++) {
        expected.put("base-" + i, i < 50 ? 3 : 1);
      }
      for (int i = 0; i < 150; i++) {
        expected.put("gen-" + i, i < 30 ? 5 : 2);
      }
      for (int i = 0; i < 120; i++) {
        expected.put("wal-" + i, 4);
      }
      deleted.forEach(expected::remove);

      FlushResult r = store.flush();
      assertTrue(r.complete(), r::toString);
      assertEquals(12, r.tombstonesPurged(), r::toString);
      assertEquals(0, store.stats().freshRows(), "nothing is left outside the base table");
      assertEquals(expected.size(), store.count(), "the store's own view is unchanged");
    }
    assertEquals(expected, readBaseWithLance(o.get("path"), "token_count"));
  }

  @Test
  void flushClaimsTheShardsAnotherProcessHoldsAndThatProcessKeepsWriting() throws Exception {
    Map<String, String> o = options("cross", "rollout");
    try (ContextStore ignored = ContextStore.open(o)) {
      // created here; the child writes it
    }
    ContextStore.closeAllResident();
    Map<String, Integer> expected = new TreeMap<>();
    try (ChildJvm child = ChildJvm.start(Holder.class, dir.resolve("holder.log"), o.get("path"))) {
      assertEquals("ready", child.readLine(), child::tail);
      assertEquals("ack", child.ask("add c- 400 11"), child::tail);  // rows in the child's unsealed WAL tails
      try (ContextStore store = ContextStore.open(o)) {
        for (int i = 0; i < 400; i++) {
          expected.put("c-" + i, 11);
        }
        FlushResult r = store.flush();
        assertTrue(r.complete(), r::toString);
        assertTrue(r.claimedShards() >= 2, "the child's shards (2 buckets) were claimed: " + r);
        assertEquals(expected, readBaseWithLance(o.get("path"), "sequence_order"));

        // the fenced child claims its shards back and keeps writing
        assertEquals("ack", child.ask("add c2- 50 13"), child::tail);
        for (int i = 0; i < 50; i++) {
          expected.put("c2-" + i, 13);
        }
        assertEquals(expected.size(), store.count());
        assertTrue(store.flush().complete());
      }
      assertEquals(expected, readBaseWithLance(o.get("path"), "sequence_order"));
      child.send("exit");
      assertEquals(0, child.waitFor(60), child::tail);
    }
  }

  /**
   * A child process that holds its shard writers open: {@code add <prefix> <n> <value>} adds rows and
   * answers {@code ack} (or the error), {@code exit} closes the store.
   */
  public static final class Holder {
    public static void main(String[] args) throws Exception {
      PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
      Map<String, String> o = Map.of("path", args[0], "merge.trigger.generations", "1000", "merge.trigger.interval", "1h",
          "write.idle-timeout", "1h");
      try (ContextStore store = ContextStore.open(o);
          BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        out.println("ready");
        String line;
        while ((line = in.readLine()) != null) {
          String[] p = line.split(" ");
          if (p[0].equals("exit")) {
            break;
          }
          try {
            store.add(rows(p[1], Integer.parseInt(p[2]), "sequence_order", Integer.parseInt(p[3])));
            out.println("ack");
          } catch (RuntimeException e) {
            out.println("error " + e);
          }
        }
      }
      ContextStore.closeAllResident();
    }
  }
}
