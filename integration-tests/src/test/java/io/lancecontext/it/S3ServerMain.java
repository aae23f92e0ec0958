package io.lancecontext.it;

import io.lancecontext.core.testing.S3ServerExtension;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;

/**
 * The local S3 server of the engine tests on S3, as a JVM of its own: core's {@link S3ServerExtension}
 * (s3proxy 4.1.0, in-memory, 127.0.0.1, a free port, a random secret, one bucket) on this module's test
 * class path, which holds neither Spark nor Flink (Spark mediates {@code jakarta.servlet-api} to 5.0.0 and
 * s3proxy then answers 500). Started by {@link S3Server}; speaks over stdin/stdout:
 *
 * <ul>
 *   <li>on start: {@code endpoint <url>}, {@code secret <key>}, {@code bucket <name>}, {@code access-key <id>},
 *       {@code region <name>}, {@code ready};
 *   <li>{@code list <prefix>}: {@code object <key>} per object under the prefix, then {@code end};
 *   <li>{@code stop} or the end of stdin: stops the server and exits.
 * </ul>
 */
public final class S3ServerMain {
  private S3ServerMain() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    S3ServerExtension server = new S3ServerExtension();
    server.start();
    try {
      out.println("endpoint " + server.endpoint());
      out.println("secret " + server.secretKey());
      out.println("bucket " + S3ServerExtension.BUCKET);
      out.println("access-key " + S3ServerExtension.ACCESS_KEY);
      out.println("region " + S3ServerExtension.REGION);
      out.println("ready");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null && !line.equals("stop")) {
        if (line.startsWith("list ")) {
          try (S3Client client = server.client()) {
            List<String> keys = client.listObjectsV2Paginator(ListObjectsV2Request.builder()
                .bucket(S3ServerExtension.BUCKET).prefix(line.substring(5)).build())
                .contents().stream().map(o -> o.key()).toList();
            keys.forEach(k -> out.println("object " + k));
          }
        }
        out.println("end");
      }
    } finally {
      server.stop();
    }
  }
}
