package io.lancecontext.benchmarks;

import io.lancecontext.core.internal.io.StoreFiles;
import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.TransientNio2BlobStore;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Object storage against a local path, in one run. This is the {@code StoreFiles} part (issue 10): the
 * latency of each file operation the store relies on (create-if-absent of a lease-sized object, whole and
 * ranged reads of a WAL-entry-sized object, the existence probe of a missing object, a listing of a WAL
 * directory) on a local directory and on s3proxy 4.1.0 in this JVM (in-memory backend, 127.0.0.1), with
 * the S3 requests each costs and the latency ratio S3 / local. The store-level part (adds, gets and scans
 * on a store on S3) comes once stores open on S3.
 *
 * <p>Usage: {@code ObjectStoreBenchmark [operations=500] [entries=100]}. Last line:
 * {@code RESULT storefiles create_p50_ratio=.. read_p50_ratio=.. probe_p50_ratio=.. list_p50_ratio=..}.
 */
public final class ObjectStoreBenchmark {
  private static final String ACCESS = "bench-access";
  private static final String BUCKET = "bench";

  private ObjectStoreBenchmark() {}

  private interface Op {
    void run(int i) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    int ops = args.length > 0 ? Integer.parseInt(args[0]) : 500;
    int entries = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    String secret = "bench-secret-" + UUID.randomUUID();
    S3Proxy proxy = S3Proxy.builder().blobStore(new TransientNio2BlobStore())
        .endpoint(URI.create("http://127.0.0.1:0"))
        .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS, secret).metricsEnabled(false).build();
    proxy.start();
    while (!"STARTED".equals(proxy.getState())) {
      Thread.sleep(5);
    }
    String endpoint = "http://127.0.0.1:" + proxy.getPort();
    try (S3Client admin = S3Client.builder().httpClient(Apache5HttpClient.create())
        .endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1).forcePathStyle(true)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS, secret))).build()) {
      admin.createBucket(b -> b.bucket(BUCKET));
    }
    Map<String, String> storage = Map.of("aws_endpoint", endpoint, "aws_region", "us-east-1",
        "aws_access_key_id", ACCESS, "aws_secret_access_key", secret, "allow_http", "true");
    Path dir = Bench.scratch("objectstore");
    Bench.log("ObjectStoreBenchmark (StoreFiles): %d operations each, listings of %d objects; s3proxy at %s",
        ops, entries, endpoint);
    try {
      StoreFiles local = StoreFiles.forUri(dir.toString());
      StoreFiles s3 = StoreFiles.forUri("s3://" + BUCKET + "/store", storage);
      Map<String, double[]> p50 = new LinkedHashMap<>();
      for (int round = 0; round < 2; round++) {  // the first round warms up both (JIT, connections)
        boolean report = round == 1;
        String r = "r" + round + "/";
        Map<String, Bench.Latencies[]> results = new LinkedHashMap<>();
        StoreFiles[] both = {local, s3};
        byte[] lease = new byte[120];
        byte[] walEntry = new byte[16 * 1024];
        new Random(1).nextBytes(walEntry);
        for (int f = 0; f < 2; f++) {
          StoreFiles files = both[f];
          Map<String, Long> before = files.requestCounts();
          measure(results, "createIfAbsent", f, ops, i -> files.createIfAbsent(r + "_lc/lease/" + i, lease));
          measure(results, "overwrite 16 KiB", f, ops, i -> files.overwrite(r + "_mem_wal/s/wal/" + i + ".arrow", walEntry));
          measure(results, "read 16 KiB", f, ops, i -> files.read(r + "_mem_wal/s/wal/" + i + ".arrow"));
          measure(results, "readRange 1 KiB", f, ops, i -> files.readRange(r + "_mem_wal/s/wal/" + i + ".arrow", 4096, 1024));
          measure(results, "objectExists (absent)", f, ops, i -> files.objectExists(r + "_mem_wal/s/wal/x" + i + ".arrow"));
          for (int i = 0; i < entries; i++) {
            files.createIfAbsent(r + "_mem_wal/t/wal/" + i + ".arrow", lease);
          }
          int lists = Math.max(10, ops / 10);
          measure(results, "list " + entries, f, lists, i -> files.listPrefix(r + "_mem_wal/t/wal/"));
          if (report && f == 1) {
            Map<String, Long> after = files.requestCounts();
            Map<String, Long> delta = new LinkedHashMap<>();
            after.forEach((k, v) -> delta.put(k, v - before.getOrDefault(k, 0L)));
            Bench.log("S3 requests for this round: %s (%d operations of each kind, %d listings)", delta, ops, lists);
          }
        }
        if (report) {
          Bench.log("%-22s %-44s %-44s %s", "operation", "local", "s3proxy", "p50 ratio");
          results.forEach((name, l) -> {
            double ratio = l[1].percentileMs(50) / l[0].percentileMs(50);
            p50.put(name, new double[] {l[0].percentileMs(50), l[1].percentileMs(50), ratio});
            Bench.log("%-22s %-44s %-44s %.1f", name, l[0].summary(), l[1].summary(), ratio);
          });
        }
      }
      Bench.log("RESULT storefiles create_p50_ratio=%.1f read_p50_ratio=%.1f probe_p50_ratio=%.1f list_p50_ratio=%.1f",
          p50.get("createIfAbsent")[2], p50.get("read 16 KiB")[2], p50.get("objectExists (absent)")[2],
          p50.get("list " + entries)[2]);
    } finally {
      proxy.stop();
      Bench.delete(dir);
    }
  }

  private static void measure(Map<String, Bench.Latencies[]> results, String name, int which, int n, Op op)
      throws Exception {
    Bench.Latencies l = results.computeIfAbsent(name, k -> new Bench.Latencies[] {new Bench.Latencies(),
        new Bench.Latencies()})[which];
    for (int i = 0; i < n; i++) {
      long t = System.nanoTime();
      op.run(i);
      l.add(System.nanoTime() - t);
    }
  }
}
