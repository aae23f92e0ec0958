package io.lancecontext.notebooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Notebooks that cannot rot: every notebook in {@code notebooks/} is executed headless on the kernel this build
 * made ({@code jupyter nbconvert --to notebook --execute}, with a kernelspec written under {@code target/} from
 * this module's class path, so nothing has to be installed into Maven's or Jupyter's user folders), and what it
 * printed and drew is checked.
 *
 * <p>Needs Jupyter ({@code jupyter nbconvert}). Without it the tests are skipped, saying how to install it,
 * except under CI ({@code CI=true}), where {@code .ci/run} installs it and a skip would hide that it did not.
 */
class NotebooksTest {
  private static final Path TARGET = Path.of("target").toAbsolutePath();
  private static final Path JUPYTER = TARGET.resolve("jupyter");
  private static final Path OUT = TARGET.resolve("executed-notebooks");
  private static final long TIMEOUT_SECONDS = 300;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The notebooks this class executes: a new notebook needs a test here. */
  private static final Set<String> EXECUTED = Set.of("explore-rollouts.ipynb");

  private static String kernelProblem;
  private static boolean kernelChecked;

  /**
   * Jupyter is there and this run's kernelspec is written, or the calling test is skipped (failed under CI)
   * saying what to install.
   */
  private static synchronized void jupyterAndTheKernel() throws IOException, InterruptedException {
    if (!kernelChecked) {
      kernelChecked = true;
      kernelProblem = jupyterMissing();
      if (kernelProblem == null) {
        Path tmp = Files.createDirectories(TARGET.resolve("tmp").resolve("kernel"));
        // the build's class path, not an installed one: the kernel runs what this build compiled
        String classPath = TARGET.resolve("classes") + java.io.File.pathSeparator
            + Files.readString(TARGET.resolve("kernel.classpath")).strip();
        KernelSpec.write(JUPYTER.resolve("kernels").resolve(LanceKernel.NAME), classPath,
            kernelFlags(tmp), Map.of("SPARK_LOCAL_IP", "127.0.0.1"));
      }
    }
    if (kernelProblem != null) {
      String how = "install it with notebooks/install-kernel.sh (as root it installs Debian's jupyter-notebook and "
          + "jupyter-nbconvert with apt-get, then the kernel)";
      if ("true".equals(System.getenv("CI"))) {
        fail("CI must execute the notebooks, but " + kernelProblem + ": .ci/run should have installed Jupyter "
            + "(notebooks/install-kernel.sh --for-tests); " + how);
      }
      String message = "notebooks not executed: " + kernelProblem + "; " + how;
      System.out.println("SKIPPED " + message);
      Assumptions.abort(message);
    }
  }

  /** Null when {@code jupyter nbconvert} runs, otherwise what is wrong. */
  private static String jupyterMissing() throws InterruptedException {
    try {
      Process p = new ProcessBuilder("jupyter", "nbconvert", "--version").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes()).strip();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "'jupyter nbconvert --version' did not finish in 60 s";
      }
      String last = out.lines().filter(l -> !l.isBlank()).reduce((a, b) -> b).orElse("");
      return p.exitValue() == 0 ? null : "'jupyter nbconvert --version' failed: " + last;
    } catch (IOException e) {
      return "there is no 'jupyter' command (" + e.getMessage() + ")";
    }
  }

  @Test
  void exploreRollouts() throws Exception {
    jupyterAndTheKernel();
    JsonNode nb = execute("explore-rollouts.ipynb");
    String text = text(nb);
    for (String line : List.of("36 columns, key id", "rollouts: 96", "reward >= 0.5: 54",
        "policy 2 with reward >= 0.5: 29", "Spark SQL, reward >= 0.5: 54",
        "nearest to r042: r042, policies of the 5 nearest: [1]", "r042 policy 1 reward",
        "now: 97 rollouts, at the snapshot: 96", "Spark at the snapshot: 96", "dropped: true")) {
      assertTrue(text.contains(line), "the notebook prints '" + line + "'; it printed:\n" + text);
    }
    // Spark SQL's per-policy table (policy, rollouts, mean reward, good): 32 rollouts a policy
    assertTrue(text.matches("(?s).*\\|\\s+2\\|\\s+32\\|\\s+0\\.\\d+\\|\\s+29\\|.*"), text);
    // the Spark procedure's 3 nearest to r042's vector: r042 itself first
    assertTrue(text.matches("(?s).*\\|\\s*id\\|policy_version\\|\\s*_distance\\|"   // the header,
        + "\\s+\\+[-+]+\\s+\\|\\s*r042\\|\\s+1\\|.*"), text);                    // then the first row
    // VERSION AS OF the token: the 96 rollouts of policies 0 to 2 (not the later policy-3 one)
    assertTrue(text.matches("(?s).*\\|\\s+96\\|\\s+2\\|.*"), text);

    List<byte[]> pngs = pngs(nb);
    assertEquals(1, pngs.size(), "one chart");
    BufferedImage chart = ImageIO.read(new ByteArrayInputStream(pngs.get(0)));
    assertNotNull(chart, "the chart is a PNG");
    assertEquals(720, chart.getWidth());
    assertEquals(360, chart.getHeight());
  }

  /**
   * Every notebook here is executed by a test of this class, on the lancecontext kernel, and is committed without
   * outputs (checked under CI only, on the clean clone: Jupyter autosaves outputs into a notebook being used).
   */
  @Test
  void everyNotebookIsExecutedAndCommittedClean() throws IOException {
    boolean committed = "true".equals(System.getenv("CI"));
    List<Path> notebooks;
    try (Stream<Path> files = Files.list(Path.of("."))) {
      notebooks = files.filter(p -> p.toString().endsWith(".ipynb")).sorted().toList();
    }
    assertFalse(notebooks.isEmpty());
    for (Path p : notebooks) {
      String name = p.getFileName().toString();
      assertTrue(EXECUTED.contains(name), name + " is executed by no test: add one to NotebooksTest");
      JsonNode nb = JSON.readTree(p.toFile());
      assertEquals(LanceKernel.NAME, nb.path("metadata").path("kernelspec").path("name").asText(),
          name + " runs on the lancecontext kernel");
      for (JsonNode cell : nb.path("cells")) {
        assertTrue(!committed || cell.path("outputs").isEmpty(), name + " is committed without outputs "
            + "(Cell > All Output > Clear, then save): a cell has " + cell.path("outputs").size());
      }
    }
  }

  /** Executes {@code notebooks/<name>} on the build's kernel; fails with its errors and the log if a cell failed. */
  private static JsonNode execute(String name) throws IOException, InterruptedException {
    Files.createDirectories(OUT);
    Path log = OUT.resolve(name.replace(".ipynb", ".log"));
    ProcessBuilder pb = new ProcessBuilder("jupyter", "nbconvert", "--to", "notebook", "--execute",
        "--ExecutePreprocessor.timeout=" + TIMEOUT_SECONDS, "--ExecutePreprocessor.kernel_name=" + LanceKernel.NAME,
        "--output-dir", OUT.toString(), name)
        .redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> env = pb.environment();
    // this run's kernelspec first, and nothing from the user's Jupyter folders
    env.put("JUPYTER_PATH", JUPYTER.toString());
    env.put("JUPYTER_DATA_DIR", JUPYTER.toString());
    env.put("JUPYTER_CONFIG_DIR", JUPYTER.resolve("config").toString());
    env.put("JUPYTER_RUNTIME_DIR", JUPYTER.resolve("runtime").toString());
    long started = System.nanoTime();
    Process p = pb.start();
    if (!p.waitFor(TIMEOUT_SECONDS + 60, TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      fail(name + " did not finish in " + (TIMEOUT_SECONDS + 60) + " s; " + tail(log));
    }
    Path executed = OUT.resolve(name);
    System.out.printf("%s executed in %.1f s (exit %d): %s%n", name, (System.nanoTime() - started) / 1e9,
        p.exitValue(), executed);
    if (p.exitValue() != 0 || !Files.exists(executed)) {
      fail(name + ": jupyter nbconvert exited " + p.exitValue() + "; " + tail(log));
    }
    JsonNode nb = JSON.readTree(executed.toFile());
    List<String> errors = new ArrayList<>();
    for (JsonNode cell : nb.path("cells")) {
      for (JsonNode out : cell.path("outputs")) {
        if ("error".equals(out.path("output_type").asText())) {
          errors.add(out.path("ename").asText() + ": " + out.path("evalue").asText());
        }
      }
    }
    assertEquals(List.of(), errors, name + " has error cells");
    return nb;
  }

  /** All text the cells printed and returned (streams and text/plain results). */
  private static String text(JsonNode nb) {
    StringBuilder b = new StringBuilder();
    for (JsonNode cell : nb.path("cells")) {
      for (JsonNode out : cell.path("outputs")) {
        b.append(joined(out.path("text"))).append(joined(out.path("data").path("text/plain"))).append('\n');
      }
    }
    return b.toString();
  }

  private static List<byte[]> pngs(JsonNode nb) {
    List<byte[]> pngs = new ArrayList<>();
    for (JsonNode cell : nb.path("cells")) {
      for (JsonNode out : cell.path("outputs")) {
        JsonNode png = out.path("data").path("image/png");
        if (!png.isMissingNode()) {
          pngs.add(Base64.getMimeDecoder().decode(joined(png)));
        }
      }
    }
    return pngs;
  }

  /** A notebook's multi-line string: one string or a list of lines. */
  private static String joined(JsonNode s) {
    if (s.isArray()) {
      StringBuilder b = new StringBuilder();
      s.forEach(line -> b.append(line.asText()));
      return b.toString();
    }
    return s.isMissingNode() ? "" : s.asText();
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
    return "the last lines of " + log + ":\n" + lines.subList(Math.max(0, lines.size() - 60), lines.size()).stream()
        .collect(Collectors.joining("\n"));
  }

  /**
   * The kernel JVM's flags: the build's fast-start flags too (C1 alone, no class verification, the serial collector)
   * when it passes them.
   */
  private static List<String> kernelFlags(Path tmp) {
    List<String> flags = new java.util.ArrayList<>(List.of("-Xmx1g", "-Djava.io.tmpdir=" + tmp));
    String start = System.getProperty("lancecontext.test.jvm.flags", "").trim();
    if (!start.isEmpty()) {
      flags.addAll(List.of(start.split("\\s+")));
    }
    return flags;
  }
}
