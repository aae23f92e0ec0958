package io.lancecontext.core.options;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OptionsDocTest {
  private static String docs() throws Exception {
    Path p = Path.of("..", "docs", "options.md");
    return Files.readString(p);
  }

  @Test
  void everyOptionIsDocumentedWithItsDefaultAndDescription() throws Exception {
    String docs = docs();
    for (ConfigOption<?> o : StoreOptions.ALL) {
      String def = o.isRequired() ? "(required)" : o.defaultText() == null ? (o == StoreOptions.CACHE_BYTES ? "`2GiB`" : "(none)")
          : "`" + o.defaultText() + "`";
      String row = "| `" + o.key() + "` | " + def + " | " + o.scope().label() + " | " + o.description() + " |";
      assertTrue(docs.contains(row), () -> "docs/options.md lacks or differs for " + o.key() + "; expected row:\n" + row);
    }
    assertTrue(docs.contains("| `storage.*` | (none) | resident store |"));
  }

  @Test
  void valuesParseAndUnknownKeysAreRejected() {
    StoreConfig c = StoreConfig.of(Map.of("path", "/tmp/x", "write.put-timeout", "250ms", "write.batch-bytes", "1MiB",
        "storage.aws_secret_access_key", "s3cr3t"));
    assertEquals(Duration.ofMillis(250), c.putTimeout());
    assertEquals(1L << 20, c.get(StoreOptions.BATCH_BYTES));
    assertEquals(Map.of("aws_secret_access_key", "s3cr3t"), c.storageOptions());
    assertTrue(!c.toString().contains("s3cr3t") && c.toString().contains("****"), c.toString());
    BadOptionException e = assertThrows(BadOptionException.class, () -> StoreConfig.of(Map.of("path", "/x", "merge.every", "1")));
    assertEquals("merge.every", e.key());
    BadOptionException missing = assertThrows(BadOptionException.class, () -> StoreConfig.of(Map.of("shards", "2")));
    assertEquals("path", missing.key());
    BadOptionException zero = assertThrows(BadOptionException.class, () -> StoreConfig.of(Map.of("path", "/x", "shards", "0")));
    assertTrue(zero.getMessage().contains("positive"), zero.getMessage());
  }
}
