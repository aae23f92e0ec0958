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
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
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
 * throws at random points (at least 5 restarts, fixed-delay restarts); the final store holds every key once
 * with the value written last. Each key is written {@value #WRITES} times with increasing values (batch
 * {@code b} writes the {@value #BATCH} keys of group {@code b / WRITES}, each record's value its index in the
 * input), so keys get their last value all through the run, across checkpoints and restarts; the records of a
 * key stay in input order up to the sink (the map is keyed by the record's key), so a replay or publish out of
 * order leaves an older value. Exactly-once: a reader polling the store meanwhile never sees
 * part of a checkpoint. And a checkpoint that expires after every writer staged it: its transaction is
 * published, whole, by the next completed one.
 *
 * <p>How a reader recognises a checkpoint's rows: the source emits batch ids, and a chained flat map expands
 * each into {@value #BATCH} records tagged with the batch id and the batch size, all inside one emit, so a
 * checkpoint barrier never falls inside a batch: every checkpoint holds whole batches. A batch rewrites all
 * the keys of its group, which spread over every bucket and both writer subtasks, so a checkpoint published
 * in parts would show a batch with fewer rows than its size (the rest of its group still of an older batch).
 */
class FlinkFailoverTest {
  static final int BATCHES = 200;
  static final int BATCH = 250;
  /** How many times each key is written: by {@code WRITES} consecutive batches, one group of keys. */
  static final int WRITES = 4;
  static final int FAILURES = Integer.getInteger("failures", 6);
  static final String SPEC = "{\"key\": \"id\", \"columns\": [{\"name\": \"id\", \"type\": \"string\", \"nullable\": false},"
      + " {\"name\": \"batch\", \"type\": \"int64\"}, {\"name\": \"batch_size\", \"type\": \"int32\"},"
      + " {\"name\": \"value\", \"type\": \"int64\"}]}";

  /** The sink's and Flink's committer metrics, read by {@link SlowSnapshotOnce} while the job runs. */
  static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.withReporter(2, REPORTER);

  @TempDir
  static Path dir;

  /** Failures still to throw, shared by the map's subtasks and attempts (the MiniCluster runs in this JVM). */
  static final AtomicInteger failuresLeft = new AtomicInteger();
  static final AtomicInteger failuresThrown = new AtomicInteger();

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  /** Record {@code i}: a key of its batch's group, its batch, the batch's size and, as value, {@code i}. */
  public static class Event {
    public String id;
    public long batch;
    public int batch_size;
    public long value;

    public Event() {}

    Event(int i) {
      this.batch = i / BATCH;
      this.id = String.format("k%05d", (int) (batch / WRITES) * BATCH + i % BATCH);
      this.batch_size = BATCH;
      this.value = i;
    }
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
        .keyBy(e -> e.id).map(new FailAtRandom())
        .sinkTo(sink);
    env.execute("failover-" + guarantee);
  }

  /** The final store holds every key of the input once, with the value written last. */
  private static void assertEqualsInput(ContextStore store) {
    assertEqualsInput(store, BATCHES);
  }

  /**
   * The store holds the keys of {@code batches} batches once each, each with the batch and value of its last
   * write: key {@code j} of group {@code g} last written by batch {@code (g + 1) * WRITES - 1}, as record
   * {@code ((g + 1) * WRITES - 1) * BATCH + j}.
   */
  private static void assertEqualsInput(ContextStore store, int batches) {
    int groups = batches / WRITES;
    assertEquals(groups * BATCH, store.count());
    Map<String, long[]> rows = new HashMap<>();
    try (StoreReader r = store.scan(ScanSpec.all().withColumns(List.of("id", "batch", "value")))) {
      while (r.next()) {
        var batch = r.batch();
        var ids = (org.apache.arrow.vector.VarCharVector) batch.getVector("id");
        BigIntVector b = (BigIntVector) batch.getVector("batch");
        BigIntVector v = (BigIntVector) batch.getVector("value");
        for (int i = 0; i < batch.getRowCount(); i++) {
          rows.put(new String(ids.get(i), java.nio.charset.StandardCharsets.UTF_8), new long[] {b.get(i), v.get(i)});
        }
      }
    }
    List<String> older = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      long last = (g + 1L) * WRITES - 1;
      for (int j = 0; j < BATCH; j++) {
        String key = String.format("k%05d", g * BATCH + j);
        long[] row = rows.get(key);
        if (row == null || row[0] != last || row[1] != last * BATCH + j) {
          older.add(key + "=" + (row == null ? "missing" : "batch " + row[0] + " value " + row[1]) + " (last written "
              + "by batch " + last + ", value " + (last * BATCH + j) + ")");
        }
      }
    }
    assertEquals(groups * BATCH, rows.size());
    assertEquals(List.of(), older.subList(0, Math.min(5, older.size())), older.size() + " keys without their last "
        + "value, the first 5 listed");
  }

  /**
   * Polls a store (a scan every 20 ms) while a job writes it and counts the states in which some batch is
   * visible with fewer rows than its size: part of a checkpoint, or of a transaction, since both hold whole
   * batches and every batch spans both writer subtasks.
   */
  static final class PollingReader {
    private final AtomicBoolean done = new AtomicBoolean();
    private final AtomicInteger polls = new AtomicInteger();
    private final AtomicInteger partialStates = new AtomicInteger();
    private final AtomicInteger intermediateStates = new AtomicInteger();
    private final AtomicReference<String> firstPartial = new AtomicReference<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Thread thread;
    private final long total;

    private PollingReader(String path, long total) {
      this.total = total;
      thread = new Thread(() -> poll(path), "polling-reader");
    }

    /** Polls the store at {@code path}, into which the job writes {@code total} keys. */
    static PollingReader start(String path, long total) {
      PollingReader r = new PollingReader(path, total);
      r.thread.start();
      return r;
    }

    private void poll(String path) {
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
          if (rows > 0 && rows < total) {
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
        failure.set(t);
      }
    }

    void stop() throws InterruptedException {
      done.set(true);
      thread.join(60_000);
    }

    /** No poll saw part of a batch, and at least {@code minIntermediate} polls saw a state between empty and full. */
    void assertNeverSawPartOfABatch(int minIntermediate) {
      assertEquals(null, failure.get(), "the reader failed");
      assertEquals(0, partialStates.get(), "states showing part of a checkpoint, of " + polls.get() + " polls; first: "
          + firstPartial.get());
      assertTrue(intermediateStates.get() >= minIntermediate, "the reader saw the store between checkpoints "
          + intermediateStates.get() + " times in " + polls.get() + " polls");
    }
  }

  @Test
  void exactlyOnceSurvivesRestartsAndReadersNeverSeePartOfACheckpoint() throws Exception {
    String path = dir.resolve("eo").toString();
    try (ContextStore created = ContextStore.open(Map.of("path", path, "schema", SPEC, "shards", "4"))) {
      assertEquals(0, created.count());
    }
    PollingReader reader = PollingReader.start(path, BATCHES / WRITES * BATCH);
    try {
      run(path, DeliveryGuarantee.EXACTLY_ONCE);
    } finally {
      reader.stop();
    }
    assertTrue(failuresThrown.get() >= 5, "restarts: " + failuresThrown.get());
    reader.assertNeverSawPartOfABatch(3);
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEqualsInput(store);
    }
  }

  static final long CHECKPOINT_TIMEOUT_MS = 2_000;
  /** Set by {@link SlowSnapshotOnce}: the checkpoint it let expire, and what it saw. */
  static final AtomicLong expiredCheckpoint = new AtomicLong();
  static final AtomicLong abortNotified = new AtomicLong();
  static final AtomicLong rowsBeforeExpired = new AtomicLong();
  static final AtomicLong rowsThroughExpired = new AtomicLong();
  static final AtomicLong visibleAtNextSnapshot = new AtomicLong(-1);
  static final AtomicLong pendingAtNextSnapshot = new AtomicLong(-1);
  static final AtomicReference<String> setupFailure = new AtomicReference<>();

  /** The sum of counter (or integer gauge) {@code metric} over the groups of {@code job} that have it, and how many have it. */
  static long[] metric(JobID job, String metric) {
    long sum = 0;
    long groups = 0;
    for (var group : REPORTER.getMetricsByGroup().entrySet()) {
      if (!job.toString().equals(group.getKey().getAllVariables().get("<job_id>"))) {
        continue;
      }
      Metric m = group.getValue().get(metric);
      if (m instanceof Counter c) {
        sum += c.getCount();
        groups++;
      } else if (m instanceof Gauge<?> g && g.getValue() instanceof Number n) {
        sum += n.longValue();
        groups++;
      }
    }
    return new long[] {sum, groups};
  }

  /** The records of the input up to the end of the newest batch the store shows (0 if it shows none). */
  static long recordsThroughNewestVisibleBatch(String path) {
    long newest = -1;
    try (ContextStore store = ContextStore.open(Map.of("path", path));
        StoreReader r = store.scan(ScanSpec.all().withColumns(List.of("batch")))) {
      while (r.next()) {
        BigIntVector b = (BigIntVector) r.batch().getVector("batch");
        for (int i = 0; i < r.batch().getRowCount(); i++) {
          newest = Math.max(newest, b.get(i));
        }
      }
    }
    return (newest + 1) * BATCH;
  }

  /**
   * Passes records on (chained to the source: the only way into the sink) and lets one checkpoint expire: at the
   * second checkpoint whose interval carried records it waits until both writer subtasks have staged it (their
   * {@code transactionsStaged} equals the checkpoints with records so far) and the committer has received its
   * committable (Flink's {@code totalCommittables}), then blocks its own snapshot past the checkpoint timeout.
   * The checkpoint is aborted after every writer took part in it, so its transaction is complete but not
   * published. At its next snapshot it records what a reader sees and the committables the committer holds.
   */
  static final class SlowSnapshotOnce extends RichMapFunction<Event, Event> implements CheckpointedFunction,
      CheckpointListener {
    private final String path;
    private transient long emitted;
    private transient long emittedAtLastSnapshot;
    private transient int checkpointsWithRows;

    SlowSnapshotOnce(String path) {
      this.path = path;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {
      if (context.isRestored()) {
        setupFailure.compareAndSet(null, "the job restarted");
      }
    }

    @Override
    public Event map(Event e) {
      emitted++;
      return e;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      long id = context.getCheckpointId();
      boolean withRows = emitted > emittedAtLastSnapshot;
      if (withRows) {
        checkpointsWithRows++;
      }
      JobID job = getRuntimeContext().getJobInfo().getJobId();
      if (expiredCheckpoint.get() == 0 && withRows && checkpointsWithRows == 2) {
        long deadline = context.getCheckpointTimestamp() + CHECKPOINT_TIMEOUT_MS;
        while (!(metric(job, "transactionsStaged")[0] == 2L * checkpointsWithRows
            && metric(job, "transactionsStaged")[1] == 2 && metric(job, "totalCommittables")[0] == checkpointsWithRows)) {
          if (System.currentTimeMillis() > deadline - 300) {
            setupFailure.compareAndSet(null, "checkpoint " + id + " was not staged by both writers and at the committer "
                + "within its timeout: transactionsStaged " + java.util.Arrays.toString(metric(job, "transactionsStaged"))
                + ", totalCommittables " + metric(job, "totalCommittables")[0] + ", expected " + checkpointsWithRows);
            break;
          }
          Thread.sleep(5);
        }
        rowsBeforeExpired.set(emittedAtLastSnapshot);
        rowsThroughExpired.set(emitted);
        expiredCheckpoint.set(id);
        Thread.sleep(Math.max(0, deadline + 500 - System.currentTimeMillis()));
      } else if (expiredCheckpoint.get() != 0 && visibleAtNextSnapshot.get() < 0) {
        visibleAtNextSnapshot.set(recordsThroughNewestVisibleBatch(path));
        pendingAtNextSnapshot.set(metric(job, "pendingCommittables")[0]);
      }
      emittedAtLastSnapshot = emitted;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {}

    @Override
    public void notifyCheckpointAborted(long checkpointId) {
      abortNotified.compareAndSet(0, checkpointId);
    }
  }

  /**
   * A checkpoint that expires after every writer staged its transaction and the committer received it: that
   * transaction stays invisible, the next completed checkpoint publishes it and its own one after the other, a
   * polling reader never sees part of either, and the final store holds each key's last value.
   */
  @Test
  void anExpiredCheckpointIsPublishedWholeWithTheNextOne() throws Exception {
    int batches = 80;
    String path = dir.resolve("expired").toString();
    try (ContextStore created = ContextStore.open(Map.of("path", path, "schema", SPEC, "shards", "4"))) {
      assertEquals(0, created.count());
    }
    expiredCheckpoint.set(0);
    abortNotified.set(0);
    visibleAtNextSnapshot.set(-1);
    pendingAtNextSnapshot.set(-1);
    setupFailure.set(null);
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(200));
    conf.set(CheckpointingOptions.CHECKPOINTING_TIMEOUT, Duration.ofMillis(CHECKPOINT_TIMEOUT_MS));
    // the one expiry, and room for a slow checkpoint on a busy machine (the assertions hold either way)
    conf.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, 5);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    PollingReader reader = PollingReader.start(path, batches / WRITES * BATCH);
    try {
      env.fromSequence(0, batches - 1).setParallelism(1)
          .flatMap(new ExpandBatch()).setParallelism(1)
          .map(new SlowSnapshotOnce(path)).setParallelism(1)
          .sinkTo(LanceContextSink.builder().options(Map.of("path", path, "schema", SPEC, "shards", "4"))
              .build(RecordConverter.pojo(Event.class)));
      env.execute("expired-checkpoint");
    } finally {
      reader.stop();
    }
    assertEquals(null, setupFailure.get());
    long expired = expiredCheckpoint.get();
    assertTrue(expired > 0, "no checkpoint was let expire");
    assertEquals(expired, abortNotified.get(), "the checkpoint aborted");
    assertTrue(rowsBeforeExpired.get() > 0 && rowsThroughExpired.get() > rowsBeforeExpired.get(),
        rowsBeforeExpired + " " + rowsThroughExpired);
    assertTrue(visibleAtNextSnapshot.get() <= rowsBeforeExpired.get(), "after checkpoint " + expired + " expired, "
        + "the store showed the input through record " + visibleAtNextSnapshot + "; the checkpoints before it held "
        + rowsBeforeExpired);
    assertTrue(pendingAtNextSnapshot.get() >= 1, "the committer holds the expired checkpoint's committable: "
        + pendingAtNextSnapshot);
    reader.assertNeverSawPartOfABatch(2);
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEqualsInput(store, batches);
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
