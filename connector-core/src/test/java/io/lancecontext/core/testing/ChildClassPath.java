package io.lancecontext.core.testing;

import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * The class path of a test's child JVM ({@link ChildJvm}), built from the test JVM's: jars first and directories
 * last, as class-data sharing needs ({@link SharedClasses}), with the jar of this class (core's test jar, which holds
 * the stand-in {@code org.lance.JniLoader}) ahead of lance-core's. Entries that are neither (a {@code pom} that only
 * orders the build) are left out.
 *
 * <p>With {@value #SIMPLE_LOGGING_PROPERTY} set (the build passes slf4j-simple's jar), a child logs through
 * slf4j-simple instead of Log4j 2, whose start-up cost a child about 0.3 s of its 2.2 s of CPU: the same levels as
 * core's {@code log4j2-test.properties}, to stderr (the child's log file).
 */
final class ChildClassPath {
  /** System property: slf4j-simple's jar, for children that log without Log4j 2; unset, children use Log4j 2. */
  static final String SIMPLE_LOGGING_PROPERTY = "lancecontext.test.child.slf4j";

  /** slf4j-simple set up as core's {@code log4j2-test.properties} sets Log4j 2 up. */
  static final List<String> SIMPLE_LOGGING_FLAGS = List.of(
      "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
      "-Dorg.slf4j.simpleLogger.log.io.lancecontext=info",
      "-Dorg.slf4j.simpleLogger.showDateTime=true",
      "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
      "-Dorg.slf4j.simpleLogger.showShortLogName=true");

  /** Log4j 2's jars, left out of a child that logs through slf4j-simple. */
  private static final List<String> LOG4J_JARS = List.of("log4j-core-", "log4j-api-", "log4j-slf4j2-impl-");

  private ChildClassPath() {}

  /** Whether the build passed slf4j-simple's jar for children. */
  static boolean simpleLogging() {
    String jar = System.getProperty(SIMPLE_LOGGING_PROPERTY, "");
    return !jar.isEmpty() && Files.isRegularFile(Paths.get(jar));
  }

  /** The child's entries, from the test JVM's {@code java.class.path}. */
  static List<String> of(String testClassPath, boolean simpleLogging) {
    Path own = ownJar();
    List<String> jars = new ArrayList<>();
    List<String> dirs = new ArrayList<>();
    if (own != null) {
      jars.add(own.toString());
    }
    for (String e : testClassPath.split(File.pathSeparator)) {
      Path p = Paths.get(e);
      String name = p.getFileName() == null ? "" : p.getFileName().toString();
      if (Files.isDirectory(p)) {
        dirs.add(e);
      } else if (Files.isRegularFile(p) && name.endsWith(".jar") && !p.toAbsolutePath().normalize().equals(own)
          && !(simpleLogging && LOG4J_JARS.stream().anyMatch(name::startsWith))) {
        jars.add(e);
      }
    }
    if (simpleLogging) {
      jars.add(System.getProperty(SIMPLE_LOGGING_PROPERTY));
    }
    jars.addAll(dirs);
    return jars;
  }

  /** The jar this class was loaded from, or null (a directory, in an IDE). */
  private static Path ownJar() {
    try {
      Path p = Paths.get(ChildClassPath.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return Files.isRegularFile(p) ? p.toAbsolutePath().normalize() : null;
    } catch (URISyntaxException | RuntimeException e) {
      return null;
    }
  }
}
