package io.lancecontext.core.internal.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.MergeOnce;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The test suite's console stays free of lance-core 7.0.0's harmless per-merge ERROR line: the build sets
 * {@code LANCE_LOG} (docs/operations.md, "Logging"), and a JVM started with it merges without printing it.
 */
class LanceLogTest {
  @TempDir
  Path dir;

  @Test
  void aMergeUnderTheDocumentedLanceLogPrintsNoLanceError() throws Exception {
    assertEquals("warn,lance::index=off", System.getenv("LANCE_LOG"), "the build sets LANCE_LOG for its tests");
    Path log = dir.resolve("child.log");
    try (ChildJvm child = ChildJvm.start(MergeOnce.class, log, dir.resolve("store").toString())) {
      assertEquals("merged", child.readLine(), child::tail);
      assertEquals(0, child.waitFor(120), child::tail);
    }
    String stderr = Files.readString(log);
    assertFalse(stderr.contains("ERROR lance"), stderr);
  }
}
