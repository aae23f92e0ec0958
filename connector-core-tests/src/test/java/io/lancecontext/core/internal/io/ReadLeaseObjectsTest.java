package io.lancecontext.core.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lease's renewal never deletes the object it replaces, only the one before it, so a garbage collection
 * listing the leases while a renewal runs always sees one alive (a listing racing a move and a delete may miss
 * both of those two); closing the lease leaves only its newest object.
 */
class ReadLeaseObjectsTest {
  @TempDir
  Path dir;

  @Test
  void aRenewedLeaseAlwaysKeepsTheObjectItReplaced() throws Exception {
    StoreFiles files = StoreFiles.forUri(dir.toString());
    ReadLeases.Lease lease = ReadLeases.hold(files, System.currentTimeMillis(), Duration.ofMillis(80));  // every 20 ms
    try {
      Thread.sleep(120);
      for (int i = 0; i < 10; i++) {
        int objects = files.list(ReadLeases.DIR).size();
        assertTrue(objects >= 2 && objects <= 3, "the newest object and the one it replaced: " + objects);
        Thread.sleep(7);
      }
    } finally {
      lease.close();
    }
    assertEquals(1, files.list(ReadLeases.DIR).size(), "a closed lease leaves its newest object to run out");
    lease.release();
    assertEquals(0, files.list(ReadLeases.DIR).size());
  }
}
