package org.lance;

import io.questdb.jar.jni.JarJniLoader;
import io.questdb.jar.jni.Platform;
import io.questdb.jar.jni.PlatformConventions;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Paths;
import java.util.Enumeration;

/**
 * The tests' stand-in for lance-core 7.0.0's {@code org.lance.JniLoader}: it loads the native library in place
 * when the test class path holds it as a plain file, instead of copying it to {@code java.io.tmpdir} first.
 *
 * <p>lance-core's own class calls questdb's jar-jni, which copies the 181 MB library to a temp file in every JVM
 * before loading it (docs/lance-core-7.md, "The native library"): about 0.3 s of CPU and 181 MB written per JVM,
 * even when the build has unpacked the library into {@code target/test-classes} (the parent POM's
 * {@code unpack-lance-native-for-tests}). Core's, Spark's and Flink's tests start about 80 JVMs (test forks, child
 * processes, executors, TaskManagers). This class comes first on their class path (core compiles it; Spark and
 * Flink unpack it from core's test jar, {@code in-place-lance-loader-for-tests}); the library it loads is the same
 * file, byte for byte.
 *
 * <p>Everywhere else lance-core's loader runs as users have it: in the bundles' cluster tests, the consumer builds
 * of integration-tests, the notebook, the demo and the benchmarks; and in a JVM started with
 * {@code -Dlancecontext.test.native.copy=true} ({@code NativeLibraryTest}, which checks jar-jni's copies). It keeps
 * the members lance-core's class has: {@code ensureLoaded()}, and the native {@code initLanceLogger()} that the
 * library binds by this class's name.
 */
public class JniLoader {
  /** System property: {@code true} loads the library as lance-core 7.0.0 does (a temp copy per JVM). */
  public static final String COPY_PROPERTY = "lancecontext.test.native.copy";

  static {
    load();
    initLanceLogger();
  }

  private JniLoader() {}

  public static void ensureLoaded() {}

  static native void initLanceLogger();

  private static void load() {
    URL url = unpacked();
    if (Boolean.getBoolean(COPY_PROPERTY) || url == null) {
      JarJniLoader.loadLib(Dataset.class, "/nativelib", "lance_jni");
      return;
    }
    try {
      System.load(Paths.get(url.toURI()).toString());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot load lance's native library from " + url, e);
    }
  }

  /**
   * The library as a plain file anywhere on the class path (not only first: child JVMs put their jars first, for
   * class-data sharing), or null.
   */
  private static URL unpacked() {
    String name = "nativelib/" + Platform.RESOURCE_PREFIX + "/" + PlatformConventions.LIB_PREFIX + "lance_jni"
        + PlatformConventions.LIB_SUFFIX;
    try {
      Enumeration<URL> all = Dataset.class.getClassLoader().getResources(name);
      while (all.hasMoreElements()) {
        URL url = all.nextElement();
        if ("file".equals(url.getProtocol())) {
          return url;
        }
      }
      return null;
    } catch (IOException e) {
      return null;
    }
  }
}
