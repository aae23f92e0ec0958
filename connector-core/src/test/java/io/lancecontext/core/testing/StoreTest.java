package io.lancecontext.core.testing;

import io.lancecontext.core.ContextStore;
import java.nio.file.Path;
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
}
