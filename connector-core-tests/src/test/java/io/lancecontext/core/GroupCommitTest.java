package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;

/**
 * Group commit: calls that queue while the bucket is busy go out in one put, and each returns when that put
 * is acknowledged, without waiting for the bucket's lock behind the next put.
 */
class GroupCommitTest extends StoreTest {
  private static final int CALLERS = 6;

  @Test
  void callsQueuedWhileTheBucketIsBusyShareOnePutAndAllReturn() throws Exception {
    Map<String, String> o = options(dir, "group", "rollout", "shards", "1", "merge.trigger.interval", "1h");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(List.of(rec("id", "warm-up")));
      BucketWriter writer = store.resident().writers()[0];
      long putsBefore = puts(writer);
      long groupedBefore = writer.counters()[0];
      List<Thread> callers = new ArrayList<>();
      ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
      writer.beginPublish();  // holds the bucket's lock, as a put in flight would
      try {
        for (int c = 0; c < CALLERS; c++) {
          String id = "c" + c;
          Thread t = new Thread(() -> {
            try {
              store.add(List.of(rec("id", id + "-0"), rec("id", id + "-1")));
            } catch (Throwable e) {
              failures.add(e);
            }
          }, "caller-" + c);
          callers.add(t);
          t.start();
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (writer.queuedCalls() < CALLERS) {
          assertTrue(System.nanoTime() < deadline, "callers queued: " + writer.queuedCalls());
          Thread.sleep(5);
        }
      } finally {
        writer.endPublish();
      }
      for (Thread t : callers) {
        t.join(30_000);
        assertFalse(t.isAlive(), t.getName() + " did not return");
      }
      assertTrue(failures.isEmpty(), failures.toString());
      assertEquals(1, puts(writer) - putsBefore, "the queued calls went out in one put");
      assertEquals(CALLERS, writer.counters()[0] - groupedBefore, "every call shared that put");
      assertEquals(1 + 2 * CALLERS, store.count());
    }
  }

  private static long puts(BucketWriter writer) {
    return writer.stats().stream().mapToLong(BucketWriter.LaneStats::puts).sum();
  }
}
