package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.testing.DocSnippets;
import io.lancecontext.core.testing.DocSnippets.Block;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every {@code ```java spark} example of the README and {@code docs/} runs as pasted, in jshell. */
class SparkDocsTest {
  @TempDir
  Path dir;

  /** Before the test's folder is deleted: a resident writer must not find its store gone. */
  @AfterEach
  void closeStores() {
    ContextStore.closeAllResident();
  }

  @Test
  void sparkExamplesRunAsPasted() throws Exception {
    SparkTestSession.get();  // the examples' getOrCreate() finds this session
    List<Block> blocks = DocSnippets.blocks(DocSnippets.documents(), "java spark");
    assertFalse(blocks.isEmpty(), "docs/spark.md has an example");
    for (Block b : blocks) {
      ByteArrayOutputStream captured = new ByteArrayOutputStream();
      PrintStream original = System.out;
      try (PrintStream print = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
        System.setOut(print);  // a local jshell prints to this JVM's System.out
        DocSnippets.runJava(b, b.codeIn(dir));
      } finally {
        System.setOut(original);
      }
      String printed = captured.toString(StandardCharsets.UTF_8);
      String last = printed.strip().lines().reduce((x, y) -> y).orElse("");
      if (b.code().contains("reward > 0.5")) {
        assertEquals("499", last, "rewards above 0.5 of 1000 rows");
      } else if (b.code().contains("lc.db.events")) {
        assertEquals("1", last, "the catalog example's table holds its one row");
      } else if (b.code().contains("mode(\"overwrite\")")) {
        assertEquals("1", last, "the overwrite left only its own row");
      } else if (b.code().contains("VERSION AS OF")) {
        assertEquals("0.5", last, "the tagged snapshot's reward, not the later one");
      } else if (b.code().contains("vector_search(")) {
        assertEquals("m1", last, "the row nearest to the query vector");
      } else if (b.code().contains("DELETE FROM")) {
        assertEquals("1", last, "DELETE removed the two tool rows");
      }
    }
  }
}
