package io.lancecontext.spark;

import io.lancecontext.core.ContextStore;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * Base of the test classes that run Spark jobs: the JVM's one session ({@link SparkTestSession}), a folder
 * per test class, and no store left resident after the class (a resident writer must not find its folder
 * deleted). A subclass's own {@code @BeforeAll} runs after {@link #session()}.
 */
abstract class SparkTest {
  @TempDir
  static Path dir;
  static SparkSession spark;

  @BeforeAll
  static void session() {
    spark = SparkTestSession.get();
  }

  /**
   * Lets the JVM collect the scans of queries that finished (their read leases keep what they read from garbage
   * collection while they are reachable), until no store under {@code root} holds a read lease (at most 20 s).
   */
  static void releaseFinishedScans(java.nio.file.Path root) throws Exception {
    long end = System.currentTimeMillis() + 20_000;
    while (System.currentTimeMillis() < end) {
      System.gc();
      Thread.sleep(100);
      try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(root)) {
        if (files.noneMatch(p -> p.getParent() != null && p.getParent().getFileName().toString().equals("read-leases")
            && java.nio.file.Files.isRegularFile(p))) {
          return;
        }
      } catch (java.io.UncheckedIOException e) {
        // a file vanished while walking: look again
      }
    }
    throw new AssertionError("read leases under " + root + " were not released");
  }

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }
}
