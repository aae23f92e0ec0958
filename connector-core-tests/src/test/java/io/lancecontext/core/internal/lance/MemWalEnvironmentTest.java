package io.lancecontext.core.internal.lance;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.StoreConfig;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A store on S3 opens only when the process environment says what its storage options say. */
class MemWalEnvironmentTest {
  private static final String SECRET = "s3cr3t-value";

  private static StoreConfig s3(String endpoint) {
    return StoreConfig.of(Map.of("path", "s3://bucket/store", "storage.aws_endpoint", endpoint,
        "storage.aws_region", "us-east-1", "storage.aws_access_key_id", "key-id",
        "storage.aws_secret_access_key", SECRET, "storage.allow_http", "true"));
  }

  private static Map<String, String> env(String endpoint, String secret) {
    Map<String, String> env = new HashMap<>(Map.of("AWS_ENDPOINT", endpoint, "AWS_REGION", "us-east-1",
        "AWS_ACCESS_KEY_ID", "key-id", "AWS_SECRET_ACCESS_KEY", secret, "AWS_ALLOW_HTTP", "true",
        "AWS_EC2_METADATA_DISABLED", "true"));
    return env;
  }

  @Test
  void aMatchingEnvironmentPasses() {
    assertDoesNotThrow(() -> MemWalEnvironment.check(s3("http://127.0.0.1:9000"), env("http://127.0.0.1:9000/", SECRET)));
  }

  @Test
  void localStoresNeedNothing() {
    assertDoesNotThrow(() -> MemWalEnvironment.check(StoreConfig.of(Map.of("path", "/tmp/x")), Map.of()));
  }

  @Test
  void anotherEndpointIsRefusedShowingBoth() {
    BadOptionException e = assertThrows(BadOptionException.class,
        () -> MemWalEnvironment.check(s3("http://127.0.0.1:9001"), env("http://127.0.0.1:9000", SECRET)));
    assertTrue(e.getMessage().contains("AWS_ENDPOINT differs") && e.getMessage().contains("127.0.0.1:9001"),
        e.getMessage());
  }

  @Test
  void anotherSecretIsRefusedWithoutShowingEither() {
    BadOptionException e = assertThrows(BadOptionException.class,
        () -> MemWalEnvironment.check(s3("http://127.0.0.1:9000"), env("http://127.0.0.1:9000", "other-secret")));
    assertTrue(e.getMessage().contains("AWS_SECRET_ACCESS_KEY differs"), e.getMessage());
    assertTrue(!e.getMessage().contains(SECRET) && !e.getMessage().contains("other-secret"), e.getMessage());
  }

  @Test
  void anHttpEndpointNeedsAllowHttp() {
    Map<String, String> env = env("http://127.0.0.1:9000", SECRET);
    env.remove("AWS_ALLOW_HTTP");
    BadOptionException e = assertThrows(BadOptionException.class,
        () -> MemWalEnvironment.check(s3("http://127.0.0.1:9000"), env));
    assertTrue(e.getMessage().contains("AWS_ALLOW_HTTP"), e.getMessage());
  }

  @Test
  void everyEndpointVariableMustNameTheStoresEndpoint() {
    for (String variable : new String[] {"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"}) {
      Map<String, String> env = env("http://127.0.0.1:9000", SECRET);
      env.put(variable, "http://127.0.0.1:9999");
      BadOptionException e = assertThrows(BadOptionException.class,
          () -> MemWalEnvironment.check(s3("http://127.0.0.1:9000"), env), variable);
      assertTrue(e.getMessage().contains(variable + " differs") && e.getMessage().contains("127.0.0.1:9999"),
          e.getMessage());
    }
    Map<String, String> viaUrl = env("http://127.0.0.1:9000", SECRET);
    viaUrl.put("AWS_ENDPOINT_URL", viaUrl.remove("AWS_ENDPOINT"));
    assertDoesNotThrow(() -> MemWalEnvironment.check(s3("http://127.0.0.1:9000"), viaUrl));
  }

  @Test
  void anEndpointInTheEnvironmentIsRefusedWhenTheOptionsNameNone() {
    StoreConfig aws = StoreConfig.of(Map.of("path", "s3://bucket/store", "storage.aws_region", "us-east-1",
        "storage.aws_access_key_id", "key-id", "storage.aws_secret_access_key", SECRET));
    Map<String, String> env = env("http://127.0.0.1:9000", SECRET);
    BadOptionException e = assertThrows(BadOptionException.class, () -> MemWalEnvironment.check(aws, env));
    assertTrue(e.getMessage().contains("AWS_ENDPOINT is set") && e.getMessage().contains("name no endpoint"),
        e.getMessage());
    env.remove("AWS_ENDPOINT");
    assertDoesNotThrow(() -> MemWalEnvironment.check(aws, env));
  }

  @Test
  void ofTwoStoresWithDifferentEndpointsInOneJvmOnlyTheOneTheEnvironmentNamesOpens() {
    Map<String, String> env = env("http://127.0.0.1:9000", SECRET);
    assertDoesNotThrow(() -> MemWalEnvironment.check(s3("http://127.0.0.1:9000"), env));
    BadOptionException e = assertThrows(BadOptionException.class,
        () -> MemWalEnvironment.check(s3("http://127.0.0.1:9001"), env));
    assertTrue(e.getMessage().contains("storage.*") && e.getMessage().contains("AWS_ENDPOINT differs"), e.getMessage());
  }
}
