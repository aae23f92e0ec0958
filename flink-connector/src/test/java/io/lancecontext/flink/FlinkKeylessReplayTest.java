package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.flink.sink.LanceContextSink;
import io.lancecontext.flink.sink.LanceContextWriterState;
import io.lancecontext.flink.sink.RecordConverter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.vector.BigIntVector;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * At-least-once, records without a key: a job that fails once after a checkpoint (having put rows after it)
 * and restarts from it replays those rows with the keys the failed attempt gave them, so no row is duplicated.
 */
class FlinkKeylessReplayTest {
  static final int RECORDS = 3_000;
  static final String SPEC = "{\"key\": \"id\", \"columns\": [{\"name\": \"id\", \"type\": \"string\", \"nullable\": false},"
      + " {\"name\": \"value\", \"type\": \"int64\"}]}";

  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(2);

  @TempDir
  static Path dir;

  /** Shared by the attempts (the MiniCluster runs in this JVM). */
  static final AtomicBoolean failed = new AtomicBoolean();
  static final AtomicInteger attempts = new AtomicInteger();
  static final AtomicLong putAfterCheckpoint = new AtomicLong();

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  /** A keyless record. */
  public static class Value {
    public long value;

    public Value() {}

    Value(long value) {
      this.value = value;
    }
  }

  /**
   * Slows the stream (1 ms a record) and, in the first attempt, throws 300 records after the first completed
   * checkpoint: by then the interval flushes have put those rows, keyed, into the store.
   */
  static final class FailOnceAfterACheckpoint extends RichMapFunction<Long, Value> implements CheckpointListener {
    private transient volatile boolean checkpointed;
    private transient int sinceCheckpoint;

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext context) {
      attempts.incrementAndGet();
    }

    @Override
    public Value map(Long n) throws Exception {
      Thread.sleep(1);
      if (checkpointed && !failed.get() && ++sinceCheckpoint == 300) {
        failed.set(true);
        putAfterCheckpoint.set(sinceCheckpoint);
        throw new IllegalStateException("a failure injected by the test at record " + n);
      }
      return new Value(n);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      checkpointed = true;
    }
  }

  /** The writer state keeps the seed and ordinal (version 2) and reads a version-1 state (a checkpoint id) as one without them. */
  @Test
  void theWriterStateKeepsTheSeedAndOrdinalAndReadsVersionOne() throws Exception {
    var serializer = LanceContextSink.builder().options(Map.of("path", dir.resolve("state").toString(), "schema", SPEC))
        .deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build(RecordConverter.pojo(Value.class))
        .getWriterStateSerializer();
    LanceContextWriterState state = new LanceContextWriterState(7, "flink-s-j/0/u", 1234);
    assertEquals(state, serializer.deserialize(serializer.getVersion(), serializer.serialize(state)));
    LanceContextWriterState none = new LanceContextWriterState(8, null, 0);
    assertEquals(none, serializer.deserialize(serializer.getVersion(), serializer.serialize(none)));
    assertEquals(new LanceContextWriterState(9, null, 0),
        serializer.deserialize(1, java.nio.ByteBuffer.allocate(8).putLong(9).array()));
  }

  @Test
  void keylessRowsReplayedAfterAFailoverReplaceTheirFirstWriteInsteadOfDuplicatingIt() throws Exception {
    String path = dir.resolve("keyless").toString();
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.enableCheckpointing(300);
    env.setParallelism(1);
    env.fromSequence(0, RECORDS - 1)
        .map(new FailOnceAfterACheckpoint())
        .sinkTo(LanceContextSink.builder().options(Map.of("path", path, "schema", SPEC))
            .deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).flushInterval(Duration.ofMillis(20))
            .build(RecordConverter.pojo(Value.class)));
    env.execute("keyless-replay");
    assertTrue(failed.get(), "the job failed once");
    assertEquals(2, attempts.get(), "one restart");

    List<Long> values = new ArrayList<>();
    try (ContextStore store = ContextStore.open(Map.of("path", path));
        StoreReader r = store.scan(ScanSpec.all().withColumns(List.of("value")))) {
      while (r.next()) {
        BigIntVector v = (BigIntVector) r.batch().getVector("value");
        for (int i = 0; i < r.batch().getRowCount(); i++) {
          values.add(v.get(i));
        }
      }
    }
    Collections.sort(values);
    List<Long> expected = new ArrayList<>();
    for (long n = 0; n < RECORDS; n++) {
      expected.add(n);
    }
    assertEquals(RECORDS, values.size(), "every record once, none duplicated by the replay");
    assertEquals(expected, values);
  }
}
