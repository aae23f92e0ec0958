package io.lancecontext.core.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.DocSnippets;
import io.lancecontext.core.testing.DocSnippets.Block;
import io.lancecontext.core.testing.StoreTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every example in the README and {@code docs/} works as pasted: JSON schema specs validate, and Java
 * blocks ({@code ```java}) run in {@code jshell} (its default imports, so {@code Predicate} must be imported by
 * name). Engine examples ({@code ```java spark}, {@code ```sql flink}) are run by the engines' modules. The
 * one liberty taken: store paths under {@code /tmp/lancecontext/} are moved into this test's folder.
 */
class DocsExamplesTest extends StoreTest {
  private static List<Block> blocks(String fence) throws IOException {
    return DocSnippets.blocks(DocSnippets.documents(), fence);
  }

  /** Every fenced block is plain text or one a docs test runs, so no example escapes checking. */
  @Test
  void everyCodeBlockIsOneATestRuns() throws IOException {
    Set<String> checked = Set.of("", "java", "json", "xml", "java spark", "sql flink", "sql flink streaming",
        "sql flink continuous");
    for (Path f : DocSnippets.documents()) {
      boolean open = false;
      for (String line : Files.readAllLines(f)) {
        if (line.startsWith("```")) {
          String fence = line.substring(3).strip();
          assertTrue(open || checked.contains(fence), f + ": a ```" + fence + " block is run by no test; use one of "
              + checked);
          open = !open;
        }
      }
    }
  }

  /** Dependency snippets name artifacts this build makes, at its version. */
  @Test
  void xmlDependencyExamplesNameThisBuildsArtifacts() throws IOException {
    String pom = Files.readString(Path.of("..", "pom.xml"));
    Matcher version = Pattern.compile("<artifactId>lancecontext-parent</artifactId>\\s*<version>([^<]+)</version>")
        .matcher(pom);
    assertTrue(version.find(), "the root pom's version");
    List<Block> xml = blocks("xml");
    assertTrue(!xml.isEmpty());
    Pattern dependency = Pattern.compile("<groupId>([^<]+)</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*"
        + "<version>([^<]+)</version>");
    for (Block b : xml) {
      Matcher m = dependency.matcher(b.code());
      assertTrue(m.find(), b + " is a dependency");
      assertEquals("io.lancecontext", m.group(1), b.toString());
      assertTrue(Files.isDirectory(Path.of("..", m.group(2).replace("lancecontext-", "") + "-connector"))
          || m.group(2).equals("lancecontext-core"), b + " names a module: " + m.group(2));
      assertEquals(version.group(1), m.group(3), b + " names this build's version");
    }
  }

  @Test
  void jsonSchemaExamplesValidate() throws IOException {
    int specs = 0;
    for (Block e : blocks("json")) {
      if (e.code().contains("\"columns\"")) {
        try {
          SchemaSpec.fromJson(e.code());
        } catch (RuntimeException ex) {
          fail(e + " does not validate: " + ex.getMessage());
        }
        specs++;
      }
    }
    assertTrue(specs >= 1, "docs/schema.md has a JSON spec example");
  }

  @Test
  void javaExamplesRunInJshellAsPasted() throws IOException {
    List<Block> java = blocks("java");
    assertTrue(java.stream().anyMatch(e -> e.file().endsWith("README.md")), "the README has a Java example");
    for (Block e : java) {
      DocSnippets.runJava(e, e.codeIn(dir));
    }
  }

  @Test
  void theReadmeExamplePrintsWhatItRead() throws IOException {
    Block readme = blocks("java").stream().filter(e -> e.file().endsWith("README.md")).findFirst().orElseThrow();
    // the example prints the reward it read back and the number of rows with a positive reward
    assertTrue(readme.code().contains("System.out.println(row.get().get(\"reward\") + \" \" + good.size());"));
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.out;
    try (PrintStream print = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
      System.setOut(print);
      DocSnippets.runJava(readme, readme.codeIn(dir));
    } finally {
      System.setOut(original);
    }
    assertEquals("0.5 1", captured.toString(StandardCharsets.UTF_8).strip());
  }
}
