package io.lancecontext.core.internal.session;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.OptionParsers;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copies of lance-core's native library that JVMs leave in the temp folder.
 *
 * <p>lance-core 7.0.0 loads {@code liblance_jni} through questdb's jar-jni: every JVM copies the library
 * (about 170 MB) out of the jar into {@code java.io.tmpdir} as {@code liblance_jni<random digits>.so}
 * ({@code .dylib} on macOS), loads it and marks it delete-on-exit. A JVM that exits normally or on
 * SIGTERM removes its copy; one that is killed (SIGKILL, an OOM killer, a native abort) leaves it behind.
 * Nothing in lance-core 7.0.0 reuses an earlier copy. See docs/operations.md, "The native library".
 *
 * <p>{@link #sweepStaleCopies} removes leftover copies. On Linux and macOS removing a library that a
 * running JVM has loaded does not affect that JVM (the mapping outlives the file name); the minimum age
 * protects a JVM that is still writing its copy. The copy this JVM loaded is never removed.
 */
public final class NativeLibrary {
  private static final Logger LOG = LoggerFactory.getLogger(NativeLibrary.class);

  /**
   * System property (or, upper-cased with dots as underscores, environment variable
   * {@code LANCECONTEXT_NATIVE_SWEEP}) that turns the sweep on when the JVM's Lance runtime starts: a
   * minimum age such as {@code 10min}, or {@code true} for {@value #DEFAULT_MIN_AGE_TEXT}. Unset or
   * {@code false}: off.
   */
  public static final String SWEEP_PROPERTY = "lancecontext.native.sweep";
  public static final String SWEEP_ENV = "LANCECONTEXT_NATIVE_SWEEP";
  static final String DEFAULT_MIN_AGE_TEXT = "10min";
  static final Duration DEFAULT_MIN_AGE = Duration.ofMinutes(10);

  /** How {@code File.createTempFile("liblance_jni", suffix)} names a copy. */
  private static final Pattern COPY = Pattern.compile("liblance_jni\\d+\\.(so|dylib)");

  private NativeLibrary() {}

  /** What a sweep removed. */
  public record Sweep(List<Path> removed, long bytes) {}

  /** Whether {@code name} is the file name jar-jni gives a copy of lance's native library. */
  public static boolean isCopyName(String name) {
    return COPY.matcher(name).matches();
  }

  /** The copy of the native library this JVM has loaded, where the platform tells ({@code /proc/self/maps}). */
  public static Optional<Path> loadedCopy() {
    Path maps = Paths.get("/proc/self/maps");
    if (!Files.isReadable(maps)) {
      return Optional.empty();
    }
    try {
      for (String line : Files.readAllLines(maps)) {
        int slash = line.indexOf('/');
        if (slash >= 0) {
          Path p = Paths.get(line.substring(slash).replace(" (deleted)", ""));
          if (p.getFileName() != null && isCopyName(p.getFileName().toString())) {
            return Optional.of(p);
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("could not read {}", maps, e);
    }
    return Optional.empty();
  }

  /**
   * Removes the copies of lance's native library in {@code dir} last modified more than {@code minAge}
   * ago, except the one this JVM loaded. Files it cannot remove (another user's, gone meanwhile) are
   * skipped.
   */
  public static Sweep sweepStaleCopies(Path dir, Duration minAge) {
    Optional<Path> mine = loadedCopy().map(NativeLibrary::real);
    Instant cutoff = Instant.now().minus(minAge);
    List<Path> removed = new ArrayList<>();
    long bytes = 0;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "liblance_jni*")) {
      for (Path f : files) {
        if (!isCopyName(f.getFileName().toString()) || mine.filter(m -> m.equals(real(f))).isPresent()) {
          continue;
        }
        try {
          BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
          if (!a.isRegularFile() || !a.lastModifiedTime().toInstant().isBefore(cutoff)) {
            continue;
          }
          Files.delete(f);
          removed.add(f);
          bytes += a.size();
        } catch (NoSuchFileException e) {
          // removed by another JVM's sweep or exit meanwhile
        } catch (IOException e) {
          LOG.debug("could not remove {}", f, e);
        }
      }
    } catch (IOException e) {
      LOG.warn("could not list {} for stale copies of lance's native library: {}", dir, e.toString());
    }
    return new Sweep(removed, bytes);
  }

  /**
   * The minimum age the sweep is configured with ({@value #SWEEP_PROPERTY}, then {@value #SWEEP_ENV}), or
   * empty when it is off.
   */
  static Optional<Duration> configuredMinAge(Function<String, String> properties, Function<String, String> env) {
    String v = properties.apply(SWEEP_PROPERTY);
    String where = "system property " + SWEEP_PROPERTY;
    if (v == null || v.isBlank()) {
      v = env.apply(SWEEP_ENV);
      where = "environment variable " + SWEEP_ENV;
    }
    if (v == null || v.isBlank() || v.trim().equalsIgnoreCase("false")) {
      return Optional.empty();
    }
    if (v.trim().equalsIgnoreCase("true")) {
      return Optional.of(DEFAULT_MIN_AGE);
    }
    try {
      return Optional.of(OptionParsers.duration(v.trim()));
    } catch (RuntimeException e) {
      throw new BadOptionException(SWEEP_PROPERTY, where + " '" + v + "': " + e.getMessage());
    }
  }

  /** Runs the sweep over {@code java.io.tmpdir} if this JVM's configuration turns it on. */
  static void sweepIfConfigured() {
    Optional<Duration> minAge = configuredMinAge(System::getProperty, System::getenv);
    if (minAge.isEmpty()) {
      return;
    }
    Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
    Sweep s = sweepStaleCopies(tmp, minAge.get());
    if (!s.removed().isEmpty()) {
      LOG.info("Removed {} stale copies of lance's native library ({} MiB) from {}", s.removed().size(), s.bytes() >> 20, tmp);
    }
  }

  private static Path real(Path p) {
    try {
      return p.toRealPath();
    } catch (IOException e) {
      return p.toAbsolutePath().normalize();
    }
  }
}
