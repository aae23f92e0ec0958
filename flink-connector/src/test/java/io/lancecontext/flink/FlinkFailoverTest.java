package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.flink.sink.LanceContextSink;
import io.lancecontext.flink.sink.RecordConverter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failover in both delivery modes: a job checkpointing every 200 ms writes 50,000 keyed records while a map
 * throws at random points (at least 5 restarts, fixed-delay restarts); the final store equals the input
 * exactly. Exactly-once: a reader polling the store meanwhile never sees part of a checkpoint.
 *
 * <p>How a reader recognises a checkpoint's rows: the source emits batch ids, and a chained flat map expands
 * each into {@value #BATCH} records tagged with the batch id and the batch size, all inside one emit, so a
 * checkpoint barrier never falls inside a batch: every checkpoint holds whole batches. A batch's keys spread
 * over every bucket and both writer subtasks, so a checkpoint published in parts would show a batch with
 * fewer rows than its size.
 */
class FlinkFailoverTest {
  static final int BATCHES = 200;
  static final int BATCH = 250;
  static final int RECORDS = BATCHES * BATCH;
  static final int FAILURES = Integer.getInteger("failures", 6);
  static final String SPEC = "{\"key\": \"id\", \"columns\": [{\"name\": \"id\", \"type\": \"string\", \"nullable\": false},"
      + " {\"name\": \"batch\", \"type\": \"int64\"}, {\"name\": \"batch_size\", \"type\": \"int32\"},"
      + " {\"name\": \"value\", \"type\": \"int64\"}]}";

  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(2);

  @TempDir
  static Path dir;

  /** Failures still to throw, shared by the map's subtasks and attempts (the MiniCluster runs in this JVM). */
  static final AtomicInteger failuresLeft = new AtomicInteger();
  static final AtomicInteger failuresThrown = new AtomicInteger();

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  /** One record: its key, its batch, the batch's size and a value derived from the key. */
  public static class Event {
    public String id;
    public long batch;
    public int batch_size;
    public long value;

    public Event() {}

    Event(int i) {
      this.id = String.format("k%05d", i);
      this.batch = i / BATCH;
      this.batch_size = BATCH;
      this.value = valueOf(i);
    }
  }

  static long valueOf(int i) {
    return (i * 2654435761L) ^ 0x5DEECE66DL;
  }

  /** Expands a batch id into its records, slowly enough for checkpoints and failures to fall during the run. */
  static final class ExpandBatch implements FlatMapFunction<Long, Event> {
    @Override
    public void flatMap(Long batch, Collector<Event> out) throws Exception {
      Thread.sleep(15);
      for (int i = 0; i < BATCH; i++) {
        out.collect(new Event((int) (batch * BATCH + i)));
      }
    }
  }

  /** Passes records through and, while failures are left, throws after a random number of them. */
  static final class FailAtRandom extends RichMapFunction<Event, Event> {
    private transient int countdown;

    @Override
    public void open(OpenContext context) {
      countdown = ThreadLocalRandom.current().nextInt(1_000, 6_000);
    }

    @Override
    public Event map(Event e) {
      if (--countdown == 0 && failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        failuresThrown.incrementAndGet();
        throw new IllegalStateException("a failure injected by the test at " + e.id);
      }
      return e;
    }
  }

  private static void run(String path, DeliveryGuarantee guarantee) throws Exception {
    failuresLeft.set(FAILURES);
    failuresThrown.set(0);
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 50);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.enableCheckpointing(200);
    env.setParallelism(2);
    LanceContextSink<Event> sink = LanceContextSink.builder()
        .options(Map.of("path", path, "schema", SPEC, "shards", "4"))
        .deliveryGuarantee(guarantee).flushInterval(Duration.ofMillis(100))
        .build(RecordConverter.pojo(Event.class));
    env.fromSequence(0, BATCHES - 1).setParallelism(1)
        .flatMap(new ExpandBatch()).setParallelism(1)
        .rebalance().map(new FailAtRandom())
        .sinkTo(sink);
    env.execute("failover-" + guarantee);
  }

  /** The final store holds every input record once, with its value (count and per-key checksum). */
  private static void assertEqualsInput(ContextStore store) {
    assertEquals(RECORDS, store.count());
    long expected = 0;
    long actual = 0;
    Map<String, Long> values = new HashMap<>();
    try (StoreReader r = store.scan(ScanSpec.all().withColumns(List.of("id", "value")))) {
      while (r.next()) {
        var batch = r.batch();
        var ids = (org.apache.arrow.vector.VarCharVector) batch.getVector("id");
        BigIntVector v = (BigIntVector) batch.getVector("value");
        for (int i = 0; i < batch.getRowCount(); i++) {
          values.put(new String(ids.get(i), java.nio.charset.StandardCharsets.UTF_8), v.get(i));
        }
      }
    }
    for (int i = 0; i < RECORDS; i++) {
      String key = String.format("k%05d", i);
      Long value = values.get(key);
      assertEquals(valueOf(i), value == null ? -1 : value, "value of " + key);
      expected += key.hashCode() * 31L + valueOf(i);
      actual += key.hashCode() * 31L + value;
    }
    assertEquals(RECORDS, values.size());
    assertEquals(expected, actual, "per-key checksum");
  }

  @Test
  void exactlyOnceSurvivesRestartsAndReadersNeverSeePartOfACheckpoint() throws Exception {
    String path = dir.resolve("eo").toString();
    try (ContextStore created = ContextStore.open(Map.of("path", path, "schema", SPEC, "shards", "4"))) {
      assertEquals(0, created.count());
    }
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger polls = new AtomicInteger();
    AtomicInteger partialStates = new AtomicInteger();
    AtomicInteger intermediateStates = new AtomicInteger();
    AtomicReference<String> firstPartial = new AtomicReference<>();
    AtomicReference<Throwable> readerFailure = new AtomicReference<>();
    Thread reader = new Thread(() -> {
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        while (!done.get()) {
          Map<Long, Integer> perBatch = new HashMap<>();
          Map<Long, Integer> sizes = new HashMap<>();
          try (StoreReader r = store.scan(ScanSpec.all().withColumns(List.of("batch", "batch_size")))) {
            while (r.next()) {
              BigIntVector b = (BigIntVector) r.batch().getVector("batch");
              IntVector s = (IntVector) r.batch().getVector("batch_size");
              for (int i = 0; i < r.batch().getRowCount(); i++) {
                perBatch.merge(b.get(i), 1, Integer::sum);
                sizes.put(b.get(i), s.get(i));
              }
            }
          }
          polls.incrementAndGet();
          long rows = perBatch.values().stream().mapToLong(Integer::longValue).sum();
          if (rows > 0 && rows < RECORDS) {
            intermediateStates.incrementAndGet();
          }
          List<String> partial = new ArrayList<>();
          perBatch.forEach((batch, n) -> {
            if (n.intValue() != sizes.get(batch)) {
              partial.add("batch " + batch + ": " + n + " of " + sizes.get(batch));
            }
          });
          if (!partial.isEmpty()) {
            partialStates.incrementAndGet();
            firstPartial.compareAndSet(null, partial + " (" + rows + " rows visible)");
          }
          Thread.sleep(20);
        }
      } catch (Throwable t) {
        readerFailure.set(t);
      }
    }, "polling-reader");
    reader.start();
    try {
      run(path, DeliveryGuarantee.EXACTLY_ONCE);
    } finally {
      done.set(true);
      reader.join(60_000);
    }
    assertEquals(null, readerFailure.get(), "the reader failed");
    assertTrue(failuresThrown.get() >= 5, "restarts: " + failuresThrown.get());
    assertEquals(0, partialStates.get(), "states showing part of a checkpoint, of " + polls.get() + " polls; first: "
        + firstPartial.get());
    assertTrue(intermediateStates.get() >= 3, "the reader saw the store between checkpoints "
        + intermediateStates.get() + " times in " + polls.get() + " polls");
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEqualsInput(store);
    }
  }

  @Test
  void atLeastOnceSurvivesRestartsWithTheInputExactly() throws Exception {
    String path = dir.resolve("alo").toString();
    run(path, DeliveryGuarantee.AT_LEAST_ONCE);
    assertTrue(failuresThrown.get() >= 5, "restarts: " + failuresThrown.get());
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEqualsInput(store);
    }
  }
}
