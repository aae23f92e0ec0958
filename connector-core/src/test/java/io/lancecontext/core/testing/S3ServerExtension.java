package io.lancecontext.core.testing;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.TransientNio2BlobStore;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * An S3-compatible server for tests: s3proxy 4.1.0 in this JVM, in-memory (transient) backend, bound to
 * 127.0.0.1 on a free port, with one bucket and a random secret key per server. Register it as a static
 * field, so one server serves a whole test class and classes that do not use it never start one:
 *
 * <pre>{@code
 * @RegisterExtension static final S3ServerExtension S3 = new S3ServerExtension();
 * ... ContextStore.open(S3.newUri("store"), S3.storeOptions()) ...
 * }</pre>
 *
 * <p>Storage options always carry endpoint, region, credentials and {@code allow_http}, so nothing asks
 * AWS. Not for the Spark module's classpath (Spark mediates {@code jakarta.servlet-api} to 5.0.0 and the
 * server then answers 500: run it in a separate JVM there). lance-core's MemWAL writer ignores storage
 * options and reads {@code AWS_*} from the process environment (docs/object-storage.md): store-level tests
 * of MemWAL on S3 need a child JVM whose environment names this server.
 */
public final class S3ServerExtension implements BeforeAllCallback, AfterAllCallback {
  public static final String ACCESS_KEY = "lancecontext-test-access-key";
  public static final String REGION = "us-east-1";
  public static final String BUCKET = "lancecontext-test";

  private final String secretKey = "lancecontext-test-secret-" + UUID.randomUUID();
  private final AtomicInteger names = new AtomicInteger();
  private S3Proxy proxy;
  private String endpoint;
  private long startMillis;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start();
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    stop();
  }

  /** Starts the server and creates the bucket (done by {@link #beforeAll}; for use outside JUnit). */
  public synchronized void start() throws Exception {
    if (proxy != null) {
      return;
    }
    long t0 = System.nanoTime();
    S3Proxy p = S3Proxy.builder()
        .blobStore(new TransientNio2BlobStore())
        .endpoint(URI.create("http://127.0.0.1:0"))
        .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, secretKey)
        .metricsEnabled(false)
        .build();
    p.start();
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!"STARTED".equals(p.getState())) {
      if (System.nanoTime() > deadline) {
        p.stop();
        throw new IllegalStateException("s3proxy did not start within 60 s: " + p.getState());
      }
      Thread.sleep(5);
    }
    proxy = p;
    endpoint = "http://127.0.0.1:" + p.getPort();
    try (S3Client admin = client()) {
      admin.createBucket(b -> b.bucket(BUCKET));
    }
    startMillis = (System.nanoTime() - t0) / 1_000_000;
  }

  public synchronized void stop() throws Exception {
    if (proxy != null) {
      proxy.stop();
      proxy = null;
    }
  }

  /** {@code http://127.0.0.1:<port>}. */
  public String endpoint() {
    return endpoint;
  }

  public String secretKey() {
    return secretKey;
  }

  /** How long starting the server and creating the bucket took. */
  public long startMillis() {
    return startMillis;
  }

  /** A fresh location in the bucket: {@code s3://<bucket>/<name>-<n>}. */
  public String newUri(String name) {
    return "s3://" + BUCKET + "/" + name + "-" + names.incrementAndGet();
  }

  /** The options Lance and lancecontext read, without the {@code storage.} prefix. */
  public Map<String, String> storageOptions() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("aws_endpoint", endpoint);
    m.put("aws_region", REGION);
    m.put("aws_access_key_id", ACCESS_KEY);
    m.put("aws_secret_access_key", secretKey);
    m.put("allow_http", "true");
    return m;
  }

  /** {@link #storageOptions()} as store options ({@code storage.<key>}). */
  public Map<String, String> storeOptions() {
    Map<String, String> m = new LinkedHashMap<>();
    storageOptions().forEach((k, v) -> m.put("storage." + k, v));
    return m;
  }

  /**
   * The process environment lance-core 7.0.0's MemWAL writer reads instead of the storage options, for a
   * child JVM ({@code AWS_EC2_METADATA_DISABLED} included).
   */
  public Map<String, String> memWalEnvironment() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("AWS_ENDPOINT", endpoint);
    m.put("AWS_REGION", REGION);
    m.put("AWS_ACCESS_KEY_ID", ACCESS_KEY);
    m.put("AWS_SECRET_ACCESS_KEY", secretKey);
    m.put("AWS_ALLOW_HTTP", "true");
    m.put("AWS_EC2_METADATA_DISABLED", "true");
    return m;
  }

  /** A client of its own, to look at the bucket independently of the code under test; close it. */
  public S3Client client() {
    return S3Client.builder()
        .httpClient(Apache5HttpClient.create())
        .endpointOverride(URI.create(endpoint))
        .region(Region.of(REGION))
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, secretKey)))
        .forcePathStyle(true)
        .build();
  }
}
