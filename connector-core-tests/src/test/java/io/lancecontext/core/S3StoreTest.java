package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.S3ServerExtension;
import io.lancecontext.core.testing.StoreTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;

/** Stores on S3 (a local s3proxy), configured through {@code storage.*} as every Lance reader is. */
class S3StoreTest extends StoreTest {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();

  private Map<String, String> options(String uri) {
    Map<String, String> o = new LinkedHashMap<>(S3.storeOptions());
    o.put("path", uri);
    o.put("schema", "rollout");
    o.put("shards", "2");
    // the first merge's generations (about 100 rows per bucket) become base fragments as they are: their data
    // files copied on the server's side
    o.put("merge.append-min-rows", "50");
    return o;
  }

  /** Runs {@link S3StoreProcess}'s whole cycle on a new store in a child JVM; returns what it printed, by step. */
  private Map<String, String> runCycle(String name, Map<String, String> extraEnv, List<String> printed)
      throws Exception {
    String uri = S3.newUri(name);
    List<String> args = new ArrayList<>();
    options(uri).forEach((k, v) -> args.add(k + "=" + v));
    Map<String, String> env = new HashMap<>(S3.memWalEnvironment());
    env.putAll(extraEnv);
    Map<String, String> seen = new HashMap<>();
    seen.put("uri", uri);
    try (ChildJvm child = ChildJvm.start(S3StoreProcess.class, dir.resolve(name + "-child.log"), env,
        args.toArray(new String[0]))) {
      String line;
      while ((line = child.readLine()) != null && !line.equals("done")) {
        printed.add(line);
        assertTrue(!line.startsWith("error"), line + "\n" + child.tail());
        int sp = line.indexOf(' ');
        seen.put(line.substring(0, sp), line.substring(sp + 1));
      }
      assertEquals("done", line, child.tail());
    }
    return seen;
  }

  /**
   * The whole cycle with every logger at DEBUG (lancecontext, the AWS SDK and its HTTP client, lance-core's
   * native log): the secret key appears in no line the process printed or logged.
   */
  @Test
  void noLogLineOfAWholeCycleAtDebugLevelHoldsTheSecretKey() throws Exception {
    List<String> printed = new ArrayList<>();
    Map<String, String> seen = runCycle("debug", Map.of("LANCECONTEXT_TEST_LOG_LEVEL", "debug",
        "LANCECONTEXT_TEST_ROOT_LOG_LEVEL", "debug", "LANCE_LOG", "debug"), printed);
    assertEquals("250", seen.get("count-compacted"), "the cycle ran");
    List<String> log = Files.readAllLines(dir.resolve("debug-child.log"), StandardCharsets.UTF_8);
    // the scan means something only if the levels took effect: lancecontext, the SDK and lance-core all spoke
    assertTrue(log.stream().anyMatch(l -> l.contains(" DEBUG ") && l.contains("[")), "no DEBUG line was logged");
    assertTrue(log.stream().anyMatch(l -> l.contains("software.amazon") || l.contains("request")),
        "the AWS SDK logged nothing at DEBUG");
    assertTrue(log.stream().anyMatch(l -> l.contains("DEBUG lance") || l.contains("DEBUG object_store")),
        "lance-core's native log said nothing at debug");
    String secret = S3.secretKey();
    for (String line : printed) {
      assertFalse(line.contains(secret), "the process printed the secret: " + line);
    }
    for (String line : log) {
      assertFalse(line.contains(secret), "a DEBUG log line holds the secret: " + line);
    }
    System.out.println("DEBUG cycle on S3: " + log.size() + " log lines scanned, no secret");
  }

  @Test
  void aStoreOnS3WorksThroughEveryTierWhenTheEnvironmentMatchesItsOptions() throws Exception {
    Map<String, String> seen = runCycle("store", Map.of(), new ArrayList<>());
    String uri = seen.get("uri");
    assertEquals("250", seen.get("count"), "200 base keys + 50 new in the WAL tail");
    assertEquals("2.0", seen.get("get-k0010"), "replaced in a generation");
    assertEquals("3.0", seen.get("get-k0160"), "replaced in the WAL tail");
    assertEquals("100", seen.get("above2"));
    assertEquals("250", seen.get("splits"), "split reads return the view");
    assertEquals("true", seen.get("flushed"));
    assertEquals("0", seen.get("fresh"));
    assertEquals("250", seen.get("base"), "everything merged into the base table");
    String[] compacted = seen.get("compacted").split(" ");
    assertEquals("true", compacted[0], "compaction ran on S3: " + seen.get("compacted"));
    int before = Integer.parseInt(compacted[1]);
    assertTrue(before > 1 && Integer.parseInt(compacted[2]) == before, "fragments before: " + seen.get("compacted"));
    assertTrue(Integer.parseInt(compacted[3]) <= before, "no more fragments after: " + seen.get("compacted"));
    assertEquals(compacted[3], compacted[4], "stats see the compacted table");
    assertTrue(Long.parseLong(compacted[6]) > Long.parseLong(compacted[5]),
        "the rewrite (deleted rows materialized) committed on S3: " + seen.get("compacted"));
    assertEquals("250", seen.get("count-compacted"));
    assertEquals("3.0", seen.get("get-k0160-compacted"), "the newest row survives compaction");
    assertEquals("true", seen.get("gc"));
    try (S3Client client = S3.client()) {
      String prefix = uri.substring(("s3://" + S3ServerExtension.BUCKET + "/").length()) + "/";
      var objects = client.listObjectsV2Paginator(ListObjectsV2Request.builder().bucket(S3ServerExtension.BUCKET)
          .prefix(prefix).build()).contents().stream().map(o -> o.key().substring(prefix.length())).toList();
      assertTrue(objects.stream().anyMatch(k -> k.startsWith("_versions/")), "the base table is in the bucket");
      assertTrue(objects.stream().anyMatch(k -> k.startsWith("_mem_wal/")), "and so is the MemWAL");
      var generationFiles = objects.stream().filter(k -> k.startsWith("_mem_wal/") && k.contains("/data/"))
          .map(k -> k.substring(k.lastIndexOf('/') + 1)).collect(java.util.stream.Collectors.toSet());
      assertTrue(objects.stream().anyMatch(k -> k.startsWith("data/") && generationFiles.contains(k.substring(5))),
          "a generation's data file was copied into the base's data/: " + objects);
    }
  }

  @Test
  void withoutTheEnvironmentLanceCore7NeedsTheOpenFailsNamingTheVariablesAndCreatesNothing() throws Exception {
    String uri = S3.newUri("noenv");
    BadOptionException e = assertThrows(BadOptionException.class, () -> ContextStore.open(options(uri)));
    for (String variable : List.of("AWS_ENDPOINT", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")) {
      assertTrue(e.getMessage().contains(variable), e.getMessage());
    }
    assertTrue(!e.getMessage().contains(S3.secretKey()), "no secret in the message");
    try (S3Client client = S3.client()) {
      String prefix = uri.substring(("s3://" + S3ServerExtension.BUCKET + "/").length());
      assertEquals(0, client.listObjectsV2(ListObjectsV2Request.builder().bucket(S3ServerExtension.BUCKET)
          .prefix(prefix).build()).keyCount(), "nothing was created");
    }
  }

  @Test
  void gcsAndAzureStoresAreRefusedAtOpenSayingWhatIsMissing() {
    for (String uri : List.of("gs://bucket/store", "az://container/store", "abfss://c@acct.dfs.core.windows.net/s")) {
      Map<String, String> o = new LinkedHashMap<>();
      o.put("path", uri);
      o.put("schema", "rollout");
      BadOptionException e = assertThrows(BadOptionException.class, () -> ContextStore.open(o), uri);
      assertEquals("path", e.key(), uri);
      assertTrue(e.getMessage().contains("not supported yet") && e.getMessage().contains("missing:"), e.getMessage());
    }
  }
}
