package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.testing.DocSnippets;
import io.lancecontext.core.testing.DocSnippets.Block;
import io.lancecontext.flink.table.FlinkOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;
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

  /**
   * Blocks {@code ```sql flink continuous} run in streaming mode; their last statement, a continuous query, returns its
   * first row (docs/flink.md's: {@code r2}) and is then cancelled.
   */
  @Test
  void flinkContinuousSqlExamplesReturnTheirFirstRow() throws Exception {
    List<Block> blocks = DocSnippets.blocks(DocSnippets.documents(), "sql flink continuous");
    assertFalse(blocks.isEmpty(), "docs/flink.md has a continuous example");
    for (Block b : blocks) {
      TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
      env.getConfig().set("parallelism.default", "1");
      List<String> statements = new ArrayList<>();
      for (String statement : b.codeIn(dir).split(";\\s*\\n")) {
        if (!statement.isBlank()) {
          statements.add(statement.strip().replaceAll(";$", ""));
        }
      }
      for (String statement : statements.subList(0, statements.size() - 1)) {
        try (CloseableIterator<Row> rows = env.executeSql(statement).collect()) {
          rows.forEachRemaining(r -> { });
        }
      }
      TableResult query = env.executeSql(statements.get(statements.size() - 1));
      try (CloseableIterator<Row> rows = query.collect()) {
        Row first = rows.next();
        if (b.file().endsWith("flink.md")) {
          assertEquals("r2", first.getField(0), b + ": " + first);
        }
      } finally {
        query.getJobClient().orElseThrow().cancel().get();
      }
    }
  }

  /** The connector's own table options are documented: docs/flink.md's table, and the scan options in docs/options.md. */
  @Test
  void flinkOptionsAreDocumented() throws Exception {
    String flink = Files.readString(Path.of("..", "docs", "flink.md"));
    String options = Files.readString(Path.of("..", "docs", "options.md"));
    for (ConfigOption<?> o : List.of(FlinkOptions.DELIVERY_GUARANTEE, FlinkOptions.BUFFER_FLUSH_INTERVAL,
        FlinkOptions.SCAN_SNAPSHOT, FlinkOptions.SCAN_MODE, FlinkOptions.SCAN_DISCOVERY_INTERVAL, FlinkOptions.SCAN_SINCE)) {
      assertTrue(flink.contains("| `" + o.key() + "` |"), "docs/flink.md lacks a row for " + o.key());
      if (o.key().startsWith("scan.")) {
        Object value = o.hasDefaultValue() ? o.defaultValue() : null;
        String def = value == null ? "(none)" : "`" + (value instanceof java.time.Duration d
            ? org.apache.flink.util.TimeUtils.formatWithHighestUnit(d) : value) + "`";
        assertTrue(options.contains("| `" + o.key() + "` | " + def + " |"),
            "docs/options.md lacks or differs for " + o.key() + ": expected its default " + def);
      }
    }
  }
}
