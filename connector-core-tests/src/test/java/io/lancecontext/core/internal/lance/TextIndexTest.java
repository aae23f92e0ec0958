package io.lancecontext.core.internal.lance;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Where lance-core 7.0.0 can build a full-text index without deadlocking: a CPU pool of 2 threads or more. */
class TextIndexTest {
  @Test
  void anIndexIsBuiltOnlyWhereLanceCoresCpuPoolHasTwoThreads() {
    assertFalse(TextIndex.buildable(null, null, 2), "2 processors less the reservation of 2: a pool of 1");
    assertFalse(TextIndex.buildable(null, null, 3));
    assertTrue(TextIndex.buildable(null, null, 4));
    assertTrue(TextIndex.buildable("2", null, 1), "LANCE_CPU_THREADS decides when set");
    assertFalse(TextIndex.buildable("1", null, 16));
    assertFalse(TextIndex.buildable("many", null, 16));
    assertTrue(TextIndex.buildable(null, "0", 2), "LANCE_IO_CORE_RESERVATION lowered");
  }
}
