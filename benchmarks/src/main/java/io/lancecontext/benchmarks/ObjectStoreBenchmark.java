package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ScanSpec;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.gaul.s3proxy.AccessGrant;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.TransientNio2BlobStore;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Object storage against a local path, in one run (issue 10). Two parts:
 *
 * <ol>
 *   <li>the latency of each object operation the store relies on (create-if-absent, overwrite, read, ranged read,
 *       existence probe, listing), on a local directory with {@code java.nio} (a create is a hard link of a written
 *       temporary file, an overwrite an atomic move) and on s3proxy 4.1.0 in this JVM (in-memory backend,
 *       127.0.0.1) with an AWS SDK client set up as lancecontext's own (apache5, path style, checksums only where
 *       required; one request per operation), with the ratio S3 / local. These are the operations themselves,
 *       as a user of those APIs sends them, not lancecontext's code around them;</li>
 *   <li>the store: the same {@code adds} 10-row {@code rollout} adds (1 caller), {@code gets} gets of acknowledged
 *       keys and {@code scans} full scans on a store on a local path and on a store on that s3proxy, in a child
 *       JVM (lance-core 7.0.0's MemWAL takes the endpoint and credentials from the process environment, see
 *       {@code docs/object-storage.md}). Requests are counted twice: at the server (every authenticated request
 *       s3proxy serves, lance-core's own included: a counting {@code BlobStoreLocator}, which s3proxy consults
 *       once per request) and in lancecontext's S3 client (the AWS SDK's requests in that JVM, counted by a
 *       global SDK interceptor, {@link SdkRequests}); the difference is lance-core's. Background maintenance of
 *       the writing JVM runs meanwhile and is counted too.</li>
 * </ol>
 *
 * <p>Usage: {@code ObjectStoreBenchmark [adds=2000] [gets=100] [scans=10] [shards=4] [fileOps=500]} ({@code fileOps=0}
 * skips part 1). Last line: {@code RESULT s3 requests_per_add=.. requests_per_scan=.. add_p50_ratio_vs_local=..}.
 */
public final class ObjectStoreBenchmark {
  private static final String ACCESS = "bench-access";
  private static final String BUCKET = "bench";
  private static final int DIM = 64;
  private static final String ASK = "?requests";

  private ObjectStoreBenchmark() {}

  private interface Op {
    void run(int i) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("store-child")) {
      storeChild(args);
      return;
    }
    int adds = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
    int gets = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    int scans = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    int shards = args.length > 3 ? Integer.parseInt(args[3]) : 4;
    int fileOps = args.length > 4 ? Integer.parseInt(args[4]) : 500;
    String secret = "bench-secret-" + UUID.randomUUID();
    TransientNio2BlobStore blobs = new TransientNio2BlobStore();
    S3Proxy proxy = S3Proxy.builder().blobStore(blobs)
        .endpoint(URI.create("http://127.0.0.1:0"))
        .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS, secret).metricsEnabled(false).build();
    AtomicLong served = new AtomicLong();
    Map<String, AtomicLong> byKind = new java.util.concurrent.ConcurrentSkipListMap<>();
    proxy.setBlobStoreLocator((identity, container, blob) -> {
      served.incrementAndGet();
      byKind.computeIfAbsent(kind(blob), k -> new AtomicLong()).incrementAndGet();
      return ACCESS.equals(identity) ? new AccessGrant(secret, blobs) : null;
    });
    proxy.start();
    while (!"STARTED".equals(proxy.getState())) {
      Thread.sleep(5);
    }
    String endpoint = "http://127.0.0.1:" + proxy.getPort();
    // set up as lancecontext's own client (docs/object-storage.md): checksums only where S3 demands them
    try (S3Client s3 = S3Client.builder().httpClient(Apache5HttpClient.create())
        .endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1).forcePathStyle(true)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS, secret)))
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED).build()) {
      s3.createBucket(b -> b.bucket(BUCKET));
      ObjectOps probe = new S3Ops(s3, "calibration/");
      long client0 = SdkRequests.total();
      long server0 = served.get();
      for (int i = 0; i < 20; i++) {
        probe.exists("absent-" + i);
        probe.overwrite("o-" + i, new byte[1]);
        probe.read("o-" + i);
      }
      Bench.log("calibration: 60 client requests, server counted %d, client counted %d", served.get() - server0,
          SdkRequests.total() - client0);
      if (fileOps > 0) {
        objectOps(fileOps, 100, endpoint, s3);
      }
      storeLevel(adds, gets, scans, shards, endpoint, secret, served, byKind);
    } finally {
      proxy.stop();
    }
  }

  /** What a request's object key names (null: a bucket-level request, a listing). */
  static String kind(String key) {
    if (key == null || key.isEmpty()) {
      return "list";
    }
    String k = key.replaceFirst("^store-[^/]*/", "");
    if (k.matches("_mem_wal/[^/]+/wal/.*")) {
      return "wal";
    }
    if (k.matches("_mem_wal/[^/]+/manifest/.*")) {
      return "shard-manifest";
    }
    if (k.matches("_mem_wal/[^/]+/[^/]+/.*")) {
      return "generation";
    }
    int slash = k.indexOf('/');
    return slash < 0 ? k : k.substring(0, slash);
  }

  // ------------------------------------------------------------------ part 2: the store

  /** Runs the store workload in a child JVM whose environment matches the storage options, answering its counts. */
  private static void storeLevel(int adds, int gets, int scans, int shards, String endpoint, String secret,
      AtomicLong served, Map<String, AtomicLong> byKind) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx3g");
    cmd.add("--add-opens=java.base/java.nio=ALL-UNNAMED");
    cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    cmd.add("-Dbench.dir=" + System.getProperty("bench.dir", "benchmarks/target/bench-data"));
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(ObjectStoreBenchmark.class.getName());
    cmd.addAll(List.of("store-child", endpoint, Integer.toString(adds), Integer.toString(gets),
        Integer.toString(scans), Integer.toString(shards)));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    Map<String, String> env = pb.environment();
    env.put("AWS_ENDPOINT", endpoint);
    env.put("AWS_REGION", "us-east-1");
    env.put("AWS_ACCESS_KEY_ID", ACCESS);
    env.put("AWS_SECRET_ACCESS_KEY", secret);
    env.put("AWS_ALLOW_HTTP", "true");
    env.put("AWS_EC2_METADATA_DISABLED", "true");
    env.remove("AWS_ENDPOINT_URL_S3");
    Process child = pb.start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        BufferedWriter in = new BufferedWriter(new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.equals(ASK)) {
          in.write(served.get() + " " + byKind);
          in.newLine();
          in.flush();
        } else {
          System.out.println(line);
        }
      }
    }
    int rc = child.waitFor();
    if (rc != 0) {
      throw new IllegalStateException("the store benchmark's JVM exited with " + rc);
    }
  }

  /** What one store run measured. */
  private record StoreRun(Bench.Latencies adds, Bench.Latencies gets, Bench.Latencies scans, long[] addRequests,
      long[] getRequests, long[] scanRequests, long[] idleRequests, long idleMillis, Bench.Latencies counts,
      long[] countRequests) {}

  private static void storeChild(String[] args) throws Exception {
    String endpoint = args[1];
    int adds = Integer.parseInt(args[2]);
    int gets = Integer.parseInt(args[3]);
    int scans = Integer.parseInt(args[4]);
    int shards = Integer.parseInt(args[5]);
    BufferedReader parent = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    Map<String, String> storage = new LinkedHashMap<>();
    storage.put("aws_endpoint", endpoint);
    storage.put("aws_region", System.getenv("AWS_REGION"));
    storage.put("aws_access_key_id", System.getenv("AWS_ACCESS_KEY_ID"));
    storage.put("aws_secret_access_key", System.getenv("AWS_SECRET_ACCESS_KEY"));
    storage.put("allow_http", "true");
    Bench.log("ObjectStoreBenchmark (store): %d adds x 10 rows (1 caller), %d gets, %d full scans; rollout schema "
        + "(dim %d), %d shards; local path, then s3proxy at %s", adds, gets, scans, DIM, shards, endpoint);
    Path dir = Bench.scratch("objectstore-store");
    StoreRun local;
    StoreRun s3;
    try {
      local = runStore(dir.toString(), Map.of(), adds, gets, scans, shards, false, parent);
      String uri = "s3://" + BUCKET + "/store-" + UUID.randomUUID();
      s3 = runStore(uri, storage, adds, gets, scans, shards, true, parent);
    } finally {
      ContextStore.closeAllResident();
      Bench.delete(dir);
    }
    Bench.log("");
    Bench.log("| operation | local | s3proxy | p50 ratio | S3 requests each (all / lancecontext / lance-core) |");
    Bench.log("|---|---|---|---:|---|");
    row("add (10 rows)", local.adds(), s3.adds(), s3.addRequests(), adds);
    row("get", local.gets(), s3.gets(), s3.getRequests(), gets);
    row("full scan", local.scans(), s3.scans(), s3.scanRequests(), scans);
    row("count (refresh only)", local.counts(), s3.counts(), s3.countRequests(), scans);
    Bench.log("idle writer JVM (background maintenance only, %d ms): %d requests (%d lancecontext, %d lance-core), "
        + "%.1f per second", s3.idleMillis(), s3.idleRequests()[0], s3.idleRequests()[1],
        s3.idleRequests()[0] - s3.idleRequests()[1], s3.idleRequests()[0] * 1000.0 / s3.idleMillis());
    double perAdd = s3.addRequests()[0] / (double) adds;
    double perScan = s3.scanRequests()[0] / (double) scans;
    double idlePerMs = s3.idleRequests()[1] / (double) s3.idleMillis();
    Bench.log("snapshot refresh, nothing changed: %.2f lancecontext requests per count(), of which about %.2f are the "
        + "writing JVM's background maintenance meanwhile (%.1f per second idle x %.0f ms per count)",
        s3.countRequests()[1] / (double) scans, idlePerMs * s3.counts().percentileMs(50), idlePerMs * 1000,
        s3.counts().percentileMs(50));
    Bench.log("targets: <= 3 requests per add (measured %.2f), <= 2 + %d shards = %d per scan refresh when nothing "
        + "changed (measured %.2f per full scan, data reads included)", perAdd, shards, 2 + shards, perScan);
    Bench.log("RESULT s3 requests_per_add=%.2f requests_per_scan=%.2f add_p50_ratio_vs_local=%.2f", perAdd, perScan,
        s3.adds().percentileMs(50) / local.adds().percentileMs(50));
  }

  private static void row(String name, Bench.Latencies local, Bench.Latencies s3, long[] requests, int n) {
    Bench.log("| %s | %s | %s | %.1f | %.2f / %.2f / %.2f |", name, local.summary(), s3.summary(),
        s3.percentileMs(50) / local.percentileMs(50), requests[0] / (double) n, requests[1] / (double) n,
        (requests[0] - requests[1]) / (double) n);
  }

  /** {all requests the server served, lancecontext's own} so far; zeros for a local store. */
  private static long[] requests(boolean s3, BufferedReader parent) throws Exception {
    if (!s3) {
      return new long[2];
    }
    System.out.println(ASK);
    System.out.flush();
    String answer = parent.readLine().trim();
    int sp = answer.indexOf(' ');
    Bench.log("    server requests by key so far: %s; lancecontext's by operation: %s", answer.substring(sp + 1),
        SdkRequests.counts());
    return new long[] {Long.parseLong(answer.substring(0, sp)), SdkRequests.total()};
  }

  private static long[] since(long[] before, long[] after) {
    return new long[] {after[0] - before[0], after[1] - before[1]};
  }

  private static StoreRun runStore(String uri, Map<String, String> storage, int adds, int gets, int scans, int shards,
      boolean s3, BufferedReader parent) throws Exception {
    String where = s3 ? "s3" : "local";
    Map<String, String> options = new LinkedHashMap<>();
    options.put("path", uri);
    options.put("schema", "rollout");
    options.put("schema.embedding-dim", Integer.toString(DIM));
    options.put("shards", Integer.toString(shards));
    storage.forEach((k, v) -> options.put("storage." + k, v));
    Bench.Latencies addLatency = new Bench.Latencies();
    Bench.Latencies getLatency = new Bench.Latencies();
    Bench.Latencies scanLatency = new Bench.Latencies();
    try (ContextStore store = ContextStore.open(options)) {
      long[] r0 = requests(s3, parent);
      Random random = new Random(1);
      long started = System.nanoTime();
      for (int i = 0; i < adds; i++) {
        List<Map<String, Object>> rows = Bench.rolloutAdd(random, "a", i, 10, DIM);
        long t = System.nanoTime();
        store.add(rows);
        addLatency.add(System.nanoTime() - t);
        if ((i + 1) % 500 == 0) {
          Bench.log("  %s: %d adds, %.0f adds/s so far", where, i + 1, (i + 1) / ((System.nanoTime() - started) / 1e9));
        }
      }
      long[] r1 = requests(s3, parent);
      Random keys = new Random(2);
      for (int i = 0; i < gets; i++) {
        String key = "a-" + keys.nextInt(adds) + "-" + keys.nextInt(10);
        long t = System.nanoTime();
        boolean found = store.get(key).isPresent();
        getLatency.add(System.nanoTime() - t);
        if (!found) {
          throw new AssertionError("acknowledged row " + key + " not found on " + where);
        }
      }
      long[] r2 = requests(s3, parent);
      for (int i = 0; i < scans; i++) {
        long t = System.nanoTime();
        long rows = 0;
        try (StoreReader reader = store.scan(ScanSpec.all())) {
          while (reader.next()) {
            rows += reader.batch().getRowCount();
          }
        }
        scanLatency.add(System.nanoTime() - t);
        if (rows != 10L * adds) {
          throw new AssertionError("a full scan on " + where + " returned " + rows + " rows, not " + 10L * adds);
        }
      }
      long[] r3 = requests(s3, parent);
      // a snapshot refresh with nothing changed, and no data reads: count() over what the scans cached
      Bench.Latencies countLatency = new Bench.Latencies();
      for (int i = 0; i < scans; i++) {
        long t = System.nanoTime();
        long n = store.count();
        countLatency.add(System.nanoTime() - t);
        if (n != 10L * adds) {
          throw new AssertionError("count() on " + where + " returned " + n + ", not " + 10L * adds);
        }
      }
      long[] r3c = requests(s3, parent);
      long idleStart = System.nanoTime();
      Thread.sleep(3_000);
      long[] r4 = requests(s3, parent);
      long idleMillis = (System.nanoTime() - idleStart) / 1_000_000;
      Bench.log("  %s: adds %s; gets %s; scans %s", where, addLatency.summary(), getLatency.summary(),
          scanLatency.summary());
      if (s3) {
        Bench.log("  s3 client requests by operation: %s; store at the end: %s", SdkRequests.counts(),
            store.stats().summary());
      }
      return new StoreRun(addLatency, getLatency, scanLatency, since(r0, r1), since(r1, r2), since(r2, r3),
          since(r3c, r4), idleMillis, countLatency, since(r3, r3c));
    }
  }

  // ------------------------------------------------------------------ part 1: the object operations

  private static void objectOps(int ops, int entries, String endpoint, S3Client client) throws Exception {
    Path dir = Bench.scratch("objectstore");
    Bench.log("ObjectStoreBenchmark (object operations): %d operations each, listings of %d objects; s3proxy at %s",
        ops, entries, endpoint);
    try {
      ObjectOps local = new LocalOps(dir);
      ObjectOps s3 = new S3Ops(client, "store/");
      Map<String, double[]> p50 = new LinkedHashMap<>();
      for (int round = 0; round < 2; round++) {  // the first round warms up both (JIT, connections)
        boolean report = round == 1;
        String r = "r" + round + "/";
        Map<String, Bench.Latencies[]> results = new LinkedHashMap<>();
        ObjectOps[] both = {local, s3};
        byte[] lease = new byte[120];
        byte[] walEntry = new byte[16 * 1024];
        new Random(1).nextBytes(walEntry);
        for (int f = 0; f < 2; f++) {
          ObjectOps files = both[f];
          Map<String, Long> before = SdkRequests.counts();
          measure(results, "createIfAbsent", f, ops, i -> files.createIfAbsent(r + "_lc/lease/" + i, lease));
          measure(results, "overwrite 16 KiB", f, ops, i -> files.overwrite(r + "_mem_wal/s/wal/" + i + ".arrow", walEntry));
          measure(results, "read 16 KiB", f, ops, i -> files.read(r + "_mem_wal/s/wal/" + i + ".arrow"));
          measure(results, "readRange 1 KiB", f, ops, i -> files.readRange(r + "_mem_wal/s/wal/" + i + ".arrow", 4096, 1024));
          measure(results, "objectExists (absent)", f, ops, i -> files.exists(r + "_mem_wal/s/wal/x" + i + ".arrow"));
          for (int i = 0; i < entries; i++) {
            files.createIfAbsent(r + "_mem_wal/t/wal/" + i + ".arrow", lease);
          }
          int lists = Math.max(10, ops / 10);
          measure(results, "list " + entries, f, lists, i -> files.list(r + "_mem_wal/t/wal/"));
          if (report && f == 1) {
            Map<String, Long> after = SdkRequests.counts();
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
      Bench.log("objectops create_p50_ratio=%.1f read_p50_ratio=%.1f probe_p50_ratio=%.1f list_p50_ratio=%.1f",
          p50.get("createIfAbsent")[2], p50.get("read 16 KiB")[2], p50.get("objectExists (absent)")[2],
          p50.get("list " + entries)[2]);
    } finally {
      Bench.delete(dir);
    }
  }

  /** The object operations part 1 times, on one kind of storage; paths are relative to a root. */
  private interface ObjectOps {
    /** Creates the object unless it exists (then leaves it as it is). */
    void createIfAbsent(String path, byte[] content) throws IOException;

    void overwrite(String path, byte[] content) throws IOException;

    byte[] read(String path) throws IOException;

    byte[] readRange(String path, long offset, int length) throws IOException;

    boolean exists(String path) throws IOException;

    /** The objects whose path starts with {@code prefix} (ending in '/'), at any depth. */
    List<String> list(String prefix) throws IOException;
  }

  /** A local directory, through {@code java.nio}. */
  private record LocalOps(Path root) implements ObjectOps {
    private Path temporary(Path target, byte[] content) throws IOException {
      Files.createDirectories(target.getParent());
      Path tmp = target.resolveSibling("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
      Files.write(tmp, content, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      return tmp;
    }

    @Override
    public void createIfAbsent(String path, byte[] content) throws IOException {
      Path target = root.resolve(path);
      Path tmp = temporary(target, content);
      try {
        Files.createLink(target, tmp);  // fails if the target exists
      } catch (FileAlreadyExistsException e) {
        // exists: left as it is
      } finally {
        Files.deleteIfExists(tmp);
      }
    }

    @Override
    public void overwrite(String path, byte[] content) throws IOException {
      Path target = root.resolve(path);
      Files.move(temporary(target, content), target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Override
    public byte[] read(String path) throws IOException {
      return Files.readAllBytes(root.resolve(path));
    }

    @Override
    public byte[] readRange(String path, long offset, int length) throws IOException {
      try (SeekableByteChannel ch = Files.newByteChannel(root.resolve(path), StandardOpenOption.READ)) {
        ch.position(offset);
        ByteBuffer b = ByteBuffer.allocate(length);
        while (b.hasRemaining() && ch.read(b) >= 0) {
          // until full or at the end
        }
        return Arrays.copyOf(b.array(), b.position());
      }
    }

    @Override
    public boolean exists(String path) {
      return Files.isRegularFile(root.resolve(path));
    }

    @Override
    public List<String> list(String prefix) throws IOException {
      List<String> out = new ArrayList<>();
      try (Stream<Path> files = Files.walk(root.resolve(prefix))) {
        for (Path p : (Iterable<Path>) files::iterator) {
          BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);  // size and time, as S3 lists
          if (a.isRegularFile() && !p.getFileName().toString().startsWith(".")) {
            out.add(root.relativize(p).toString());
          }
        }
      }
      out.sort(null);
      return out;
    }
  }

  /** The benchmark's bucket on s3proxy, one SDK request per operation. */
  private record S3Ops(S3Client s3, String root) implements ObjectOps {
    @Override
    public void createIfAbsent(String path, byte[] content) {
      try {
        s3.putObject(r -> r.bucket(BUCKET).key(root + path).ifNoneMatch("*"), RequestBody.fromBytes(content));
      } catch (S3Exception e) {
        if (e.statusCode() != 412) {  // 412: it exists
          throw e;
        }
      }
    }

    @Override
    public void overwrite(String path, byte[] content) {
      s3.putObject(r -> r.bucket(BUCKET).key(root + path), RequestBody.fromBytes(content));
    }

    @Override
    public byte[] read(String path) {
      return s3.getObjectAsBytes(r -> r.bucket(BUCKET).key(root + path)).asByteArray();
    }

    @Override
    public byte[] readRange(String path, long offset, int length) {
      return s3.getObjectAsBytes(r -> r.bucket(BUCKET).key(root + path)
          .range("bytes=" + offset + "-" + (offset + length - 1))).asByteArray();
    }

    @Override
    public boolean exists(String path) {
      try {
        s3.headObject(r -> r.bucket(BUCKET).key(root + path));
        return true;
      } catch (S3Exception e) {
        if (e.statusCode() == 404) {
          return false;
        }
        throw e;
      }
    }

    @Override
    public List<String> list(String prefix) {
      List<String> out = new ArrayList<>();
      for (ListObjectsV2Response page : s3.listObjectsV2Paginator(r -> r.bucket(BUCKET).prefix(root + prefix).maxKeys(1000))) {
        page.contents().forEach(o -> out.add(o.key().substring(root.length())));
      }
      return out;
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
