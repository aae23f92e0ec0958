package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.testing.DocSnippets;
import io.lancecontext.core.testing.DocSnippets.Block;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```sql flink} (batch mode) and {@code ```sql flink streaming} (streaming mode) example of the README
 * and {@code docs/} runs as pasted, statement by statement.
 */
class FlinkDocsTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(2);

  @TempDir
  Path dir;

  /** Before the test's folder is deleted: a resident writer must not find its store gone. */
  @AfterEach
  void closeStores() {
    ContextStore.closeAllResident();
  }

  /** Blocks {@code ```sql flink} run in batch mode, {@code ```sql flink streaming} in streaming mode. */
  @Test
  void flinkSqlExamplesRunAsPasted() throws Exception {
    List<Block> batch = DocSnippets.blocks(DocSnippets.documents(), "sql flink");
    List<Block> streaming = DocSnippets.blocks(DocSnippets.documents(), "sql flink streaming");
    assertFalse(batch.isEmpty(), "docs/flink.md has a batch example");
    assertFalse(streaming.isEmpty(), "docs/flink.md has a streaming example");
    List<Block> blocks = new ArrayList<>(batch);
    blocks.addAll(streaming);
    for (Block b : blocks) {
      TableEnvironment env = TableEnvironment.create(streaming.contains(b) ? EnvironmentSettings.inStreamingMode()
          : EnvironmentSettings.inBatchMode());
      List<Row> last = new ArrayList<>();
      for (String statement : b.codeIn(dir).split(";\\s*\\n")) {
        if (statement.isBlank()) {
          continue;
        }
        TableResult result = env.executeSql(statement.strip().replaceAll(";$", ""));
        last.clear();
        try (CloseableIterator<Row> rows = result.collect()) {
          rows.forEachRemaining(last::add);
        }
      }
      if (b.file().endsWith("flink.md")) {
        assertEquals(1, last.size(), b + ": the example's SELECT returns r2 only: " + last);
        assertEquals("r2", last.get(0).getField(0), b.toString());
      }
    }
  }
}
