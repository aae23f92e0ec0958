package io.lancecontext.core.internal.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.BadOptionException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where lance-core 7.0.0 puts its native library, and the sweep of copies killed JVMs leave behind. */
class NativeLibraryTest {
  @TempDir
  Path dir;

  @Test
  void aKilledJvmLeavesItsCopyInTheTempFolderAndTheNextJvmWithTheSweepRemovesIt() throws Exception {
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    Path killedCopy;
    try (Child killed = Child.start(tmp, null, dir.resolve("a"), dir.resolve("a.log"))) {
      killedCopy = killed.loadedCopy();
      assertEquals(tmp.toRealPath(), killedCopy.getParent().toRealPath(), "the copy is in java.io.tmpdir");
      assertEquals(List.of(killedCopy.getFileName().toString()), copies(tmp));
      assertTrue(Files.size(killedCopy) > 100L << 20, "the whole library, about 170 MB: " + Files.size(killedCopy));
      killed.process.destroyForcibly().waitFor(60, TimeUnit.SECONDS);
    }
    assertTrue(Files.exists(killedCopy), "a killed JVM's copy stays behind");

    try (Child next = Child.start(tmp, "0s", dir.resolve("b"), dir.resolve("b.log"))) {
      Path own = next.loadedCopy();
      assertFalse(Files.exists(killedCopy), "the sweep removed the killed JVM's copy");
      assertEquals(List.of(own.getFileName().toString()), copies(tmp), "only the running JVM's own copy is left");
      next.exit();
    }
    assertEquals(List.of(), copies(tmp), "a JVM that exits normally removes its own copy");
  }

  /**
   * The tests' JVMs load the library unpacked into the test class path in place ({@code org.lance.JniLoader} of
   * core's tests): if that stand-in lost its place ahead of lance-core, every test JVM would copy 181 MB again.
   */
  @Test
  void theTestsLoadTheLibraryInPlaceFromTheTestClassPath() throws IOException {
    assumeTrue(Files.isReadable(Paths.get("/proc/self/maps")), "the platform names mapped files in /proc/self/maps");
    try (ContextStore store = ContextStore.open(Map.of("path", dir.resolve("s").toString(), "schema", "context",
        "schema.embedding-dim", "4"))) {
      store.add(List.of(Map.of("id", "x")));
    }
    assertEquals(java.util.Optional.empty(), NativeLibrary.loadedCopy(), "no temp copy");
    String maps = Files.readString(Paths.get("/proc/self/maps"));
    assertTrue(maps.contains("test-classes/nativelib/"), "the library mapped from target/test-classes");
  }

  @Test
  void theSweepRemovesOnlyCopiesOfTheLibraryOlderThanTheMinimumAge() throws IOException {
    Instant old = Instant.now().minus(Duration.ofHours(2));
    Path oldSo = file("liblance_jni8412093311.so", 3000, old);
    Path oldDylib = file("liblance_jni77.dylib", 500, old);
    Path fresh = file("liblance_jni555.so", 10, Instant.now());
    Path unnumbered = file("liblance_jni.so", 10, old);
    Path renamed = file("liblance_jni12.so.bak", 10, old);
    Path other = file("libother123.so", 10, old);
    Files.createDirectory(dir.resolve("liblance_jni99.so"));

    NativeLibrary.Sweep sweep = NativeLibrary.sweepStaleCopies(dir, Duration.ofMinutes(10));

    assertEquals(Set.of(oldSo, oldDylib), new HashSet<>(sweep.removed()));
    assertEquals(3500, sweep.bytes());
    for (Path kept : List.of(fresh, unnumbered, renamed, other, dir.resolve("liblance_jni99.so"))) {
      assertTrue(Files.exists(kept), kept + " kept");
    }
  }

  @Test
  void theSweepIsOffUnlessTheSystemPropertyOrTheEnvironmentTurnsItOn() {
    assertEquals(java.util.Optional.empty(), minAge(null, null));
    assertEquals(java.util.Optional.empty(), minAge("false", "10min"));
    assertEquals(java.util.Optional.of(Duration.ofMinutes(10)), minAge("true", null));
    assertEquals(java.util.Optional.of(Duration.ofSeconds(30)), minAge("30s", "1h"));
    assertEquals(java.util.Optional.of(Duration.ofHours(1)), minAge(null, "1h"));
    BadOptionException e = assertThrows(BadOptionException.class, () -> minAge("soon", null));
    assertTrue(e.getMessage().contains(NativeLibrary.SWEEP_PROPERTY) && e.getMessage().contains("soon"), e.getMessage());
  }

  private static java.util.Optional<Duration> minAge(String property, String env) {
    Map<String, String> props = property == null ? Map.of() : Map.of(NativeLibrary.SWEEP_PROPERTY, property);
    Map<String, String> envs = env == null ? Map.of() : Map.of(NativeLibrary.SWEEP_ENV, env);
    return NativeLibrary.configuredMinAge(props::get, envs::get);
  }

  private Path file(String name, int size, Instant modified) throws IOException {
    Path p = Files.write(dir.resolve(name), new byte[size]);
    Files.setLastModifiedTime(p, FileTime.from(modified));
    return p;
  }

  private static List<String> copies(Path tmp) throws IOException {
    try (Stream<Path> s = Files.list(tmp)) {
      return s.map(p -> p.getFileName().toString()).filter(NativeLibrary::isCopyName).sorted().toList();
    }
  }

  /** A JVM with its own {@code java.io.tmpdir} that opens a store (loading lance) and waits for "exit". */
  private static final class Child implements AutoCloseable {
    final Process process;
    final BufferedReader out;
    final Writer in;
    final Path log;

    private Child(Process process, Path log) {
      this.process = process;
      this.log = log;
      this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    static Child start(Path tmp, String sweep, Path store, Path log) throws IOException {
      List<String> cmd = new ArrayList<>();
      cmd.add(System.getProperty("lancecontext.test.java", Paths.get(System.getProperty("java.home"), "bin", "java").toString()));
      cmd.add("-Xmx256m");
      cmd.addAll(io.lancecontext.core.testing.ChildJvm.startFlags());
      cmd.add("--add-opens=java.base/java.nio=ALL-UNNAMED");
      cmd.add("-Djava.io.tmpdir=" + tmp);
      cmd.add("-D" + org.lance.JniLoader.COPY_PROPERTY + "=true");  // as users load it, not as the tests do
      if (sweep != null) {
        cmd.add("-D" + NativeLibrary.SWEEP_PROPERTY + "=" + sweep);
      }
      cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), store.toString()));
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
      pb.environment().remove(NativeLibrary.SWEEP_ENV);
      return new Child(pb.start(), log);
    }

    /** Waits (up to the child's own pace) for its store to be open and returns the copy it loaded. */
    Path loadedCopy() throws IOException {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith("loaded ")) {
          return Paths.get(line.substring("loaded ".length()));
        }
      }
      throw new IOException("child exited before opening its store; its log:\n" + Files.readString(log));
    }

    void exit() throws Exception {
      in.write("exit\n");
      in.flush();
      assertTrue(process.waitFor(120, TimeUnit.SECONDS), "child exits");
      assertEquals(0, process.exitValue(), () -> {
        try {
          return Files.readString(log);
        } catch (IOException e) {
          return e.toString();
        }
      });
    }

    @Override
    public void close() throws InterruptedException {
      if (process.isAlive()) {
        process.destroyForcibly().waitFor(60, TimeUnit.SECONDS);
      }
    }
  }

  /** The child: opens a store, prints the library copy it loaded, waits for "exit", closes and returns. */
  public static final class Main {
    public static void main(String[] args) throws IOException {
      try (ContextStore store = ContextStore.open(Map.of("path", args[0], "schema", "context", "schema.embedding-dim", "4"))) {
        store.add(List.of(Map.of("id", "x")));
        Path copy = NativeLibrary.loadedCopy().orElse(null);
        assertNotNull(copy, "this test runs on Linux, where /proc/self/maps names the loaded copy");
        System.out.println("loaded " + copy);
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null && !line.equals("exit")) {
          // wait
        }
      } finally {
        ContextStore.closeAllResident();
      }
    }
  }
}
