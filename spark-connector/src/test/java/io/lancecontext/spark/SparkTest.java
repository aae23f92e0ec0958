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

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }
}
