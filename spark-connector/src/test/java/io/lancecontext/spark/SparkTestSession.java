package io.lancecontext.spark;

import org.apache.spark.sql.SparkSession;

/** One local SparkSession per test JVM (local[2], no UI, loopback only), shared by every test class. */
public final class SparkTestSession {
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
          .getOrCreate();
      Runtime.getRuntime().addShutdownHook(new Thread(spark::stop));
    }
    return spark;
  }
}
