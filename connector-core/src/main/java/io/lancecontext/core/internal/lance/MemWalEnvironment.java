package io.lancecontext.core.internal.lance;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.internal.io.S3Settings;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * lance-core 7.0.0's MemWAL writer and its generation reads ignore a dataset's storage options on S3 and
 * take the endpoint and credentials from the process environment ({@code AWS_*}; fixed upstream in Lance
 * 9). A JVM cannot change its own environment safely, so a store on {@code s3://} opens only when the
 * environment says what its {@code storage.*} options say: otherwise the MemWAL would write to another
 * endpoint or account (or ask AWS for the bucket's region). The check names every variable to set and
 * never prints a secret. Two stores in one JVM with different endpoints or credentials: the second fails
 * here, at open.
 */
public final class MemWalEnvironment {
  private static final List<String> ENDPOINT_VARIABLES = List.of("AWS_ENDPOINT", "AWS_ENDPOINT_URL",
      "AWS_ENDPOINT_URL_S3");

  private MemWalEnvironment() {}

  /** Checks {@code config} against this process's environment (no-op for stores not on S3). */
  public static void check(StoreConfig config) {
    check(config, System.getenv());
  }

  static void check(StoreConfig config, Map<String, String> env) {
    String uri = config.uri();
    if (!(uri.startsWith("s3://") || uri.startsWith("s3a://"))) {
      return;
    }
    S3Settings wanted = S3Settings.from(config.storageOptions());
    List<String> problems = new ArrayList<>();
    compareEndpoints(problems, env, wanted.endpoint());
    compare(problems, "AWS_REGION", first(env, "AWS_REGION", "AWS_DEFAULT_REGION"), wanted.region(), true);
    compare(problems, "AWS_ACCESS_KEY_ID", env.get("AWS_ACCESS_KEY_ID"), wanted.accessKeyId(), false);
    compare(problems, "AWS_SECRET_ACCESS_KEY", env.get("AWS_SECRET_ACCESS_KEY"), wanted.secretAccessKey(), false);
    if (wanted.sessionToken() != null) {
      compare(problems, "AWS_SESSION_TOKEN", env.get("AWS_SESSION_TOKEN"), wanted.sessionToken(), false);
    }
    if (wanted.endpoint() != null && wanted.endpoint().startsWith("http://")
        && !"true".equalsIgnoreCase(env.getOrDefault("AWS_ALLOW_HTTP", ""))) {
      problems.add("AWS_ALLOW_HTTP must be true (the endpoint is http://)");
    }
    if (wanted.endpoint() != null && !"true".equalsIgnoreCase(env.getOrDefault("AWS_EC2_METADATA_DISABLED", ""))) {
      problems.add("AWS_EC2_METADATA_DISABLED should be true (or lance-core asks the EC2 metadata service)");
    }
    if (!problems.isEmpty()) {
      throw new BadOptionException(StoreOptions.STORAGE_PREFIX + "*", "the store at " + uri + " is on S3, where "
          + "lance-core 7.0.0's MemWAL writer ignores storage options and reads the process environment instead; "
          + "start the JVM with environment variables that match the store's storage.* options: "
          + String.join("; ", problems));
    }
  }

  private static String first(Map<String, String> env, String a, String b) {
    String v = env.get(a);
    return v == null || v.isEmpty() ? env.get(b) : v;
  }

  /**
   * Every endpoint variable that is set must name the options' endpoint, and one must be set when the
   * options name one: lance-core reads {@code AWS_ENDPOINT} or {@code AWS_ENDPOINT_URL}, and
   * {@code AWS_ENDPOINT_URL_S3} redirects even its base-table requests. A store whose options name no
   * endpoint (AWS itself) refuses any of them, since the MemWAL would write there and the store's own
   * files would not.
   */
  private static void compareEndpoints(List<String> problems, Map<String, String> env, String wanted) {
    boolean anySet = false;
    for (String variable : ENDPOINT_VARIABLES) {
      String value = env.get(variable);
      if (value == null || value.isBlank()) {
        continue;
      }
      anySet = true;
      if (wanted == null) {
        problems.add(variable + " is set (" + strip(value) + ") but the storage options name no endpoint: unset it, "
            + "or give " + StoreOptions.STORAGE_PREFIX + "aws_endpoint the same value");
      } else {
        compare(problems, variable, value, wanted, true);
      }
    }
    if (wanted != null && !anySet) {
      problems.add("AWS_ENDPOINT is not set (set it to " + wanted + ")");
    }
  }

  private static void compare(List<String> problems, String variable, String actual, String wanted, boolean show) {
    if (wanted == null) {
      return;
    }
    String a = actual == null ? null : strip(actual);
    if (a == null || a.isEmpty()) {
      problems.add(variable + " is not set" + (show ? " (set it to " + wanted + ")" : ""));
    } else if (!Objects.equals(a, strip(wanted))) {
      problems.add(variable + " differs from the storage option" + (show ? " (" + a + " vs " + wanted + ")" : ""));
    }
  }

  private static String strip(String s) {
    String t = s.strip();
    while (t.endsWith("/")) {
      t = t.substring(0, t.length() - 1);
    }
    return t;
  }
}
