package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.error.WriteInterruptedException;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.internal.write.BucketWriter;
import io.lancecontext.core.testing.StoreTest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A cancelled task (an interrupted add) and a store closed under running adds: each failure is typed,
 * retryable and confined to its own call; nothing acknowledged is lost and no Arrow memory is left held.
 */
class CancelledAndClosedAddsTest extends StoreTest {
  private static final int THREADS = 4;
  private static final int ADDS = 120;

  /** What one adding thread saw: add numbers acknowledged and interrupted, and anything else thrown. */
  private static final class Adder {
    final List<Integer> acked = Collections.synchronizedList(new ArrayList<>());
    final Map<Integer, String> interrupted = new ConcurrentHashMap<>();
    final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
  }

  private static List<Map<String, Object>> rows(String prefix, int i) {
    return List.of(rec("id", prefix + "-" + i + "-0", "sequence_order", i), rec("id", prefix + "-" + i + "-1",
        "sequence_order", i));
  }

  @Test
  void anInterruptedAddFailsAloneWithARetryableErrorAndTheShardStaysOwned() throws Exception {
    long baseline = LanceRuntime.get().allocator().getAllocatedMemory();
    // one bucket, so that every thread adds to the same shard and calls share puts (group commit); seal
    // thresholds out of reach, so that the writer stays the one opened by the first add unless abandoned
    Map<String, String> o = options(dir, "cancel", "rollout", "shards", "1", "write.batch-bytes", "4GiB",
        "merge.trigger.interval", "1h");
    Adder[] adders = new Adder[THREADS];
    int interrupts = 0;
    long opensBefore;
    try (ContextStore store = ContextStore.open(o)) {
      store.add(List.of(rec("id", "warm-up")));
      opensBefore = lanes(store).stream().mapToLong(BucketWriter.LaneStats::opens).sum();
      CountDownLatch start = new CountDownLatch(1);
      CountDownLatch running = new CountDownLatch(THREADS);
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        Adder a = adders[t] = new Adder();
        String prefix = "t" + t;
        threads.add(new Thread(() -> {
          try {
            start.await();
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
          running.countDown();
          for (int i = 0; i < ADDS; i++) {
            try {
              store.add(rows(prefix, i));
              a.acked.add(i);
            } catch (WriteInterruptedException e) {
              a.interrupted.put(i, e.getMessage());
              if (!e.isRetryable()) {
                a.errors.add(new AssertionError("an interrupted add must be retryable", e));
              }
            } catch (RuntimeException | Error e) {
              a.errors.add(e);
            }
            Thread.interrupted();  // the interrupt was for the add just made
          }
        }, "adder-" + t));
      }
      threads.forEach(Thread::start);
      start.countDown();
      running.await();
      Thread victim = threads.get(0);
      while (victim.isAlive()) {
        victim.interrupt();
        interrupts++;
        TimeUnit.MICROSECONDS.sleep(ThreadLocalRandom.current().nextInt(200, 3_000));
      }
      for (Thread t : threads) {
        t.join(TimeUnit.MINUTES.toMillis(5));
        assertTrue(!t.isAlive(), t.getName() + " is stuck");
      }

      for (Adder a : adders) {
        assertTrue(a.errors.isEmpty(), () -> "only the interrupted adds fail, and only typed: " + a.errors);
      }
      for (int t = 1; t < THREADS; t++) {
        assertEquals(ADDS, adders[t].acked.size(), "thread " + t + " was never interrupted: every add succeeds");
      }
      Adder v = adders[0];
      assertEquals(ADDS, v.acked.size() + v.interrupted.size());
      assertTrue(v.interrupted.size() >= 5, "the interrupts did reach adds: " + v.interrupted.size());

      for (int t = 0; t < THREADS; t++) {
        for (int i : adders[t].acked) {
          for (Map<String, Object> r : rows("t" + t, i)) {
            assertTrue(store.get((String) r.get("id")).isPresent(), "acknowledged row " + r.get("id") + " lost");
          }
        }
      }
      Map<String, Integer> kinds = new HashMap<>();
      for (Map.Entry<Integer, String> e : v.interrupted.entrySet()) {
        List<String> keys = rows("t0", e.getKey()).stream().map(r -> (String) r.get("id")).toList();
        int present = store.get(keys).size();
        assertTrue(present == 0 || present == 2, "add " + e.getKey() + " left " + present + " of its 2 rows: " + e.getValue());
        if (e.getValue().contains("nothing was written")) {
          assertEquals(0, present, "add " + e.getKey() + " said nothing was written: " + e.getValue());
        }
        kinds.merge(e.getValue().replaceAll(".*interrupted (\\w+ \\w+).*", "$1"), 1, Integer::sum);
      }
      List<BucketWriter.LaneStats> lanes = lanes(store);
      assertEquals(0, lanes.stream().mapToLong(BucketWriter.LaneStats::abandoned).sum(), "no writer was abandoned");
      assertEquals(opensBefore, lanes.stream().mapToLong(BucketWriter.LaneStats::opens).sum(),
          "the shard stayed owned: no writer was opened again");
      System.out.printf("interrupts: %d sent, %d adds interrupted %s, %d acknowledged, %d calls shared a put%n",
          interrupts, v.interrupted.size(), kinds, v.acked.size(), store.resident().writers()[0].counters()[0]);
    }
    ContextStore.closeAllResident();
    assertEquals(baseline, LanceRuntime.get().allocator().getAllocatedMemory(), "every failed put released its buffers");
  }

  @Test
  void addsRacingCloseAllResidentCompleteOrFailRetryableAndTyped() throws Exception {
    long baseline = LanceRuntime.get().allocator().getAllocatedMemory();
    Map<String, String> o = options(dir, "closing", "rollout");
    ContextStore.open(o).close();
    Map<String, String> reopen = Map.of("path", o.get("path"));
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger closes = new AtomicInteger();
    AtomicInteger closedSeen = new AtomicInteger();
    Set<String> acked = ConcurrentHashMap.newKeySet();
    List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      String prefix = "c" + t;
      threads.add(new Thread(() -> {
        ContextStore handle = ContextStore.open(reopen);
        try {
          for (int i = 0; !stop.get(); i++) {
            // four rows over both buckets: the second bucket's put runs on the store's put pool
            List<Map<String, Object>> rows = new ArrayList<>(rows(prefix, i));
            rows.addAll(rows(prefix + "x", i));
            while (true) {
              try {
                handle.add(rows);
                rows.forEach(r -> acked.add((String) r.get("id")));
                break;
              } catch (LanceContextException e) {
                if (!e.isRetryable()) {
                  errors.add(e);
                  return;
                }
                if (e instanceof StoreClosedException) {
                  closedSeen.incrementAndGet();
                  handle.close();
                  handle = ContextStore.open(reopen);
                }
              }
            }
          }
        } catch (RuntimeException | Error e) {
          errors.add(e);
        } finally {
          handle.close();
        }
      }, "adder-" + t));
    }
    Thread closer = new Thread(() -> {
      while (!stop.get()) {
        try {
          TimeUnit.MILLISECONDS.sleep(ThreadLocalRandom.current().nextInt(10, 80));
          ContextStore.closeAllResident();
          closes.incrementAndGet();
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException | Error e) {
          errors.add(e);
        }
      }
    }, "closer");
    threads.forEach(Thread::start);
    closer.start();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
    while (System.nanoTime() < end && closes.get() < 20 && errors.isEmpty()) {
      Thread.sleep(50);
    }
    stop.set(true);
    closer.join(TimeUnit.MINUTES.toMillis(2));
    for (Thread t : threads) {
      t.join(TimeUnit.MINUTES.toMillis(2));
      assertTrue(!t.isAlive(), t.getName() + " is stuck");
    }
    assertTrue(errors.isEmpty(), () -> "every failure is typed and retryable: " + errors.stream()
        .map(Throwable::toString).collect(Collectors.joining("\n")));
    assertTrue(closes.get() >= 5, "the stores were closed under the adds: " + closes.get());
    assertTrue(closedSeen.get() >= 1, "some adds met a closed store: " + closedSeen.get());
    try (ContextStore store = ContextStore.open(reopen)) {
      List<String> keys = new ArrayList<>(acked);
      assertEquals(keys.size(), store.get(keys).size(), "every acknowledged row is there");
      System.out.printf("close race: %d closes, %d adds met a closed store, %d rows acknowledged%n", closes.get(),
          closedSeen.get(), keys.size());
    }
    ContextStore.closeAllResident();
    assertEquals(baseline, LanceRuntime.get().allocator().getAllocatedMemory(), "no Arrow memory left behind");
  }

  private static List<BucketWriter.LaneStats> lanes(ContextStore store) {
    List<BucketWriter.LaneStats> out = new ArrayList<>();
    for (BucketWriter w : store.resident().writers()) {
      out.addAll(w.stats());
    }
    return out;
  }
}
