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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Flink job (local MiniCluster, parallelism 2) on a store on S3: a local s3proxy in a JVM of its own, the job
 * in another whose environment names it (lance-core 7.0.0's MemWAL reads AWS_* at process start), the store
 * configured through {@code storage.*} options alone. An exactly-once sink, then a bounded scan equal to the
 * input (the last record of each key). The secret key is in no log line, no printed line and no exception
 * message of the run.
 */
class FlinkOnS3Test {
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

  @Test
  void anExactlyOnceSinkIntoAStoreOnS3AndABoundedScanGiveBackTheInput() throws Exception {
    String uri = s3.newUri("flink");
    Map<String, String> options = new LinkedHashMap<>(s3.storeOptions());
    options.put("path", uri);
    String wrongSecret = "wrong-" + UUID.randomUUID();
    options.put("test.wrong-secret", wrongSecret);
    List<String> flags = List.of("-Xmx768m", "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "-Dlog4j2.configurationFile=" + Path.of(FlinkOnS3Test.class.getResource("/job-log4j2.properties").toURI()));
    List<String[]> lines;
    JobProcess job = JobProcess.start(FlinkOnS3Job.class, dir.resolve("flink-job.log"), flags, s3.environment(), options);
    try (job) {
      lines = job.runToEnd(240);
    }

    TreeMap<String, String> input = new TreeMap<>();
    for (int j = 0; j < FlinkOnS3Job.RECORDS; j++) {
      Map<String, Object> r = FlinkOnS3Job.record(j);
      input.put((String) r.get("id"), r.get("rollout_id") + " " + r.get("reward"));
    }
    assertEquals(200, input.size());
    TreeMap<String, String> scanned = new TreeMap<>();
    for (String row : JobProcess.values(lines, "row")) {
      int sp = row.indexOf(' ');
      assertEquals(null, scanned.put(row.substring(0, sp), row.substring(sp + 1)), "a key scanned twice: " + row);
    }
    assertEquals("200", JobProcess.value(lines, "row-count"));
    assertEquals(input, scanned, "the bounded scan returns the input, the last record of each key");
    assertEquals("200", JobProcess.value(lines, "core-count"));

    List<String> objects = s3.list(uri);
    assertTrue(objects.stream().anyMatch(k -> k.startsWith("_versions/")), "the base table is in the bucket: " + objects);
    assertTrue(objects.stream().anyMatch(k -> k.startsWith("_lc/txn")),
        "exactly-once published transactions, recorded in the bucket: " + objects);

    String other = JobProcess.value(lines, "wrong-secret-new");
    assertTrue(other.contains("AWS_SECRET_ACCESS_KEY"), "a store whose secret differs from the environment's is "
        + "refused, naming the variable: " + other);
    assertFalse(other.contains(wrongSecret) || other.contains(s3.secretKey()), "no secret shown: " + other);
    assertTrue(s3.list(uri + "-other").isEmpty(), "the refused store was not created");
    JobProcess.assertSecretAbsent(s3.secretKey(), List.of(job.log()), job.printed());
    JobProcess.assertSecretAbsent(wrongSecret, List.of(job.log()), job.printed());
  }
}
