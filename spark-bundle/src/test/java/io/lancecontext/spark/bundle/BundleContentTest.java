package io.lancecontext.spark.bundle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The bundle jar (run after the shade, in the package phase): everything the connector needs that Spark 4.1 does
 * not ship, nothing Spark ships (one Arrow per JVM), the data source registered; the jar is named for the Spark and
 * Scala versions it is built for; and the spark-submit snippets of docs/deploy-spark.md name this jar and version.
 */
class BundleContentTest {
  static final String VERSION = System.getProperty("lancecontext.version");
  static final Path JAR = Path.of(System.getProperty("lancecontext.bundle.jar"));

  @Test
  void bundleHoldsTheConnectorAndLanceButNothingSparkShips() throws IOException {
    try (ZipFile jar = new ZipFile(JAR.toFile())) {
      for (String needed : List.of("io/lancecontext/spark/LanceContextDataSource.class",
          "io/lancecontext/core/ContextStore.class", "org/lance/Dataset.class", "nativelib/linux-x86-64/liblance_jni.so",
          "org/apache/arrow/c/Data.class", "com/github/benmanes/caffeine/cache/Caffeine.class",
          "software/amazon/awssdk/services/s3/S3Client.class")) {
        assertNotNull(jar.getEntry(needed), "the bundle holds " + needed);
      }
      for (String spark : List.of("org/apache/spark/SparkContext.class", "org/apache/arrow/vector/FieldVector.class",
          "org/apache/arrow/memory/BufferAllocator.class", "scala/Option.class",
          "com/fasterxml/jackson/databind/ObjectMapper.class", "io/netty/buffer/ByteBuf.class", "org/slf4j/Logger.class")) {
        assertNull(jar.getEntry(spark), "Spark 4.1.3 ships " + spark + ": the bundle must not");
      }
      ZipEntry services = jar.getEntry("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister");
      assertNotNull(services, "format(\"lancecontext\") is registered");
      String registered = new String(jar.getInputStream(services).readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(registered.contains("io.lancecontext.spark.LanceContextDataSource"), registered);
    }
  }

  /**
   * The native libraries of lance-core and arrow-dataset for every platform they ship, as their jars hold them: the
   * same names, CRCs, sizes and compressed sizes (the build adds them raw after the shade,
   * build-tools/AddNativeLibraries.java).
   */
  @Test
  void bundleHoldsTheNativeLibrariesAsTheirJarsHoldThem() throws IOException {
    try (ZipFile jar = new ZipFile(JAR.toFile())) {
      for (String[] source : List.of(new String[] {"lancecontext.lance-core.jar", "nativelib/"},
          new String[] {"lancecontext.arrow-dataset.jar", "arrow_dataset_jni/"})) {
        try (ZipFile from = new ZipFile(System.getProperty(source[0]))) {
          List<String> names = from.stream().map(ZipEntry::getName).filter(n -> n.startsWith(source[1])).toList();
          assertTrue(names.stream().filter(n -> n.matches(".*\\.(so|dylib)")).count() >= 2, names::toString);
          for (String name : names) {
            ZipEntry want = from.getEntry(name);
            ZipEntry got = jar.getEntry(name);
            assertNotNull(got, "the bundle holds " + name);
            assertEquals(List.of(want.getCrc(), want.getSize(), want.getCompressedSize(), (long) want.getMethod()),
                List.of(got.getCrc(), got.getSize(), got.getCompressedSize(), (long) got.getMethod()), name);
          }
          assertEquals(names, jar.stream().map(ZipEntry::getName).filter(n -> n.startsWith(source[1])).toList());
        }
      }
    }
  }

  @Test
  void bundleIsNamedForItsSparkAndScalaVersions() {
    String spark = System.getProperty("lancecontext.spark.version");
    String minor = spark.substring(0, spark.indexOf('.', spark.indexOf('.') + 1));
    assertEquals("lancecontext-spark-" + minor + "_" + System.getProperty("lancecontext.scala.binary.version") + "-"
        + VERSION + ".jar", JAR.getFileName().toString(), "the artifactId names Spark's major.minor (" + spark
        + ") and the Scala binary version");
  }

  /** docs/deploy-spark.md submits with this jar and the settings {@link BundleOnClusterTest} runs with. */
  @Test
  void deployPageSubmitsWithThisBundleAndVersion() throws IOException {
    String doc = Files.readString(Path.of(System.getProperty("lancecontext.docs"), "deploy-spark.md"));
    Matcher block = Pattern.compile("```\\n(.*?)```", Pattern.DOTALL).matcher(doc);
    List<String> submits = new ArrayList<>();
    while (block.find()) {
      if (block.group(1).contains("spark-submit")) {
        submits.add(block.group(1));
      }
    }
    assertTrue(submits.size() >= 2, "docs/deploy-spark.md shows spark-submit with the bundle");
    String jarName = JAR.getFileName().toString();
    String artifact = jarName.substring(0, jarName.length() - ("-" + VERSION + ".jar").length());
    for (String s : submits) {
      Matcher jars = Pattern.compile(Pattern.quote(artifact) + "-[^ /\\\\]*?\\.jar").matcher(s);
      int named = 0;
      while (jars.find()) {
        assertEquals(jarName, jars.group(), s);
        named++;
      }
      assertTrue(named >= 2, "the bundle on the driver's and the executors' class path:\n" + s);
      assertTrue(s.contains("spark.driver.extraClassPath=") && s.contains("spark.executor.extraClassPath="),
          "lance-core must be on the system class path:\n" + s);
    }
    assertTrue(doc.contains("io.lancecontext:" + artifact + ":<version>"), "the --packages coordinates");
    assertTrue(doc.contains("spark-bundle/target/" + artifact + "-<version>.jar"), "where the build puts it");
    // what BundleOnClusterTest sets on its executors
    for (String key : List.of("spark.executorEnv.LANCE_LOG=warn,lance::index=off",
        "spark.executorEnv.LANCECONTEXT_CACHE_BYTES=", "spark.executor.extraJavaOptions=-Djava.io.tmpdir=")) {
      assertTrue(submits.stream().anyMatch(s -> s.contains(key)), "a spark-submit example sets " + key);
    }
  }
}
