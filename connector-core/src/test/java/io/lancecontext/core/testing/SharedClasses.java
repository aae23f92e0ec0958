package io.lancecontext.core.testing;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A class-data-sharing archive for the child JVMs of tests ({@link ChildJvm}): the classes a child loads (core,
 * Arrow, lance-core, Jackson, Caffeine), parsed and verified once per build instead of in each of core's ~70 child
 * JVMs. A child's CPU fell from about 2.2 to 1.7 s with it (docs/performance.md, "Suite time: leaner child JVMs").
 *
 * <p>Made by one training JVM (this class's {@link #main}: a store created, written, read and merged) with
 * {@code -XX:ArchiveClassesAtExit}, under a file lock, so that the test JVMs of a module make it once between them.
 * It is named by a hash of the Java home, the flags and every class-path entry with its size and time, so a rebuilt
 * jar gets a new archive rather than a refused one. On since the build sets {@value #DIR_PROPERTY}; a training run
 * that fails leaves a {@code .failed} marker and children start without an archive.
 */
final class SharedClasses {
  /** System property: the directory of the archives (the build's {@code target/cds}); unset, no archive. */
  static final String DIR_PROPERTY = "lancecontext.test.cds.dir";

  private SharedClasses() {}

  /**
   * The flags that start a child with the archive for this command line: made first if missing, empty when
   * sharing is off or its training failed. {@code classPath} must hold jars first and directories last (JDK 17
   * archives classes from jars only, and refuses a non-empty directory before the last jar it archived from).
   */
  static List<String> flags(String java, List<String> jvmFlags, List<String> classPath) {
    String dir = System.getProperty(DIR_PROPERTY, "");
    if (dir.isEmpty()) {
      return List.of();
    }
    try {
      Path root = Paths.get(dir);
      Files.createDirectories(root);
      String name = name(java, jvmFlags, classPath);
      Path archive = root.resolve(name + ".jsa");
      Path failed = root.resolve(name + ".failed");
      if (!Files.exists(archive) && !Files.exists(failed)) {
        try (FileChannel lock = FileChannel.open(root.resolve(name + ".lock"), StandardOpenOption.CREATE,
            StandardOpenOption.WRITE); FileLock held = lock.lock()) {
          if (!Files.exists(archive) && !Files.exists(failed)) {
            train(java, jvmFlags, classPath, root, archive, failed);
          }
        }
      }
      return Files.exists(archive) ? List.of("-XX:SharedArchiveFile=" + archive) : List.of();
    } catch (IOException | InterruptedException e) {
      System.err.println("child JVMs start without a class-data archive: " + e);
      return List.of();
    }
  }

  private static void train(String java, List<String> jvmFlags, List<String> classPath, Path root, Path archive,
      Path failed) throws IOException, InterruptedException {
    Path work = Files.createTempDirectory(root, "training");
    Path partial = work.resolve("archive.jsa");
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.addAll(jvmFlags);
    cmd.add("-XX:ArchiveClassesAtExit=" + partial);
    cmd.add("-cp");
    cmd.add(String.join(File.pathSeparator, classPath));
    cmd.add(SharedClasses.class.getName());
    cmd.add(work.resolve("store").toString());
    Path log = work.resolve("training.log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean exited = p.waitFor(120, TimeUnit.SECONDS);
    if (exited && p.exitValue() == 0 && Files.exists(partial)) {
      Files.move(partial, archive, StandardCopyOption.ATOMIC_MOVE);
      try (var files = Files.walk(work)) {
        files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    } else {
      p.destroyForcibly().waitFor();
      Files.writeString(failed, "training JVM " + (exited ? "exited " + p.exitValue() : "timed out") + "; see "
          + log + "\n");
      System.err.println("child JVMs start without a class-data archive: its training failed (" + failed + ")");
    }
  }

  private static String name(String java, List<String> jvmFlags, List<String> classPath) throws IOException {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      List<String> parts = new ArrayList<>();
      parts.add(java);
      parts.add(System.getProperty("java.version"));
      // system properties (each test fork's java.io.tmpdir) do not change what an archive holds
      jvmFlags.stream().filter(f -> !f.startsWith("-D")).forEach(parts::add);
      for (String e : classPath) {
        Path p = Paths.get(e);
        parts.add(e + "|" + (Files.isRegularFile(p) ? Files.size(p) + "|" + Files.getLastModifiedTime(p).toMillis()
            : "dir"));
      }
      d.update(String.join("\n", parts).getBytes(StandardCharsets.UTF_8));
      return "child-" + HexFormat.of().formatHex(d.digest()).substring(0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The training run: what child JVMs do, in brief, so that the archive holds the classes they load. */
  public static void main(String[] args) {
    try (ContextStore store = ContextStore.open(Map.of("path", args[0], "schema", "rollout", "shards", "2"))) {
      for (int i = 0; i < 4; i++) {
        store.add(List.of(StoreProcess.record("k" + i, i), StoreProcess.record("j" + i, i)));
      }
      Optional<Map<String, Object>> got = store.get("k1");
      long count = store.count();
      store.scanRecords(ScanSpec.all().withFilter(Predicate.eq("id", "k2")));
      store.seal();
      store.merge();
      store.scanRecords(ScanSpec.all());
      if (got.isEmpty() || count != 8) {
        throw new IllegalStateException("training store read " + got + " and counted " + count);
      }
    }
  }
}
