package io.lancecontext.core.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.StoreTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import jdk.jshell.JShell;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;
import org.junit.jupiter.api.Test;

/**
 * Every example in the README and {@code docs/} works as pasted: JSON schema specs validate, and Java
 * blocks run in {@code jshell} (its default imports, so {@code Predicate} must be imported by name). The
 * one liberty taken: store paths under {@code /tmp/lancecontext/} are moved into this test's folder.
 */
class DocsExamplesTest extends StoreTest {
  private static final Pattern BLOCK = Pattern.compile("```(json|java)\\n(.*?)```", Pattern.DOTALL);
  private static final String DOC_STORE_ROOT = "/tmp/lancecontext/";

  record Example(Path file, String lang, String code) {
    @Override
    public String toString() {
      return file + " (" + lang + ")";
    }
  }

  private static List<Example> examples() throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(Path.of("..", "README.md"));
    try (Stream<Path> docs = Files.list(Path.of("..", "docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
    }
    List<Example> out = new ArrayList<>();
    for (Path f : files) {
      Matcher m = BLOCK.matcher(Files.readString(f));
      while (m.find()) {
        out.add(new Example(f, m.group(1), m.group(2)));
      }
    }
    return out;
  }

  @Test
  void jsonSchemaExamplesValidate() throws IOException {
    int specs = 0;
    for (Example e : examples()) {
      if (e.lang().equals("json") && e.code().contains("\"columns\"")) {
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
    List<Example> java = examples().stream().filter(e -> e.lang().equals("java")).toList();
    assertTrue(java.stream().anyMatch(e -> e.file().endsWith("README.md")), "the README has a Java example");
    for (Example e : java) {
      String code = e.code().replace(DOC_STORE_ROOT, dir.toString().replace('\\', '/') + "/");
      runInJshell(e, code);
    }
  }

  private static void runInJshell(Example example, String code) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
        JShell shell = JShell.builder().executionEngine("local").out(print).err(print).build()) {
      for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
        shell.addToClasspath(entry);
      }
      SourceCodeAnalysis analysis = shell.sourceCodeAnalysis();
      String rest = code;
      int snippets = 0;
      while (!rest.isBlank()) {
        SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(rest);
        assertFalse(info.completeness() == SourceCodeAnalysis.Completeness.DEFINITELY_INCOMPLETE,
            () -> example + " ends in an incomplete statement: " + info.remaining());
        for (SnippetEvent ev : shell.eval(info.source())) {
          if (ev.status() == Snippet.Status.REJECTED) {
            String why = shell.diagnostics(ev.snippet()).map(d -> d.getMessage(null)).toList().toString();
            fail(example + " does not compile in jshell: " + ev.snippet().source().strip() + "\n" + why);
          }
          if (ev.exception() != null) {
            fail(example + " throws in jshell: " + ev.exception() + "\n" + out.toString(StandardCharsets.UTF_8));
          }
        }
        snippets++;
        rest = info.remaining();
      }
      assertTrue(snippets > 0);
    }
  }

  @Test
  void theReadmeExamplePrintsWhatItRead() throws IOException {
    Example readme = examples().stream().filter(e -> e.lang().equals("java") && e.file().endsWith("README.md"))
        .findFirst().orElseThrow();
    // the example prints the reward it read back and the number of rows with a positive reward
    assertTrue(readme.code().contains("System.out.println(row.get().get(\"reward\") + \" \" + good.size());"));
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.out;
    try (PrintStream print = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
      System.setOut(print);
      runInJshell(readme, readme.code().replace(DOC_STORE_ROOT, dir.toString().replace('\\', '/') + "/"));
    } finally {
      System.setOut(original);
    }
    assertEquals("0.5 1", captured.toString(StandardCharsets.UTF_8).strip());
  }
}
