package io.lancecontext.core.testing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
import jdk.jshell.JShell;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;

/**
 * Code blocks of the README and {@code docs/}, run as pasted. A block's fence names its language and,
 * for engine examples, the engine ({@code ```java}, {@code ```java spark}, {@code ```sql flink}); each
 * module's docs test runs the blocks it has the class path for. Store paths under {@value #DOC_STORE_ROOT}
 * are the one liberty: tests move them into their own folder.
 */
public final class DocSnippets {
  public static final String DOC_STORE_ROOT = "/tmp/lancecontext/";

  private DocSnippets() {}

  /** One code block: where it is and what it holds. */
  public record Block(Path file, String fence, String code) {
    @Override
    public String toString() {
      return file + " (```" + fence + ")";
    }

    /** The code with store paths moved under {@code dir}. */
    public String codeIn(Path dir) {
      return code.replace(DOC_STORE_ROOT, dir.toString().replace('\\', '/') + "/");
    }
  }

  /** The README and every {@code docs/*.md}, from a module directory (one level below the root). */
  public static List<Path> documents() throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(Path.of("..", "README.md"));
    try (var docs = Files.list(Path.of("..", "docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
    }
    return files;
  }

  /** Every block of {@code files} whose fence line is exactly {@code fence}. */
  public static List<Block> blocks(List<Path> files, String fence) throws IOException {
    Pattern block = Pattern.compile("```" + Pattern.quote(fence) + "\\n(.*?)```", Pattern.DOTALL);
    List<Block> out = new ArrayList<>();
    for (Path f : files) {
      Matcher m = block.matcher(Files.readString(f));
      while (m.find()) {
        out.add(new Block(f, fence, m.group(1)));
      }
    }
    return out;
  }

  /** This JVM's jshell, on its class path: javac indexes the class path's jars once, not once per block. */
  private static JShell shell;
  private static final ByteArrayOutputStream printed = new ByteArrayOutputStream();

  /**
   * Runs {@code code} statement by statement in a {@code jshell} on this JVM's class path, failing the test on a
   * statement that does not compile or throws. Returns what it printed. Every block starts from an empty shell's
   * state: what a block declared or imported is dropped after it, so no block compiles thanks to another.
   */
  public static synchronized String runJava(Object name, String code) {
    JShell shell = shell();
    printed.reset();
    try {
      SourceCodeAnalysis analysis = shell.sourceCodeAnalysis();
      String rest = code;
      int snippets = 0;
      while (!rest.isBlank()) {
        SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(rest);
        assertFalse(info.completeness() == SourceCodeAnalysis.Completeness.DEFINITELY_INCOMPLETE,
            () -> name + " ends in an incomplete statement: " + info.remaining());
        for (SnippetEvent ev : shell.eval(info.source())) {
          if (ev.status() == Snippet.Status.REJECTED) {
            String why = shell.diagnostics(ev.snippet()).map(d -> d.getMessage(null)).toList().toString();
            fail(name + " does not compile in jshell: " + ev.snippet().source().strip() + "\n" + why);
          }
          if (ev.exception() != null) {
            fail(name + " throws in jshell: " + ev.exception() + "\n" + printed.toString(StandardCharsets.UTF_8));
          }
        }
        snippets++;
        rest = info.remaining();
      }
      assertTrue(snippets > 0);
      return printed.toString(StandardCharsets.UTF_8);
    } finally {
      shell.snippets().filter(sn -> shell.status(sn).isActive()).toList().forEach(shell::drop);
    }
  }

  private static JShell shell() {
    if (shell == null) {
      PrintStream print = new PrintStream(printed, true, StandardCharsets.UTF_8);
      shell = JShell.builder().executionEngine("local").out(print).err(print).build();
      for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
        shell.addToClasspath(entry);
      }
    }
    return shell;
  }
}
