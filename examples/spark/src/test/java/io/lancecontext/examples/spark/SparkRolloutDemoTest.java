package io.lancecontext.examples.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo's Spark step, small: every stage runs, the store holds the rollouts, a rerun upserts them. */
class SparkRolloutDemoTest {
  @TempDir
  Path dir;

  @Test
  void demoWritesRolloutsAndPrintsEveryStageAndARerunUpserts() {
    String store = dir.resolve("store").toString();
    String first = runDemo(store, 800);
    String second = runDemo(store, 800);
    for (String out : new String[] {first, second}) {
      for (int stage = 1; stage <= 5; stage++) {
        assertTrue(out.contains("[spark " + stage + "/5 "), "stage " + stage + " printed:\n" + out);
      }
      assertTrue(out.contains("800 demo rollouts in the store"), out);
      assertTrue(out.contains("|policy|rollouts|mean_reward|std_reward|p50_reward|solved|"), out);
      assertTrue(out.contains("|demo-g000001|"), "the group-advantage table:\n" + out);
      assertTrue(out.contains("[spark done "), out);
      assertFalse(out.contains("\u001b["), "no terminal escape codes");
    }
    try (ContextStore s = ContextStore.open(Map.of("path", store))) {
      assertEquals(800, s.count(), "a rerun upserts the same ids");
    }
  }

  private static String runDemo(String store, int rows) {
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      // Dataset.show prints through Scala's Console, which keeps its own reference to the original stream
      scala.Console$.MODULE$.withOut(System.out, new scala.runtime.AbstractFunction0<Object>() {
        @Override
        public Object apply() {
          SparkRolloutDemo.main(new String[] {store, Integer.toString(rows)});
          return null;
        }
      });
    } finally {
      System.setOut(original);
    }
    return captured.toString(StandardCharsets.UTF_8);
  }
}
