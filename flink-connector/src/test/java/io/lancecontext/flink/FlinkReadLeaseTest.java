package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.flink.source.LanceContextSource;
import io.lancecontext.flink.source.LanceContextSplit;
import io.lancecontext.flink.source.PendingSplits;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Flink scan's plan stays readable while its enumerator runs, and after a restore from its checkpoint:
 * splits read long after {@code gc.grace}, while maintenance rewrote and collected every tier they read,
 * return exactly the planned snapshot.
 */
class FlinkReadLeaseTest {
  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static void write(ContextStore store, int round, int keys) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      rows.add(Map.of("id", "k" + i, "reward", (double) (round * 100 + i)));
    }
    store.add(rows);
    store.seal();
    store.merge();
  }

  @SuppressWarnings("unchecked")
  private static SplitEnumeratorContext<LanceContextSplit> context() {
    return (SplitEnumeratorContext<LanceContextSplit>) Proxy.newProxyInstance(FlinkReadLeaseTest.class.getClassLoader(),
        new Class<?>[] {SplitEnumeratorContext.class}, (proxy, method, args) ->
            method.getName().equals("currentParallelism") ? 2 : null);
  }

  private static Map<String, Object> read(List<LanceContextSplit> splits) {
    Map<String, Object> out = new TreeMap<>();
    try (ContextStore store = ContextStore.open(Map.of("path", splits.get(0).split().config().uri()))) {
      for (LanceContextSplit s : splits) {
        try (StoreReader r = store.read(s.split())) {
          r.records().forEach(row -> out.put((String) row.get("id"), row.get("reward")));
        }
      }
    }
    return out;
  }

  @Test
  void aRestoredEnumeratorsSplitsReadTheirSnapshotAfterMaintenanceCollectedEveryTier() throws Exception {
    Map<String, String> options = new HashMap<>(Map.of("path", dir.resolve("lease").toString(), "schema", "rollout",
        "schema.embedding-dim", "2", "gc.grace", "1s", "merge.trigger.interval", "1d"));
    Map<String, Object> expected = new TreeMap<>();
    try (ContextStore store = ContextStore.open(options)) {
      write(store, 0, 40);
      store.add(List.of(Map.of("id", "k3", "reward", -3.0)));
      store.seal();                                             // an unmerged generation
      store.add(List.of(Map.of("id", "k4", "reward", -4.0)));  // the WAL tail
      store.scanRecords(ScanSpec.all().withColumns(List.of("id", "reward")))
          .forEach(r -> expected.put((String) r.get("id"), r.get("reward")));
    }
    LanceContextSource source = LanceContextSource.builder().options(options).build();
    SplitEnumerator<LanceContextSplit, PendingSplits> enumerator = source.createEnumerator(context());
    enumerator.start();
    byte[] checkpoint = new PendingSplits.Serializer().serialize(enumerator.snapshotState(1));
    enumerator.close();  // the job fails; its enumerator is restored from the checkpoint
    PendingSplits restoredState = new PendingSplits.Serializer().deserialize(new PendingSplits.Serializer().getVersion(), checkpoint);
    SplitEnumerator<LanceContextSplit, PendingSplits> restored = source.restoreEnumerator(context(), restoredState);
    restored.start();
    try (ContextStore store = ContextStore.open(options)) {
      for (int round = 1; round <= 3; round++) {
        write(store, round, 60);
      }
      store.compact();
      Thread.sleep(2_500);  // gc.grace and the shard views' manifest recheck, past
      store.gc();
    }
    ContextStore.closeAllResident();  // nothing cached in this JVM serves the reads below
    assertEquals(expected, read(restoredState.splits()));
    restored.close();
  }
}
