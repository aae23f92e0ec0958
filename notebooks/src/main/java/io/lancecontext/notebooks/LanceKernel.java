package io.lancecontext.notebooks;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import jdk.jshell.DeclarationSnippet;
import jdk.jshell.Diag;
import jdk.jshell.EvalException;
import jdk.jshell.JShell;
import jdk.jshell.JShellException;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;
import jdk.jshell.SourceCodeAnalysis.Completeness;
import jdk.jshell.UnresolvedReferenceException;
import jdk.jshell.execution.LocalExecutionControl;
import jdk.jshell.spi.ExecutionControl;
import jdk.jshell.spi.ExecutionControlProvider;
import jdk.jshell.spi.ExecutionEnv;
import org.dflib.jjava.jupyter.channels.JupyterConnection;
import org.dflib.jjava.jupyter.kernel.BaseKernel;
import org.dflib.jjava.jupyter.kernel.JupyterIO;
import org.dflib.jjava.jupyter.kernel.KernelConnectionProperties;
import org.dflib.jjava.jupyter.kernel.LanguageInfo;
import org.dflib.jjava.jupyter.kernel.ReplacementOptions;
import org.dflib.jjava.jupyter.kernel.comm.CommManager;
import org.dflib.jjava.jupyter.kernel.display.DisplayData;
import org.dflib.jjava.jupyter.kernel.display.Renderer;
import org.dflib.jjava.jupyter.kernel.magic.MagicsRegistry;
import org.dflib.jjava.jupyter.kernel.util.StringStyler;
import org.dflib.jjava.jupyter.kernel.util.TextColor;

/**
 * A Jupyter kernel for Java: JShell, evaluating in this JVM, behind the Jupyter protocol of
 * {@code org.dflib.jjava:jjava-jupyter} (ZeroMQ sockets, signed messages, stdout/stderr streams, display data).
 *
 * <p>Why not JJava's own kernel: {@code jjava-jupyter} is only JJava's protocol library ("intended for building
 * language-specific kernels", its POM says); the Java kernel built on it ({@code org.dflib.jjava.kernel.JavaKernel}
 * in {@code jjava-kernel}, launched by {@code jjava-distro}'s {@code JJava} main) is not served by the Maven
 * repository this project builds from. This class is the part of it the notebooks need: cells run as JShell
 * snippets whose class path is this JVM's (the core, the Spark connector, Spark, JFreeChart), a cell's last
 * expression is rendered through the library's {@link Renderer} (an image as {@code image/png}, anything else as
 * text), {@link #display(Object)} shows a value mid-cell, and tab completion, inspection and interrupts work.
 * No magics ({@code %maven} and the like): the class path is the module's.
 *
 * <p>Snippets run in this JVM (not a JShell agent JVM), on the thread that handles the request, so their
 * {@code System.out} is the cell's output and the stores and SparkSession a cell opens live as long as the
 * kernel. Run it with {@code --add-opens=java.base/java.nio=ALL-UNNAMED} (Arrow) and the connection file
 * Jupyter passes: see {@code notebooks/install-kernel.sh}.
 */
public final class LanceKernel extends BaseKernel {
  /** The kernelspec's name: notebooks name it in their metadata. */
  public static final String NAME = "lancecontext-java";

  /** What every session starts with: the imports a notebook would otherwise repeat. */
  static final List<String> STARTUP = List.of(
      "import java.util.*;",
      "import java.nio.file.*;",
      "import java.util.stream.*;",
      "import static io.lancecontext.notebooks.LanceKernel.display;");

  private final JShell shell;
  private final SourceCodeAnalysis analysis;
  private final InProcessControl control = new InProcessControl();
  private volatile Thread evaluating;

  private LanceKernel() {
    super(NAME, version(), new LanguageInfo("java", System.getProperty("java.version"), "text/x-java-source",
            ".jshell", "java", "java", null),
        List.of(), null, new JupyterIO(StandardCharsets.UTF_8), new CommManager(), new Renderer(), null,
        new MagicsRegistry(), false, new StringStyler.Builder()
            .addPrimaryStyle(TextColor.BOLD_RESET_FG)
            .addSecondaryStyle(TextColor.BOLD_RED_FG)
            .addHighlightStyle(TextColor.BOLD_RESET_FG)
            .addHighlightStyle(TextColor.RED_BG)
            .withLinePrefix(TextColor.BOLD_RESET_FG + "|   ")
            .build());
    this.shell = JShell.builder().executionEngine(new ExecutionControlProvider() {
      @Override
      public String name() {
        return "lancecontext-in-process";
      }

      @Override
      public ExecutionControl generate(ExecutionEnv env, Map<String, String> parameters) {
        return control;
      }
    }, Map.of()).build();
    this.analysis = shell.sourceCodeAnalysis();
    // compile against this JVM's class path; the snippets' class loader delegates to this JVM's first, so a
    // class is the same class in the kernel and in the cells
    shell.addToClasspath(System.getProperty("java.class.path"));
    for (String s : STARTUP) {
      evalRaw(s);
    }
  }

  /** Starts the kernel on the connection file Jupyter passes and serves until Jupyter shuts it down. */
  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: LanceKernel <connection file>  (Jupyter starts it from the kernelspec)");
      System.exit(2);
    }
    KernelConnectionProperties connection = KernelConnectionProperties.parse(Files.readString(Path.of(args[0])));
    JupyterConnection jupyter = new JupyterConnection(connection);
    LanceKernel kernel = new LanceKernel();
    kernel.onStartup();
    kernel.becomeHandlerForConnection(jupyter);
    jupyter.connect();
    jupyter.waitUntilClose();
    // a notebook's SparkSession, Lance sessions and writers hold non-daemon threads: end with the kernel
    System.exit(0);
  }

  /** Shows {@code value} in the cell's output now: an image as PNG, anything else as its text. */
  public static void display(Object value) {
    BaseKernel kernel = notebookKernel();
    kernel.display(kernel.getRenderer().render(value));
  }

  @Override
  public Object evalRaw(String source) {
    evaluating = Thread.currentThread();
    try {
      Object last = null;
      SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(source);
      while (info.completeness().isComplete()) {
        last = evalSnippet(info.source());
        info = analysis.analyzeCompletion(info.remaining());
      }
      if (info.completeness() != Completeness.EMPTY) {
        throw new CellError("incomplete input: " + info.remaining().strip(), List.of("Incomplete input:",
            info.remaining().strip()));
      }
      return last;
    } finally {
      evaluating = null;
      Thread.interrupted();  // an interrupt that came too late must not hit the next cell
    }
  }

  /** Runs one snippet: its value if it is an expression, null if it declares or states something. */
  private Object evalSnippet(String code) {
    control.lastValue = null;
    Object value = null;
    for (SnippetEvent event : shell.eval(code)) {
      if (event.causeSnippet() != null) {
        continue;  // what the snippet did to earlier ones (a redefinition), not the snippet itself
      }
      JShellException thrown = event.exception();
      if (thrown != null) {
        throw failure(event.snippet(), thrown);
      }
      if (!event.status().isDefined()) {
        throw compileError(event.snippet());
      }
      switch (event.snippet().subKind()) {
        case VAR_VALUE_SUBKIND, OTHER_EXPRESSION_SUBKIND, TEMP_VAR_EXPRESSION_SUBKIND -> value = control.lastValue;
        default -> value = null;
      }
    }
    control.lastValue = null;
    return value;
  }

  private CellError compileError(Snippet snippet) {
    List<String> lines = new ArrayList<>();
    List<String> messages = new ArrayList<>();
    shell.diagnostics(snippet).forEach(d -> {
      lines.addAll(d.getStartPosition() >= 0 && d.getEndPosition() >= d.getStartPosition()
          ? errorStyler.highlightSubstringLines(snippet.source(), (int) d.getStartPosition(), (int) d.getEndPosition())
          : errorStyler.primaryLines(snippet.source()));
      String message = message(d);
      messages.add(message);
      lines.add(errorStyler.secondary(message));
      lines.add("");
    });
    if (snippet instanceof DeclarationSnippet declaration) {
      List<String> unresolved = shell.unresolvedDependencies(declaration).collect(Collectors.toList());
      if (!unresolved.isEmpty()) {
        messages.add("unresolved: " + String.join(", ", unresolved));
        lines.add(errorStyler.secondary("Unresolved: " + String.join(", ", unresolved)));
      }
    }
    return new CellError(messages.isEmpty() ? "the snippet was rejected: " + snippet.source().strip()
        : String.join("; ", messages), lines);
  }

  private static String message(Diag d) {
    return d.getMessage(null).lines().filter(l -> !l.strip().startsWith("location:"))
        .collect(Collectors.joining(" ")).strip();
  }

  private CellError failure(Snippet snippet, JShellException thrown) {
    if (thrown instanceof UnresolvedReferenceException unresolved) {
      String deps = String.join(", ", shell.unresolvedDependencies(unresolved.getSnippet()).toList());
      return new CellError("unresolved: " + deps, List.of(errorStyler.secondary("Unresolved: " + deps)));
    }
    String name = thrown instanceof EvalException e ? e.getExceptionClassName() : thrown.getClass().getName();
    StringWriter trace = new StringWriter();
    try (PrintWriter w = new PrintWriter(trace)) {
      thrown.printStackTrace(w);
    }
    // JShell reports the snippet's exception as an EvalException that names the real class
    String text = trace.toString().replace(EvalException.class.getName(), name);
    return new CellError(name + ": " + thrown.getMessage(), errorStyler.secondaryLines(text));
  }

  @Override
  public List<String> formatError(Throwable e) {
    return e instanceof CellError cell ? cell.lines : super.formatError(e);
  }

  @Override
  public DisplayData inspect(String code, int at, boolean extraDetail) {
    List<SourceCodeAnalysis.Documentation> docs = analysis.documentation(code, at, true);
    if (docs == null || docs.isEmpty()) {
      return null;
    }
    return new DisplayData(docs.stream()
        .map(d -> d.signature() + (extraDetail && d.javadoc() != null ? "\n" + d.javadoc() : ""))
        .collect(Collectors.joining("\n\n")));
  }

  @Override
  public ReplacementOptions complete(String code, int at) {
    int[] anchor = new int[1];
    List<String> options = analysis.completionSuggestions(code, at, anchor).stream()
        .map(SourceCodeAnalysis.Suggestion::continuation).distinct().toList();
    return options.isEmpty() ? null : new ReplacementOptions(options, anchor[0], at);
  }

  @Override
  public String isComplete(String code) {
    SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(code);
    while (info.completeness().isComplete()) {
      info = analysis.analyzeCompletion(info.remaining());
    }
    return switch (info.completeness()) {
      case EMPTY, COMPLETE, COMPLETE_WITH_SEMI -> IS_COMPLETE_YES;
      case CONSIDERED_INCOMPLETE, DEFINITELY_INCOMPLETE -> "  ";
      case UNKNOWN -> IS_COMPLETE_BAD;
    };
  }

  /** Interrupts the running cell's thread (kernelspec {@code "interrupt_mode": "message"}). */
  @Override
  public void interrupt() {
    Thread t = evaluating;
    if (t != null) {
      t.interrupt();
    }
  }

  @Override
  public void onShutdown(boolean isRestarting) {
    super.onShutdown(isRestarting);
    shell.close();
  }

  private static String version() {
    String v = LanceKernel.class.getPackage().getImplementationVersion();
    return v != null ? v : "dev";
  }

  /**
   * JShell's in-process execution that keeps the value a snippet returned (JShell itself passes on only its
   * string), so a cell's last expression can be rendered as what it is, an image as an image.
   */
  private static final class InProcessControl extends LocalExecutionControl {
    Object lastValue;

    @Override
    protected String invoke(Method doitMethod) throws Exception {
      Object value = doitMethod.invoke(null);  // on the cell's thread: its System.out is the cell's output
      lastValue = value;
      return valueString(value);
    }
  }

  /** A cell that did not compile or threw: its message and the lines the notebook shows. */
  static final class CellError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient List<String> lines;

    CellError(String message, List<String> lines) {
      super(message, null, false, false);
      this.lines = List.copyOf(lines);
    }
  }
}
