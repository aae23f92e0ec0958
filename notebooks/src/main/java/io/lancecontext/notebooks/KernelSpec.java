package io.lancecontext.notebooks;

import com.google.gson.GsonBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.launcher.JavaModuleOptions;

/**
 * The Jupyter kernelspec ({@code kernel.json}) that starts {@link LanceKernel}: this JVM's {@code java}, the JVM
 * flags below, a class path and {@code {connection_file}}. {@code notebooks/install-kernel.sh} writes it for
 * the user with the module's class path, {@code NotebooksTest} for its own run with the build's: one argv for
 * both.
 */
public final class KernelSpec {
  public static final String DISPLAY_NAME = "Java (lancecontext)";
  static final String ARROW = "--add-opens=java.base/java.nio=ALL-UNNAMED";

  private KernelSpec() {}

  /**
   * The flags every kernel JVM runs with: what {@code spark-submit} gives a driver on JDK 17 (Spark's own list of
   * {@code --add-opens} and {@code -D} options, Arrow's {@code java.nio} among them), headless AWT for the charts,
   * and {@code lancecontext.native.sweep}, since Jupyter kills kernels (restart, shutdown timeout) and a killed
   * JVM leaves its copy of Lance's native library in {@code java.io.tmpdir} (docs/operations.md).
   */
  public static List<String> jvmFlags() {
    List<String> flags = new ArrayList<>();
    Arrays.stream(JavaModuleOptions.defaultModuleOptionArray()).map(String::strip)
        .filter(o -> o.startsWith("--add-opens=") || o.startsWith("-D")).forEach(flags::add);
    if (!flags.contains(ARROW)) {
      flags.add(ARROW);
    }
    flags.add("-Djava.awt.headless=true");
    flags.add("-Dlancecontext.native.sweep=true");
    return flags;
  }

  /** {@code kernel.json}'s text for {@code classPath}, with {@code extraFlags} after {@link #jvmFlags()}. */
  public static String json(String classPath, List<String> extraFlags, Map<String, String> env) {
    List<String> argv = new ArrayList<>();
    argv.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    argv.addAll(jvmFlags());
    argv.addAll(extraFlags);
    argv.addAll(List.of("-cp", classPath, LanceKernel.class.getName(), "{connection_file}"));
    Map<String, String> environment = new LinkedHashMap<>();
    // lance-core's Rust logger: warnings and errors (as the build's tests)
    environment.put("LANCE_LOG", "warn,lance::index=off");
    environment.putAll(env);
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("argv", argv);
    spec.put("display_name", DISPLAY_NAME);
    spec.put("language", "java");
    spec.put("interrupt_mode", "message");
    spec.put("env", environment);
    spec.put("metadata", Map.of());
    return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(spec) + "\n";
  }

  /** Writes {@code folder/kernel.json} (the folder created if missing) and returns its path. */
  public static Path write(Path folder, String classPath, List<String> extraFlags, Map<String, String> env)
      throws IOException {
    Files.createDirectories(folder);
    return Files.writeString(folder.resolve("kernel.json"), json(classPath, extraFlags, env));
  }

  /**
   * {@code KernelSpec <folder> [jvm flag ...]}: writes {@code <folder>/kernel.json} for this JVM's {@code java} and
   * class path (for {@code jupyter kernelspec install}).
   */
  public static void main(String[] args) throws IOException {
    if (args.length < 1) {
      System.err.println("usage: KernelSpec <folder> [jvm flag ...]");
      System.exit(2);
    }
    Path written = write(Path.of(args[0]), System.getProperty("java.class.path"),
        List.of(args).subList(1, args.length), Map.of());
    System.out.println(written);
  }
}
