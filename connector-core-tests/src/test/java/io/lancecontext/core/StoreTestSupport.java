package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.MergeResult;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Small helpers shared by the store tests. */
final class StoreTestSupport {
  private StoreTestSupport() {}

  /** Runs {@code check} with the rows in the WAL tail, then in a generation, then in the base table. */
  static void inEveryTier(ContextStore store, Runnable check) {
    runIn("the WAL tail", check);
    store.seal();
    runIn("a generation", check);
    MergeResult r = store.merge();
    assertTrue(r.merged(), r.reason());
    runIn("the base table", check);
  }

  private static void runIn(String tier, Runnable check) {
    try {
      check.run();
    } catch (AssertionError e) {
      throw new AssertionError("with the rows in " + tier + ": " + e.getMessage(), e);
    }
  }

  @SafeVarargs
  static Map<String, Object> rec(Object... kv) {
    Map<String, Object> m = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  /** key → value of {@code column}, for the whole LSM view. */
  static Map<String, Object> view(ContextStore store, String column) {
    return view(store, column, ScanSpec.all());
  }

  /** Where the rows of a key are (base table, fresh tier), for failure messages. */
  static String diagnose(ContextStore store, String key) {
    StringBuilder sb = new StringBuilder();
    try (io.lancecontext.core.internal.read.LsmSnapshot snap = store.resident().snapshot(null)) {
      org.lance.Dataset base = snap.base().dataset().lance();
      sb.append("base v").append(base.version()).append(" rows with the key: ")
          .append(base.countRows(store.spec().key() + " = '" + key + "'"))
          .append(", fragments ").append(base.getFragments().size())
          .append(", watermarks ").append(snap.base().watermarks());
      snap.shards().values().forEach(s -> {
        var ref = s.newest().get(key);
        if (ref != null) {
          sb.append("; fresh in shard ").append(s.shardId()).append(": ").append(ref).append(" of ")
              .append(s.sources().stream().map(io.lancecontext.core.internal.read.FreshSource::id).toList());
        }
      });
      sb.append("; fresh keys ").append(snap.freshKeys().size());
    } catch (RuntimeException e) {
      sb.append("diagnosis failed: ").append(e);
    }
    return sb.toString();
  }

  static Map<String, Object> view(ContextStore store, String column, ScanSpec scan) {
    Map<String, Object> out = new TreeMap<>();
    String key = store.spec().key();
    List<Map<String, Object>> rows = store.scanRecords(scan.withColumns(List.of(key, column)));
    for (Map<String, Object> r : rows) {
      Object previous = out.put((String) r.get(key), r.get(column));
      if (previous != null || out.size() != rows.indexOf(r) + 1) {
        throw new AssertionError("key " + r.get(key) + " returned twice by one scan; " + diagnose(store, (String) r.get(key)));
      }
    }
    return out;
  }
}
