package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.flink.search.VectorSearchFunction;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code LATERAL TABLE(lc_vector_search(v))}: each query row gets the store's nearest rows, rows added a moment ago included. */
class FlinkSearchTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(1);

  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  @Test
  void eachQueryRowGetsTheNearestRowsOfTheStore() throws Exception {
    String path = dir.resolve("memory").toString();
    Map<String, String> options = Map.of("path", path, "schema", "context", "schema.embedding-dim", "2");
    try (ContextStore store = ContextStore.open(options)) {
      store.add(List.of(Map.of("id", "east", "embedding", new float[] {1f, 0f}, "text_payload", "e"),
          Map.of("id", "north", "embedding", new float[] {0f, 1f}, "text_payload", "n"),
          Map.of("id", "west", "embedding", new float[] {-1f, 0f}, "text_payload", "w")));
      store.flush();
      store.delete(List.of("west"));  // deleted a moment ago: never found
      store.add(List.of(Map.of("id", "north", "embedding", new float[] {0f, -1f}, "text_payload", "south now")));
    }
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.createTemporarySystemFunction("lc_vector_search",
        new VectorSearchFunction(options, "embedding", 1, List.of("id", "text_payload")));
    List<String> out = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql("SELECT q.qid, s.id, s.text_payload FROM (VALUES "
        + "('q1', ARRAY[CAST(0.9 AS FLOAT), CAST(0.1 AS FLOAT)]), ('q2', ARRAY[CAST(-1 AS FLOAT), CAST(0 AS FLOAT)]), "
        + "('q3', ARRAY[CAST(0 AS FLOAT), CAST(-1 AS FLOAT)])) AS q(qid, v), LATERAL TABLE(lc_vector_search(q.v)) AS s")
        .collect()) {
      it.forEachRemaining(r -> out.add(r.toString()));
    }
    out.sort(null);
    assertEquals(List.of("+I[q1, east, e]", "+I[q2, north, south now]", "+I[q3, north, south now]"), out);
    // with a prefilter: the nearest row whose text_payload is 'e', whatever the query
    env.createTemporarySystemFunction("lc_vector_search_e", new VectorSearchFunction(options, "embedding", 1,
        List.of("id", "text_payload")).withFilter(Predicate.compare("text_payload", Predicate.Op.EQ, "e")));
    List<String> filtered = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql("SELECT q.qid, s.id FROM (VALUES ('q3', ARRAY[CAST(0 AS FLOAT), "
        + "CAST(-1 AS FLOAT)])) AS q(qid, v), LATERAL TABLE(lc_vector_search_e(q.v)) AS s").collect()) {
      it.forEachRemaining(r -> filtered.add(r.toString()));
    }
    assertEquals(List.of("+I[q3, east]"), filtered);
    SchemaException e = assertThrows(SchemaException.class, () -> new VectorSearchFunction(options, "text_payload", 1));
    assertTrue(e.getMessage().contains("text_payload"), e.getMessage());
  }
}
