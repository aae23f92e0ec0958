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

/** Every {@code ```sql flink} example of the README and {@code docs/} runs as pasted, statement by statement. */
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

  @Test
  void flinkSqlExamplesRunAsPasted() throws Exception {
    List<Block> blocks = DocSnippets.blocks(DocSnippets.documents(), "sql flink");
    assertFalse(blocks.isEmpty(), "docs/flink.md has an example");
    for (Block b : blocks) {
      TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
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
        assertEquals(1, last.size(), "the example's SELECT returns r2 only: " + last);
        assertEquals("r2", last.get(0).getField(0));
      }
    }
  }
}
