package io.lancecontext.core.docs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** docs/troubleshooting.md says what to do about every exception a user can meet: each of package error has its row. */
class TroubleshootingDocTest {
  @Test
  void everyPublicExceptionHasARow() throws Exception {
    String docs = Files.readString(Path.of("..", "docs", "troubleshooting.md"));
    List<String> exceptions;
    try (Stream<Path> files = Files.list(Path.of("..", "connector-core", "src", "main", "java", "io", "lancecontext", "core", "error"))) {
      exceptions = files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith("Exception.java"))
          .map(n -> n.substring(0, n.length() - ".java".length())).sorted().toList();
    }
    assertTrue(exceptions.size() >= 10, exceptions.toString());
    for (String e : exceptions) {
      assertTrue(docs.contains("| `" + e + "` |"), "docs/troubleshooting.md has no row for " + e);
    }
  }
}
