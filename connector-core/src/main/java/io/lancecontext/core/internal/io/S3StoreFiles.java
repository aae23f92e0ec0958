package io.lancecontext.core.internal.io;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.StoreOptions;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * {@link StoreFiles} on S3 and S3-compatible object stores (MinIO, Ceph, R2, s3proxy) over the AWS SDK v2
 * sync client, configured from the same storage options Lance gets ({@link S3Settings}).
 *
 * <p>One SDK client serves every store of a JVM with the same endpoint, region, credentials and
 * addressing style; clients are closed at JVM shutdown. Each client counts the HTTP requests it sends,
 * by operation ({@link #requestCounts()}), retries included.
 *
 * <p>Requests per call: {@code read}, {@code readRange}, {@code stat}, {@code overwrite}, {@code copy}, {@code delete}
 * {@code createIfAbsent}, {@code objectExists} and {@code prefixExists} one each ({@code createIfAbsent} retries
 * while S3 answers 409, a concurrent conditional write in flight, and reads the object back when S3 answers
 * 412 to a request the SDK had to retry: an earlier attempt may have created it and lost its response); {@code listPrefix}
 * and {@code list} one per 1,000 entries; {@code deletePrefix} its listing plus one per 1,000 objects.
 */
final class S3StoreFiles implements StoreFiles {
  private static final ConcurrentMap<S3Settings, Client> CLIENTS = new ConcurrentHashMap<>();
  private static final AtomicBoolean SHUTDOWN_HOOK = new AtomicBoolean();
  private static final int PAGE = 1000;
  private static final int CONFLICT_RETRIES = 20;

  private final String uri;
  private final String bucket;
  private final String root;
  private final Client client;

  private S3StoreFiles(String uri, String bucket, String root, Client client) {
    this.uri = uri;
    this.bucket = bucket;
    this.root = root;
    this.client = client;
  }

  static S3StoreFiles forUri(String uri, Map<String, String> storageOptions) {
    String rest = uri.substring(uri.indexOf("://") + 3);
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    String prefix = slash < 0 ? "" : rest.substring(slash + 1);
    while (prefix.endsWith("/")) {
      prefix = prefix.substring(0, prefix.length() - 1);
    }
    if (bucket.isEmpty()) {
      throw new BadOptionException(StoreOptions.PATH.key(), "'" + uri + "' names no bucket (s3://<bucket>/<path>)");
    }
    S3Settings settings = S3Settings.from(storageOptions);
    return new S3StoreFiles(uri, bucket, prefix.isEmpty() ? "" : prefix + "/", clientFor(settings));
  }

  private static Client clientFor(S3Settings settings) {
    if (SHUTDOWN_HOOK.compareAndSet(false, true)) {
      Runtime.getRuntime().addShutdownHook(new Thread(S3StoreFiles::closeClients, "lancecontext-s3-clients-close"));
    }
    return CLIENTS.computeIfAbsent(settings, Client::new);
  }

  private static void closeClients() {
    for (Client c : CLIENTS.values()) {
      c.s3.close();
    }
    CLIENTS.clear();
  }

  @Override
  public Map<String, Long> requestCounts() {
    Map<String, Long> out = new TreeMap<>();
    client.requests.forEach((op, n) -> out.put(op, n.sum()));
    return out;
  }

  /** Whether two stores share one SDK client (same endpoint, region, credentials and addressing style). */
  boolean sharesClientWith(S3StoreFiles other) {
    return client == other.client;
  }

  private String key(String path) {
    return root + path;
  }

  private String relative(String key) {
    return key.substring(root.length());
  }

  @Override
  public byte[] read(String path) throws IOException {
    try {
      return client.s3.getObjectAsBytes(r -> r.bucket(bucket).key(key(path))).asByteArray();
    } catch (SdkException e) {
      throw translate("read", path, e);
    }
  }

  @Override
  public byte[] readRange(String path, long offset, int length) throws IOException {
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException("offset " + offset + " and length " + length + " must not be negative");
    }
    if (length == 0) {
      if (stat(path).isEmpty()) {
        throw new NotFound(path);
      }
      return new byte[0];
    }
    String range = "bytes=" + offset + "-" + (offset + length - 1);
    try {
      ResponseBytes<GetObjectResponse> bytes = client.s3.getObjectAsBytes(r -> r.bucket(bucket).key(key(path)).range(range));
      byte[] out = bytes.asByteArray();
      // a server that ignores Range answers 200 with the whole object
      if (bytes.response().contentRange() == null && (offset > 0 || out.length > length)) {
        int from = (int) Math.min(offset, out.length);
        return java.util.Arrays.copyOfRange(out, from, (int) Math.min(out.length, offset + length));
      }
      return out;
    } catch (S3Exception e) {
      if (e.statusCode() == 416) {
        return new byte[0];  // the object ends at or before offset (also: it is empty)
      }
      throw translate("read a range of", path, e);
    } catch (SdkException e) {
      throw translate("read a range of", path, e);
    }
  }

  @Override
  public Optional<Entry> stat(String path) throws IOException {
    try {
      HeadObjectResponse h = client.s3.headObject(r -> r.bucket(bucket).key(key(path)));
      return Optional.of(new Entry(path, h.contentLength(), Optional.ofNullable(h.lastModified())));
    } catch (SdkException e) {
      if (isNotFound(e)) {
        return Optional.empty();
      }
      throw translate("stat", path, e);
    }
  }

  @Override
  public boolean prefixExists(String prefix) throws IOException {
    try {
      return client.s3.listObjectsV2(r -> r.bucket(bucket).prefix(key(prefix)).maxKeys(1)).keyCount() > 0;
    } catch (SdkException e) {
      throw translate("list", prefix, e);
    }
  }

  @Override
  public List<Entry> listPrefix(String prefix) throws IOException {
    List<Entry> out = new ArrayList<>();
    ListObjectsV2Request request = ListObjectsV2Request.builder().bucket(bucket).prefix(key(prefix)).maxKeys(PAGE).build();
    try {
      for (ListObjectsV2Response page : client.s3.listObjectsV2Paginator(request)) {
        for (S3Object o : page.contents()) {
          out.add(new Entry(relative(o.key()), o.size(), Optional.ofNullable(o.lastModified())));
        }
      }
    } catch (SdkException e) {
      throw translate("list", prefix, e);
    }
    out.sort(Comparator.comparing(Entry::path));
    return out;
  }

  @Override
  public List<String> list(String dir) throws IOException {
    String prefix = dir.isEmpty() ? root : key(dir) + "/";
    ListObjectsV2Request request = ListObjectsV2Request.builder().bucket(bucket).prefix(prefix).delimiter("/")
        .maxKeys(PAGE).build();
    List<String> out = new ArrayList<>();
    try {
      for (ListObjectsV2Response page : client.s3.listObjectsV2Paginator(request)) {
        for (CommonPrefix p : page.commonPrefixes()) {
          String name = p.prefix().substring(prefix.length());
          out.add(name.endsWith("/") ? name.substring(0, name.length() - 1) : name);
        }
        for (S3Object o : page.contents()) {
          out.add(o.key().substring(prefix.length()));
        }
      }
    } catch (SdkException e) {
      throw translate("list", dir, e);
    }
    out.sort(null);
    return out;
  }

  @Override
  public boolean createIfAbsent(String path, byte[] content) throws IOException {
    for (int attempt = 0; ; attempt++) {
      try {
        client.s3.putObject(r -> r.bucket(bucket).key(key(path)).ifNoneMatch("*"), RequestBody.fromBytes(content));
        return true;
      } catch (S3Exception e) {
        if (e.statusCode() == 412) {
          return (attempt > 0 || wasRetried(e)) && Arrays.equals(readIfPresent(path).orElse(null), content);
        }
        // 409 ConditionalRequestConflict: another conditional write of the key is in flight; S3 says retry
        if (e.statusCode() != 409 || attempt >= CONFLICT_RETRIES) {
          throw translate("create", path, e);
        }
      } catch (SdkException e) {
        throw translate("create", path, e);
      }
      try {
        Thread.sleep(5L + attempt * 5L);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted while creating " + path);
      }
    }
  }

  /**
   * Whether the SDK sent the request more than once: an earlier attempt may have created the object and
   * lost its response (the retry then meets 412), so the caller whose content the object holds won.
   */
  private static boolean wasRetried(SdkException e) {
    Integer attempts = e.numAttempts();
    return attempts == null || attempts > 1;
  }

  @Override
  public void overwrite(String path, byte[] content) throws IOException {
    try {
      client.s3.putObject(r -> r.bucket(bucket).key(key(path)), RequestBody.fromBytes(content));
    } catch (SdkException e) {
      throw translate("write", path, e);
    }
  }

  @Override
  public void copy(String from, String to) throws IOException {
    try {
      client.s3.copyObject(r -> r.sourceBucket(bucket).sourceKey(key(from)).destinationBucket(bucket)
          .destinationKey(key(to)));
    } catch (SdkException e) {
      throw translate("copy to " + to + " from", from, e);
    }
  }

  @Override
  public void delete(String path) throws IOException {
    if (path.isEmpty()) {
      return;
    }
    try {
      client.s3.deleteObject(r -> r.bucket(bucket).key(key(path)));
    } catch (SdkException e) {
      if (!isNotFound(e)) {
        throw translate("delete", path, e);
      }
    }
  }

  @Override
  public int deletePrefix(String prefix) throws IOException {
    if (prefix.isEmpty()) {
      throw new IllegalArgumentException("refusing to delete the whole store");
    }
    return deleteAll(StoreFiles.paths(listPrefix(prefix)));
  }

  @Override
  public int deleteAll(Collection<String> paths) throws IOException {
    List<String> all = new ArrayList<>(paths);
    for (int from = 0; from < all.size(); from += PAGE) {
      List<ObjectIdentifier> batch = new ArrayList<>();
      for (String p : all.subList(from, Math.min(all.size(), from + PAGE))) {
        if (!p.isEmpty()) {
          batch.add(ObjectIdentifier.builder().key(key(p)).build());
        }
      }
      if (batch.isEmpty()) {
        continue;
      }
      try {
        DeleteObjectsResponse r = client.s3.deleteObjects(d -> d.bucket(bucket)
            .delete(Delete.builder().objects(batch).quiet(true).build()));
        if (r.hasErrors() && !r.errors().isEmpty()) {
          var first = r.errors().get(0);
          throw new IOException("could not delete " + r.errors().size() + " of " + batch.size() + " objects of "
              + this + ", the first " + relative(first.key()) + ": " + first.code() + " " + first.message());
        }
      } catch (SdkException e) {
        throw translate("delete objects of", all.get(from), e);
      }
    }
    return all.size();
  }

  @Override
  public String toString() {
    return "S3StoreFiles[" + uri + (client.settings.endpoint() == null ? "" : " at " + client.settings.endpoint()) + "]";
  }

  private String describe(String path) {
    return "s3://" + bucket + "/" + key(path);
  }

  private static boolean isNotFound(SdkException e) {
    return e instanceof NoSuchKeyException || (e instanceof S3Exception && ((S3Exception) e).statusCode() == 404);
  }

  private IOException translate(String action, String path, SdkException e) {
    if (isNotFound(e)) {
      return new NotFound(path);
    }
    String status = e instanceof S3Exception ? " (HTTP " + ((S3Exception) e).statusCode() + ")" : "";
    return new IOException("could not " + action + " " + describe(path) + status + ": " + e.getMessage(), e);
  }

  /** One SDK client and its request counts. */
  private static final class Client {
    final S3Settings settings;
    final S3Client s3;
    final ConcurrentMap<String, LongAdder> requests = new ConcurrentHashMap<>();

    Client(S3Settings settings) {
      this.settings = settings;
      AwsCredentials credentials = settings.sessionToken() == null
          ? AwsBasicCredentials.create(settings.accessKeyId(), settings.secretAccessKey())
          : AwsSessionCredentials.create(settings.accessKeyId(), settings.secretAccessKey(), settings.sessionToken());
      var builder = S3Client.builder()
          .httpClient(Apache5HttpClient.builder()
              .connectionTimeout(Duration.ofSeconds(10)).socketTimeout(Duration.ofSeconds(60)).build())
          .region(Region.of(settings.region()))
          .credentialsProvider(StaticCredentialsProvider.create(credentials))
          .forcePathStyle(!settings.virtualHostedStyle())
          // S3-compatible stores often lack the SDK's default CRC32 trailers: checksums only where S3 demands them
          .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
          .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
          .overrideConfiguration(o -> o.addExecutionInterceptor(new ExecutionInterceptor() {
            @Override
            public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
              String op = Objects.requireNonNullElse(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME), "?");
              requests.computeIfAbsent(op, k -> new LongAdder()).increment();
            }
          }));
      if (settings.endpoint() != null) {
        builder.endpointOverride(URI.create(settings.endpoint()));
      }
      this.s3 = builder.build();
    }
  }
}
