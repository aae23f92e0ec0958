package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A count-only read of the fresh tier counts each bucket from its lanes' own maps of newest rows: the same keys in
 * both lanes of a bucket (a repeated key moves the bucket to its other lane), tombstones newer and older than rows
 * in the other lane, counted whole and split by split as an engine reads it, against a model and a full scan.
 */
class FreshCountTest {
  /** Deletes by key, no expiry (with it a count reads the rows' expiry instead of counting). */
  private static final String SPEC = "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},"
      + "{\"name\":\"reward\",\"type\":\"float64\"}],\"capabilities\":[\"tombstones\"]}";

  @TempDir
  static Path dir;

  @AfterAll
  static void close() {
    ContextStore.closeAllResident();
  }

  private static List<Map<String, Object>> rows(int from, int to, int value) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(Map.of("id", "k" + i, "reward", (double) value));
    }
    return out;
  }

  @Test
  void countsOfKeysInBothLanesWithTombstonesAgreeWithAModelWholeAndBySplit() {
    Map<String, Integer> model = new TreeMap<>();
    try (ContextStore store = ContextStore.open(Map.of("path", dir.resolve("s").toString(), "schema", SPEC,
        "shards", "3", "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d"))) {
      int value = 0;
      int[][] steps = {{0, 400}, {0, 200}, {100, 300}, {350, 500}, {0, 50}};
      for (int[] s : steps) {
        store.add(rows(s[0], s[1], ++value));  // repeated keys: each bucket moves to its other lane
        rows(s[0], s[1], value).forEach(r -> model.put((String) r.get("id"), 0));
        List<String> deleted = new ArrayList<>();
        for (int i = s[0] + value; i < s[1]; i += 7) {
          deleted.add("k" + i);
          model.remove("k" + i);
        }
        store.delete(deleted);
        assertEquals(model.size(), store.count(), "count after step " + value);
        assertEquals(model.size(), store.scanRecords(ScanSpec.all().withColumns(List.of("id"))).size(),
            "full scan after step " + value);
        ReadPlan plan = store.planRead(ScanSpec.all().withColumns(List.of()), 4);
        long bySplit = 0;
        for (ReadSplit split : plan.splits()) {
          try (StoreReader reader = store.read(split)) {
            while (reader.next()) {
              bySplit += reader.batch().getRowCount();
            }
          }
        }
        assertEquals(model.size(), bySplit, "count split by split after step " + value + " (" + plan.splits().size()
            + " splits)");
      }
      assertEquals(0, store.stats().baseRows(), "nothing merged: every row counted is fresh");
    }
  }
}
