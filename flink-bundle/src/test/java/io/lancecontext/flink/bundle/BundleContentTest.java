package io.lancecontext.flink.bundle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The bundle jar (run after the shade, in the package phase): everything the connector needs that Flink 2.3 does
 * not ship, no class that Flink's jars hold (slf4j-api above all), the table factory registered; and
 * docs/deploy-flink.md names this jar and the settings {@link BundleOnClusterTest} runs the cluster with.
 */
class BundleContentTest {
  static final String VERSION = System.getProperty("lancecontext.version");
  static final Path JAR = Path.of(System.getProperty("lancecontext.bundle.jar"));

  @Test
  void bundleHoldsTheConnectorAndWhatFlinkLacks() throws IOException {
    try (ZipFile jar = new ZipFile(JAR.toFile())) {
      for (String needed : List.of("io/lancecontext/flink/table/LanceContextDynamicTableFactory.class",
          "io/lancecontext/flink/sink/LanceContextSink.class", "io/lancecontext/core/ContextStore.class",
          "org/apache/flink/connector/base/DeliveryGuarantee.class", "org/lance/Dataset.class",
          "nativelib/linux-x86-64/liblance_jni.so", "io/questdb/jar/jni/JarJniLoader.class",
          "org/apache/arrow/vector/FieldVector.class", "org/apache/arrow/memory/BufferAllocator.class",
          "org/apache/arrow/c/Data.class", "io/netty/buffer/ByteBuf.class",
          "com/fasterxml/jackson/databind/ObjectMapper.class", "com/github/benmanes/caffeine/cache/Caffeine.class",
          "software/amazon/awssdk/services/s3/S3Client.class")) {
        assertNotNull(jar.getEntry(needed), "the bundle holds " + needed);
      }
      ZipEntry services = jar.getEntry("META-INF/services/org.apache.flink.table.factories.Factory");
      assertNotNull(services, "'connector' = 'lancecontext' is registered");
      String registered = new String(jar.getInputStream(services).readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(registered.contains("io.lancecontext.flink.table.LanceContextDynamicTableFactory"), registered);
      assertTrue(jar.stream().noneMatch(e -> e.getName().startsWith("org/slf4j/")),
          "no slf4j-api: version 2 in lib/ would shadow Flink's 1.7 and its log4j binding");
      assertTrue(jar.stream().noneMatch(e -> e.getName().startsWith("org/apache/logging/")), "no log4j");
      assertTrue(jar.stream().filter(e -> !e.isDirectory() && e.getName().startsWith("org/apache/flink/"))
          .allMatch(e -> e.getName().startsWith("org/apache/flink/connector/base/")),
          "of Flink, flink-connector-base only (not in a distribution's lib/)");
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

  /** No class of the bundle is also in Flink's jars (the module's provided dependencies), so no two versions meet. */
  @Test
  void noClassIsAlsoInFlinksJars() throws IOException {
    Set<String> flink = new HashSet<>();
    for (String path : Files.readString(Path.of(System.getProperty("lancecontext.flink.classpath"))).strip()
        .split(File.pathSeparator)) {
      try (ZipFile jar = new ZipFile(path)) {
        jar.stream().map(ZipEntry::getName).filter(n -> n.endsWith(".class") && !n.endsWith("module-info.class"))
            .forEach(flink::add);
      }
    }
    assertTrue(flink.contains("org/apache/flink/runtime/taskexecutor/TaskManagerRunner.class"), "Flink's jars read");
    List<String> both = new ArrayList<>();
    try (ZipFile jar = new ZipFile(JAR.toFile())) {
      jar.stream().map(ZipEntry::getName).filter(flink::contains).limit(20).forEach(both::add);
    }
    assertEquals(List.of(), both, "classes in the bundle and in Flink's jars");
  }

  @Test
  void bundleIsNamedForItsFlinkVersion() {
    String flink = System.getProperty("lancecontext.flink.version");
    String minor = flink.substring(0, flink.indexOf('.', flink.indexOf('.') + 1));
    assertEquals("lancecontext-flink-" + minor + "-" + VERSION + ".jar", JAR.getFileName().toString(),
        "the artifactId names Flink's major.minor (" + flink + ")");
  }

  /** docs/deploy-flink.md shows this jar in lib/ and the settings the cluster test runs with. */
  @Test
  void deployPageNamesThisBundleAndTheTestedSettings() throws IOException {
    String doc = Files.readString(Path.of(System.getProperty("lancecontext.docs"), "deploy-flink.md"));
    String jar = JAR.getFileName().toString();
    assertTrue(doc.contains("flink-bundle/target/" + jar.replace(VERSION, "<version>")), "where the build puts it");
    assertTrue(doc.contains("io.lancecontext:" + jar.replace("-" + VERSION + ".jar", "") + ":<version>"),
        "its coordinates");
    assertTrue(doc.contains(jar + " $FLINK_HOME/lib/"), "the copy into lib/");
    for (String option : BundleOnClusterTest.JVM_OPTIONS) {
      assertTrue(doc.contains(option), "the JVM option " + option);
    }
    assertTrue(doc.contains("env.java.opts.all: " + BundleOnClusterTest.JVM_OPTIONS.get(0)), "for every Flink JVM");
    assertTrue(doc.contains("env.java.opts.taskmanager: " + BundleOnClusterTest.BUDGET_OPTION.replace("64MiB", "")),
        "the TaskManagers' session budget");
    assertTrue(doc.contains("LANCE_LOG=" + BundleOnClusterTest.LANCE_LOG), "lance's native log filter");
    assertTrue(doc.contains("-Djava.io.tmpdir="), "where the native library is unpacked");
  }
}
