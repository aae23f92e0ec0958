package consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.it.JobProcess;
import io.lancecontext.it.S3Server;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Spark job (local[2]) on a store on S3: a local s3proxy in a JVM of its own, the job in another whose
 * environment names it (lance-core 7.0.0's MemWAL reads AWS_* at process start), the store configured through
 * {@code storage.*} options alone. Atomic write, immediate upsert, reads with a filter and by key, core's
 * merge and flush, the same reads again: each equal to a model. The secret key is in no log line, no printed
 * line (plans, a store's toString) and no exception message of the run.
 */
class SparkOnS3Test {
  /** The logs of the server and the job, kept for a look after a failure. */
  static Path dir;

  static S3Server s3;

  @BeforeAll
  static void startServer() throws Exception {
    dir = Files.createDirectories(Path.of("target", "job-logs"));
    s3 = S3Server.start(dir.resolve("s3-server.log"));
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (s3 != null) {
      s3.close();
    }
  }

  /** id -> "rollout_id reward", as the job writes it. */
  private static TreeMap<String, String> model() {
    TreeMap<String, String> m = new TreeMap<>();
    for (int i = 0; i < 200; i++) {
      m.put(String.format("k%04d", i), "r" + (i % 5) + " " + (i / 8.0));
    }
    for (int i = 150; i < 250; i++) {
      m.put(String.format("k%04d", i), "u" + (i % 5) + " " + (i / 8.0 + 1));
    }
    return m;
  }

  private static TreeMap<String, String> where(TreeMap<String, String> m, Predicate<Double> reward) {
    TreeMap<String, String> out = new TreeMap<>();
    m.forEach((k, v) -> {
      if (reward.test(Double.parseDouble(v.split(" ")[1]))) {
        out.put(k, v);
      }
    });
    return out;
  }

  /** The rows a read printed ({@code <name> <id> <rollout_id> <reward>}); fails on a key read twice. */
  private static TreeMap<String, String> rows(List<String[]> lines, String name) {
    TreeMap<String, String> out = new TreeMap<>();
    for (String row : JobProcess.values(lines, name)) {
      int sp = row.indexOf(' ');
      assertEquals(null, out.put(row.substring(0, sp), row.substring(sp + 1)), name + " returned a key twice: " + row);
    }
    assertEquals(Integer.toString(out.size()), JobProcess.value(lines, name + "-count"), name);
    return out;
  }

  @Test
  void aSparkJobWritesReadsAndMergesAStoreOnS3ConfiguredThroughStorageOptions() throws Exception {
    String uri = s3.newUri("spark");
    Map<String, String> options = new LinkedHashMap<>(s3.storeOptions());
    options.put("path", uri);
    // the job's merge, not the background one (every 60 s by default), merges what it wrote
    options.put("merge.trigger.interval", "3600s");
    String wrongSecret = "wrong-" + UUID.randomUUID();
    options.put("test.wrong-secret", wrongSecret);
    List<String> flags = List.of("-Xmx1g", "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
        "-Dlog4j2.configurationFile=" + Path.of(SparkOnS3Test.class.getResource("/job-log4j2.properties").toURI()));
    List<String[]> lines;
    JobProcess job = JobProcess.start(SparkOnS3Job.class, dir.resolve("spark-job.log"), flags, s3.environment(), options);
    try (job) {
      lines = job.runToEnd(240);
    }

    TreeMap<String, String> model = model();
    TreeMap<String, String> filtered = where(model, r -> r > 10 && r < 25);
    assertEquals(250, model.size());
    assertEquals(111, filtered.size(), "the filter keeps some base rows, some upserted ones, drops others");
    assertEquals(model, rows(lines, "all"), "atomic write + immediate upsert, read back by Spark");
    assertEquals(filtered, rows(lines, "filter"), "reward > 10 AND reward < 25");
    assertEquals(Map.of("k0160", model.get("k0160")), rows(lines, "by-id"), "WHERE id = 'k0160' (upserted)");
    assertEquals(Map.of("k0042", model.get("k0042")), rows(lines, "by-id-base"), "WHERE id = 'k0042' (atomic)");
    assertTrue(JobProcess.value(lines, "plan-by-id").contains("keys=1"),
        "the read by id is a keyed read: " + JobProcess.value(lines, "plan-by-id"));

    assertTrue(JobProcess.value(lines, "merge").startsWith("true "), "core's merge merged: " + JobProcess.value(lines, "merge"));
    assertTrue(Long.parseLong(JobProcess.value(lines, "after-merge-base")) > 0, "the merge wrote the base table");
    assertEquals(model, rows(lines, "merged-all"), "after the merge");
    assertEquals(filtered, rows(lines, "merged-filter"), "after the merge");
    assertEquals(Map.of("k0160", model.get("k0160")), rows(lines, "merged-by-id"), "after the merge");
    assertEquals("true 250 0", JobProcess.value(lines, "flush"), "flushed: every row in the base table on S3");
    assertEquals(model, rows(lines, "flushed-all"), "after the flush");

    List<String> objects = s3.list(uri);
    assertTrue(objects.stream().anyMatch(k -> k.startsWith("_versions/")), "the base table is in the bucket: " + objects);
    assertTrue(objects.stream().anyMatch(k -> k.startsWith("_mem_wal/")), "and so is the MemWAL: " + objects);

    // the catalog on an S3 warehouse
    assertEquals("db,empty", JobProcess.value(lines, "catalog-namespaces"), "an empty namespace lives in its marker");
    assertEquals("t", JobProcess.value(lines, "catalog-tables"));
    assertEquals("10", JobProcess.value(lines, "catalog-count"));
    assertTrue(JobProcess.value(lines, "catalog-merge").startsWith("true "), "CALL merge on S3: "
        + JobProcess.value(lines, "catalog-merge"));
    assertEquals("5", JobProcess.value(lines, "catalog-count-merged"));
    assertEquals("", JobProcess.value(lines, "catalog-tables-dropped"));
    assertEquals("empty", JobProcess.value(lines, "catalog-namespaces-dropped"));
    assertTrue(s3.list(uri + "-wh/db").isEmpty(), "the dropped namespace left nothing in the bucket");
    String open = JobProcess.value(lines, "wrong-secret-open");
    // the resident store is idle between jobs, so it reopens with the new options, and core's check of the
    // storage options against the environment (lance-core 7.0.0's MemWAL writer reads it) refuses them
    assertTrue(open.contains("storage.") && open.contains("AWS_SECRET_ACCESS_KEY"),
        "another secret for the store is refused: " + open);
    String other = JobProcess.value(lines, "wrong-secret-new");
    assertTrue(other.contains("AWS_SECRET_ACCESS_KEY"), "a store whose secret differs from the environment's is "
        + "refused, naming the variable: " + other);
    for (String failed : List.of(open, other)) {
      assertFalse(failed.contains(wrongSecret) || failed.contains(s3.secretKey()), "no secret shown: " + failed);
    }
    assertTrue(s3.list(uri + "-other").isEmpty(), "the refused store was not created");
    JobProcess.assertSecretAbsent(s3.secretKey(), List.of(job.log()), job.printed());
    JobProcess.assertSecretAbsent(wrongSecret, List.of(job.log()), job.printed());
  }
}
