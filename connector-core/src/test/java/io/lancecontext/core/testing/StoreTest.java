package io.lancecontext.core.testing;

import io.lancecontext.core.ContextStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Base of tests that open stores: a fresh directory per test, and no store left resident between tests
 * (each test starts with no writer, cache or handle of an earlier one).
 */
public abstract class StoreTest {
  @TempDir
  protected Path dir;

  @BeforeEach
  @AfterEach
  void closeResidentStores() {
    ContextStore.closeAllResident();
  }

  /** The Lance data files ({@code data/*.lance}) of the datasets under {@code root} (parts, generations), sorted. */
  protected static List<Path> dataFiles(Path root) {
    try (var files = Files.walk(root)) {
      return files.filter(f -> f.toString().endsWith(".lance") && f.getParent().getFileName().toString().equals("data"))
          .sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether the base table of the store at {@code store} holds {@code file} itself in its {@code data/} (linked). */
  protected static boolean inBase(Path store, Path file) {
    Path base = store.resolve("data").resolve(file.getFileName());
    try {
      return Files.exists(base) && Files.isSameFile(base, file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The options of store {@code name} under {@code dir} of preset {@code schema}: 4-dimension embeddings, 2 shards,
   * then {@code more} (name, value pairs, which override those).
   */
  public static Map<String, String> options(Path dir, String name, String schema, String... more) {
    Map<String, String> o = new HashMap<>();
    o.put("path", dir.resolve(name).toString());
    o.put("schema", schema);
    o.put("schema.embedding-dim", "4");
    o.put("shards", "2");
    for (int i = 0; i < more.length; i += 2) {
      o.put(more[i], more[i + 1]);
    }
    return o;
  }
}
