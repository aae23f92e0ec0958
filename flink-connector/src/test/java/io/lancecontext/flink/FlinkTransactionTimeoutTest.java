package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.TransactionExpiredException;
import io.lancecontext.flink.sink.LanceContextCommittable;
import io.lancecontext.flink.sink.LanceContextSink;
import io.lancecontext.flink.sink.RecordConverter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly-once and {@code txn.timeout}: a committable restored within the timeout (but later than
 * {@code gc.grace}) publishes; one restored later is reported and dropped, and the job goes on; a timeout a
 * checkpoint could outlive is refused when the job is built.
 */
class FlinkTransactionTimeoutTest {
  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static Map<String, String> options(String name, String timeout) {
    return Map.of("path", dir.resolve(name).toString(), "schema", "rollout", "schema.embedding-dim", "2",
        "gc.grace", "0s", "txn.timeout", timeout, "merge.trigger.interval", "1h");
  }

  /** Stages 20 rows of {@code txn} as a writer subtask does at a checkpoint barrier. */
  private static LanceContextCommittable staged(Map<String, String> options, long checkpoint, String txn) {
    try (ContextStore store = ContextStore.open(options);
        StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txn, "0").build())) {
      for (int i = 0; i < 20; i++) {
        w.write(Map.of("id", txn + "-" + i, "reward", (double) i));
      }
      Map<String, List<byte[]>> summaries = new HashMap<>();
      summaries.put(txn, List.of(w.commit().toBytes()));
      return new LanceContextCommittable(checkpoint, summaries);
    }
  }

  private static Committer<LanceContextCommittable> committer(Map<String, String> options) throws Exception {
    LanceContextSink<Map<String, Object>> sink = LanceContextSink.builder().options(options)
        .build(RecordConverter.maps());
    return sink.createCommitter(FlinkSinkTest.committerContext(-1));
  }

  /** A commit request that records a failure with a known reason instead of failing the test. */
  private static final class Request extends FlinkSinkTest.Request {
    Throwable failedWithKnownReason;

    Request(LanceContextCommittable committable) {
      super(committable);
    }

    @Override
    public void signalFailedWithKnownReason(Throwable t) {
      failedWithKnownReason = t;
    }
  }

  @Test
  void aCommittableRestoredLaterThanTheGraceButWithinTheTimeoutPublishes() throws Exception {
    Map<String, String> options = options("within", "1h");
    LanceContextCommittable restored = staged(options, 4, "flink-within-4");
    Thread.sleep(50);
    try (ContextStore store = ContextStore.open(options)) {
      store.gc();  // gc.grace 0: before txn.timeout this aborted the checkpoint's transaction
    }
    try (Committer<LanceContextCommittable> committer = committer(options)) {
      Request request = new Request(restored);
      committer.commit(List.of(request));
      assertEquals(null, request.failedWithKnownReason);
    }
    try (ContextStore store = ContextStore.open(options)) {
      assertEquals(20, store.count());
    }
  }

  @Test
  void aCommittableRestoredAfterItsTimeoutIsReportedAndTheNextCheckpointStillPublishes() throws Exception {
    Map<String, String> options = options("late", "300ms");
    LanceContextCommittable lost = staged(options, 7, "flink-late-7");
    Thread.sleep(400);
    try (ContextStore store = ContextStore.open(options)) {
      store.gc();
    }
    LanceContextCommittable next = staged(options, 8, "flink-late-8");
    try (Committer<LanceContextCommittable> committer = committer(options)) {
      Request expired = new Request(lost);
      Request fine = new Request(next);
      committer.commit(List.of(expired, fine));
      assertTrue(expired.failedWithKnownReason instanceof TransactionExpiredException, "" + expired.failedWithKnownReason);
      assertTrue(expired.failedWithKnownReason.getMessage().contains("txn.timeout"));
      assertFalse(fine.retryLater || fine.alreadyCommitted);
    }
    try (ContextStore store = ContextStore.open(options)) {
      assertEquals(20, store.count(), "the next checkpoint's rows");
      assertTrue(store.get("flink-late-8-3").isPresent());
    }
  }

  @Test
  void aTimeoutACheckpointCouldOutliveIsRefusedWhenTheJobIsBuilt() {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.enableCheckpointing(60_000);
    env.getCheckpointConfig().setCheckpointTimeout(120_000);
    LanceContextSink<Map<String, Object>> sink = LanceContextSink.builder().options(options("short", "2min"))
        .build(RecordConverter.maps());
    env.fromData(List.<Map<String, Object>>of(Map.of("id", "a")),
        org.apache.flink.api.common.typeinfo.TypeInformation.of(new org.apache.flink.api.common.typeinfo.TypeHint<
            Map<String, Object>>() {})).sinkTo(sink);
    BadOptionException e = assertThrows(BadOptionException.class, () -> env.getStreamGraph(false));
    assertEquals("txn.timeout", e.key());
    assertTrue(e.getMessage().contains("checkpoint interval plus the checkpoint timeout"), e.getMessage());

    StreamExecutionEnvironment ok = StreamExecutionEnvironment.getExecutionEnvironment();
    ok.enableCheckpointing(60_000);
    ok.getCheckpointConfig().setCheckpointTimeout(120_000);
    LanceContextSink<Map<String, Object>> longer = LanceContextSink.builder().options(options("longer", "4min"))
        .build(RecordConverter.maps());
    ok.fromData(List.<Map<String, Object>>of(Map.of("id", "a")),
        org.apache.flink.api.common.typeinfo.TypeInformation.of(new org.apache.flink.api.common.typeinfo.TypeHint<
            Map<String, Object>>() {})).sinkTo(longer);
    ok.getStreamGraph(false);
  }
}
