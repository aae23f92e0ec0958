package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.flink.search.TextSearchFunction;
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

/**
 * {@code LATERAL TABLE(lc_vector_search(v))} and {@code LATERAL TABLE(lc_text_search(text))}: each query row gets the
 * store's nearest or best-matching rows, rows added a moment ago included.
 */
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

  @Test
  void eachQueryTextGetsTheBestMatchingRowsOfTheStore() throws Exception {
    String path = dir.resolve("notes").toString();
    Map<String, String> options = Map.of("path", path, "schema", "context", "schema.embedding-dim", "2");
    try (ContextStore store = ContextStore.open(options)) {
      store.add(List.of(Map.of("id", "n1", "text_payload", "tool error: retry"),
          Map.of("id", "n2", "text_payload", "plan accepted"),
          Map.of("id", "n3", "text_payload", "tool timeout"), Map.of("id", "n4", "text_payload", "error error")));
      store.flush();
      store.delete(List.of("n4"));  // deleted a moment ago: never found
      store.add(List.of(Map.of("id", "n2", "text_payload", "plan rejected: tool error")));  // a newer version
    }
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.createTemporarySystemFunction("lc_text_search",
        new TextSearchFunction(options, "text_payload", 2, List.of("id", "text_payload")));
    List<String> out = new ArrayList<>();
    // q3 holds no term, q4 is null: nothing found for them (the left join keeps them), and the job goes on
    try (CloseableIterator<Row> it = env.executeSql("SELECT q.qid, s.id, s.text_payload, s._score > 0 FROM (VALUES "
        + "('q1', 'Tool ERROR'), ('q2', 'accepted plan'), ('q3', ' -- !'), ('q4', CAST(NULL AS STRING))) AS q(qid, t) "
        + "LEFT JOIN LATERAL TABLE(lc_text_search(q.t)) AS s ON TRUE").collect()) {
      it.forEachRemaining(r -> out.add(r.toString()));
    }
    out.sort(null);
    assertEquals(List.of("+I[q1, n1, tool error: retry, true]", "+I[q1, n2, plan rejected: tool error, true]",
        "+I[q2, n2, plan rejected: tool error, true]", "+I[q3, null, null, null]", "+I[q4, null, null, null]"), out);
    env.createTemporarySystemFunction("lc_text_search_n3", new TextSearchFunction(options, "text_payload", 5,
        List.of("id")).withFilter(Predicate.compare("id", Predicate.Op.EQ, "n3")));
    List<String> filtered = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql("SELECT q.qid, s.id FROM (VALUES ('q1', 'tool error')) AS q(qid, t), "
        + "LATERAL TABLE(lc_text_search_n3(q.t)) AS s").collect()) {
      it.forEachRemaining(r -> filtered.add(r.toString()));
    }
    assertEquals(List.of("+I[q1, n3]"), filtered);
    SchemaException e = assertThrows(SchemaException.class, () -> new TextSearchFunction(options, "embedding", 1));
    assertTrue(e.getMessage().contains("embedding") && e.getMessage().contains("string column"), e.getMessage());
  }
}
