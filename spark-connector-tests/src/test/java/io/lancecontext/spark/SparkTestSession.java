package io.lancecontext.spark;

import org.apache.spark.sql.SparkSession;

/**
 * One local SparkSession per test JVM (local[2], no UI, loopback only), shared by every test class.
 *
 * <p>Spark evaluates its expressions and plans interpreted here (no whole-stage code generation, no generated
 * expression code): the same semantics (Spark's own tests hold the two equal) without compiling code for each of
 * the thousands of small queries the tests run, a tenth to a fifth of their CPU on 2 cores. The connector's code is the
 * same either way; the tests that start their own Spark (the cluster, kill, bundle and consumer tests, the examples
 * and the notebook) run with Spark's defaults. {@code -Dlancecontext.test.spark.codegen=true} turns generation
 * back on.
 */
public final class SparkTestSession {
  private static final boolean CODEGEN = Boolean.getBoolean("lancecontext.test.spark.codegen");
  private static SparkSession spark;

  private SparkTestSession() {}

  public static synchronized SparkSession get() {
    if (spark == null) {
      spark = SparkSession.builder()
          .master("local[2,2]")  // 2 threads; a failed task is retried once
          .appName("lancecontext-tests")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          .config("spark.driver.bindAddress", "127.0.0.1")
          .config("spark.driver.host", "127.0.0.1")
          .config("spark.sql.debug.maxToStringFields", "1000")
          .config("spark.sql.extensions", "io.lancecontext.spark.search.LanceContextExtensions")
          .config("spark.sql.codegen.wholeStage", CODEGEN)
          .config("spark.sql.codegen.factoryMode", CODEGEN ? "FALLBACK" : "NO_CODEGEN")
          .getOrCreate();
      Runtime.getRuntime().addShutdownHook(new Thread(spark::stop));
    }
    return spark;
  }
}
