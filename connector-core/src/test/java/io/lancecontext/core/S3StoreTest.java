package io.lancecontext.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.testing.ChildJvm;
import io.lancecontext.core.testing.S3ServerExtension;
import io.lancecontext.core.testing.StoreTest;
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
    return o;
  }

  @Test
  void aStoreOnS3WorksThroughEveryTierWhenTheEnvironmentMatchesItsOptions() throws Exception {
    String uri = S3.newUri("store");
    List<String> args = new ArrayList<>();
    options(uri).forEach((k, v) -> args.add(k + "=" + v));
    Map<String, String> seen = new HashMap<>();
    try (ChildJvm child = ChildJvm.start(S3StoreProcess.class, dir.resolve("s3-child.log"), S3.memWalEnvironment(),
        args.toArray(new String[0]))) {
      String line;
      while ((line = child.readLine()) != null && !line.equals("done")) {
        assertTrue(!line.startsWith("error"), line + "\n" + child.tail());
        int sp = line.indexOf(' ');
        seen.put(line.substring(0, sp), line.substring(sp + 1));
      }
      assertEquals("done", line, child.tail());
    }
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
