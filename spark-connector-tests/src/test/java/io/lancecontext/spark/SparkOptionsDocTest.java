package io.lancecontext.spark;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import io.lancecontext.core.options.ConfigOption;
import org.junit.jupiter.api.Test;

/** Every option only the Spark connector reads is in docs/spark.md's options table. */
class SparkOptionsDocTest {
  @Test
  void everySparkOnlyOptionIsDocumented() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "spark.md"));
    for (ConfigOption<?> o : SparkOptions.SPARK_ONLY) {
      String row = "| `" + o.key() + "` |";
      assertTrue(doc.contains(row), "docs/spark.md lists " + o.key() + " in its options table");
      if (o.defaultText() != null) {
        assertTrue(doc.contains(row + " `" + o.defaultText() + "` |"), "docs/spark.md gives " + o.key() + "'s default");
      }
    }
  }
}
