package io.lancecontext.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives each test a fresh Arrow allocator and fails the test if it leaks: every buffer allocated
 * through it must be released by the end of the test. Register with {@code @RegisterExtension}.
 */
public final class AllocatorExtension implements BeforeEachCallback, AfterEachCallback {
  private RootAllocator allocator;

  public BufferAllocator allocator() {
    return allocator;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    allocator = new RootAllocator();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    RootAllocator a = allocator;
    allocator = null;
    long leaked = a.getAllocatedMemory();
    String detail = leaked == 0 ? "" : a.toVerboseString();
    try {
      a.close();
    } catch (IllegalStateException e) {
      // reported below with the allocator's own account of what is still held
    }
    assertEquals(0, leaked, () -> "Arrow memory leaked by the test:\n" + detail);
  }
}
