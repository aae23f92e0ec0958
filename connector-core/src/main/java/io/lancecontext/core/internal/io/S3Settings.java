package io.lancecontext.core.internal.io;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.StoreOptions;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The S3 connection a store's storage options describe, read from the keys Lance (Rust {@code object_store})
 * reads, so one set of {@code storage.*} options configures Lance and lancecontext alike:
 *
 * <table>
 * <caption>keys</caption>
 * <tr><th>setting</th><th>key (aliases)</th><th></th></tr>
 * <tr><td>endpoint</td><td>{@code aws_endpoint} ({@code aws_endpoint_url}, {@code endpoint}, {@code endpoint_url})</td>
 *     <td>optional: AWS itself when absent</td></tr>
 * <tr><td>region</td><td>{@code aws_region} ({@code region}, {@code aws_default_region}, {@code default_region})</td>
 *     <td>required</td></tr>
 * <tr><td>access key</td><td>{@code aws_access_key_id} ({@code access_key_id})</td><td>required</td></tr>
 * <tr><td>secret key</td><td>{@code aws_secret_access_key} ({@code secret_access_key})</td><td>required</td></tr>
 * <tr><td>session token</td><td>{@code aws_session_token} ({@code aws_token}, {@code session_token}, {@code token})</td>
 *     <td>optional</td></tr>
 * <tr><td>plain HTTP</td><td>{@code allow_http} ({@code aws_allow_http})</td>
 *     <td>must be {@code true} for an {@code http://} endpoint, as Lance requires</td></tr>
 * <tr><td>addressing</td><td>{@code aws_virtual_hosted_style_request} ({@code virtual_hosted_style_request})</td>
 *     <td>path style unless {@code true}, as Lance</td></tr>
 * </table>
 *
 * <p>Region and credentials are required: without them the SDK (and Lance) would ask AWS's instance
 * metadata service and AWS itself, which a store must never do behind its user's back. Other keys are
 * Lance's and are ignored here. Two aliases of one setting with different values are refused.
 *
 * <p>Equal settings share one SDK client, so equality includes the secrets; {@link #toString()} never
 * shows them.
 */
public record S3Settings(String endpoint, String region, String accessKeyId, String secretAccessKey, String sessionToken,
    boolean allowHttp, boolean virtualHostedStyle) {

  static final List<String> ENDPOINT = List.of("aws_endpoint", "aws_endpoint_url", "endpoint", "endpoint_url");
  static final List<String> REGION = List.of("aws_region", "region", "aws_default_region", "default_region");
  static final List<String> ACCESS_KEY_ID = List.of("aws_access_key_id", "access_key_id");
  static final List<String> SECRET_ACCESS_KEY = List.of("aws_secret_access_key", "secret_access_key");
  static final List<String> SESSION_TOKEN = List.of("aws_session_token", "aws_token", "session_token", "token");
  static final List<String> ALLOW_HTTP = List.of("allow_http", "aws_allow_http");
  static final List<String> VIRTUAL_HOSTED = List.of("aws_virtual_hosted_style_request", "virtual_hosted_style_request");

  /**
   * Reads the settings from storage options (keys without the {@code storage.} prefix).
   *
   * @throws BadOptionException naming every missing {@code storage.*} key, or a contradictory or invalid one
   */
  public static S3Settings from(Map<String, String> options) {
    String endpoint = one(options, ENDPOINT);
    String region = one(options, REGION);
    String keyId = one(options, ACCESS_KEY_ID);
    String secret = one(options, SECRET_ACCESS_KEY);
    String token = one(options, SESSION_TOKEN);
    boolean allowHttp = bool(options, ALLOW_HTTP);
    boolean virtualHosted = bool(options, VIRTUAL_HOSTED);
    List<String> missing = new ArrayList<>();
    if (region == null) {
      missing.add(StoreOptions.STORAGE_PREFIX + REGION.get(0));
    }
    if (keyId == null) {
      missing.add(StoreOptions.STORAGE_PREFIX + ACCESS_KEY_ID.get(0));
    }
    if (secret == null) {
      missing.add(StoreOptions.STORAGE_PREFIX + SECRET_ACCESS_KEY.get(0));
    }
    if (!missing.isEmpty()) {
      throw new BadOptionException(missing.get(0), "a store on s3:// needs " + String.join(", ", missing)
          + " (missing; region and credentials are always given explicitly, never looked up from AWS's instance "
          + "metadata or the environment)");
    }
    if (endpoint != null) {
      URI u;
      try {
        u = URI.create(endpoint);
      } catch (IllegalArgumentException e) {
        throw new BadOptionException(StoreOptions.STORAGE_PREFIX + ENDPOINT.get(0), "'" + endpoint + "' is not a URL");
      }
      String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
      if (!scheme.equals("http") && !scheme.equals("https") || u.getHost() == null) {
        throw new BadOptionException(StoreOptions.STORAGE_PREFIX + ENDPOINT.get(0),
            "'" + endpoint + "' is not an http:// or https:// URL");
      }
      if (scheme.equals("http") && !allowHttp) {
        throw new BadOptionException(StoreOptions.STORAGE_PREFIX + ALLOW_HTTP.get(0),
            "must be true for the plain-HTTP endpoint '" + endpoint + "' (Lance refuses it otherwise)");
      }
      while (endpoint.endsWith("/")) {
        endpoint = endpoint.substring(0, endpoint.length() - 1);
      }
    }
    return new S3Settings(endpoint, region, keyId, secret, token, allowHttp, virtualHosted);
  }

  private static String one(Map<String, String> options, List<String> keys) {
    String value = null;
    String from = null;
    for (String k : keys) {
      String v = options.get(k);
      if (v == null || v.isEmpty()) {
        continue;
      }
      if (value != null && !value.equals(v)) {
        throw new BadOptionException(StoreOptions.STORAGE_PREFIX + k, "contradicts " + StoreOptions.STORAGE_PREFIX
            + from + " (both name the same setting; give one)");
      }
      value = v;
      from = k;
    }
    return value;
  }

  private static boolean bool(Map<String, String> options, List<String> keys) {
    String v = one(options, keys);
    if (v == null) {
      return false;
    }
    switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new BadOptionException(StoreOptions.STORAGE_PREFIX + keys.get(0), "'" + v + "' is not true or false");
    }
  }

  @Override
  public String toString() {
    return "S3Settings[endpoint=" + (endpoint == null ? "(AWS)" : endpoint) + ", region=" + region
        + ", credentials=(redacted)" + (allowHttp ? ", allow_http" : "") + (virtualHostedStyle ? ", virtual-hosted" : "")
        + "]";
  }
}
