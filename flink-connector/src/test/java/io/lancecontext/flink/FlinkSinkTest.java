package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.flink.sink.LanceContextCommittable;
import io.lancecontext.flink.sink.LanceContextSink;
import io.lancecontext.flink.sink.LanceContextWriteResult;
import io.lancecontext.flink.sink.RecordConverter;
import java.io.IOException;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.metrics.groups.InternalSinkCommitterMetricGroup;
import java.nio.charset.StandardCharsets;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.TreeMap;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamEdge;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.streaming.runtime.partitioner.CustomPartitionerWrapper;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The DataStream sink: rows partitioned by their key's bucket before the writers, then upserted; its
 * committables are versioned and carry no secret; options that contradict the guarantee are refused.
 */
class FlinkSinkTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(2);

  @TempDir
  static Path dir;

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  @Test
  void rowsArePartitionedByBucketBeforeTheWritersAndAllArrive() throws Exception {
    String path = dir.resolve("ds").toString();
    RowType type = RowType.of(new org.apache.flink.table.types.logical.LogicalType[] {
        new VarCharType(false, VarCharType.MAX_LENGTH), new DoubleType()}, new String[] {"id", "reward"});
    LanceContextSink<RowData> sink = LanceContextSink.builder()
        .options(Map.of("path", path, "schema", "rollout", "shards", "4")).rowType(type).build();
    List<RowData> rows = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      rows.add(GenericRowData.of(StringData.fromString("k" + i), (double) i));
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(200);
    DataStream<RowData> source = env.fromData(rows, InternalTypeInfo.of(type));
    source.sinkTo(sink);
    StreamGraph graph = env.getStreamGraph(false);
    CustomPartitionerWrapper<?, RowData> partitioner = null;
    for (StreamNode node : graph.getStreamNodes()) {
      if (node.getOperatorName().contains("Writer")) {
        for (StreamEdge in : node.getInEdges()) {
          if (in.getPartitioner() instanceof CustomPartitionerWrapper<?, ?> p) {
            @SuppressWarnings("unchecked")
            CustomPartitionerWrapper<?, RowData> typed = (CustomPartitionerWrapper<?, RowData>) p;
            partitioner = typed;
          }
        }
      }
    }
    assertTrue(partitioner != null, "the sink writer's input is partitioned by a custom partitioner");
    // what the partitioner promises (LanceContextSink): bucket b of the key to writer subtask b % p, so each
    // bucket is written by one subtask
    partitioner.setup(2);
    var record = new org.apache.flink.runtime.plugable.SerializationDelegate<
        org.apache.flink.streaming.runtime.streamrecord.StreamRecord<RowData>>(null);
    Map<Integer, java.util.Set<Integer>> subtasksOfBucket = new HashMap<>();
    for (RowData row : rows) {
      record.setInstance(new org.apache.flink.streaming.runtime.streamrecord.StreamRecord<>(row));
      int subtask = partitioner.selectChannel(record);
      int bucket = ContextStore.bucketOf(row.getString(0).toString(), 4);
      assertEquals(bucket % 2, subtask, "row " + row.getString(0) + " of bucket " + bucket);
      subtasksOfBucket.computeIfAbsent(bucket, b -> new java.util.HashSet<>()).add(subtask);
    }
    assertEquals(4, subtasksOfBucket.size(), "every bucket has rows: " + subtasksOfBucket);
    assertTrue(subtasksOfBucket.values().stream().allMatch(t -> t.size() == 1), "one subtask per bucket: "
        + subtasksOfBucket);
    env.execute(graph);
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(500, store.count());
      assertEquals(42.0, store.get("k42").orElseThrow().get("reward"));
    }
  }

  /** A record of the {@code datagen} preset with all 33 columns set (every 5th with its nullable ones null). */
  static Map<String, Object> datagenEvent(int i) {
    Map<String, Object> r = new HashMap<>();
    r.put("event_id", "ev-" + i);
    r.put("run_id", "run-" + (i % 3));
    r.put("pipeline", "distill");
    r.put("stage", i % 2 == 0 ? "generate" : "filter");
    r.put("step", 1_000_000_000_000L + i);
    r.put("event_type", "completion");
    r.put("status", "ok");
    r.put("created_at", Instant.ofEpochSecond(1_700_000_000L + i, 123_456_000L));
    r.put("started_at", Instant.ofEpochSecond(1_700_000_001L + i));
    r.put("finished_at", Instant.ofEpochSecond(1_700_000_002L + i, 999_000L));
    r.put("duration_ms", 12.5 + i);
    r.put("worker_id", "w" + (i % 4));
    r.put("host", "host-" + i);
    r.put("generator_model", "model-a");
    r.put("prompt_template", "t{" + i + "}");
    r.put("prompt_text", "prompt \u00e9\u4e2d " + "x".repeat(i));
    r.put("output_text", "output " + i);
    r.put("output_binary", new byte[] {(byte) i, 0, (byte) 0xff});
    r.put("input_ids", List.of("in-" + i, "in-" + (i + 1)));
    r.put("output_ids", List.of("out-" + i));
    r.put("parent_event_id", i == 0 ? "root" : "ev-" + (i - 1));
    r.put("quality_score", i / 20.0);
    r.put("filter_passed", i % 3 != 0);
    r.put("filter_reason", "len");
    r.put("num_tokens_in", 100 + i);
    r.put("num_tokens_out", 200 + i);
    r.put("cost_usd", 0.001 * i);
    r.put("error_message", "none");
    r.put("retry_count", i % 2);
    r.put("seed", -42L - i);
    r.put("tags", List.of("t" + i, "datagen"));
    r.put("metadata_json", "{\"i\":" + i + "}");
    r.put("embedding", new float[] {i, -i, 0.5f});
    if (i % 5 == 4) {
      for (String nullable : List.of("run_id", "step", "created_at", "duration_ms", "output_binary", "input_ids",
          "filter_passed", "num_tokens_in", "seed", "tags", "embedding")) {
        r.put(nullable, null);
      }
    }
    return r;
  }

  /** Arrays as lists, so that records compare by value. */
  static Object comparable(Object v) {
    if (v instanceof byte[] b) {
      List<Byte> out = new ArrayList<>();
      for (byte x : b) {
        out.add(x);
      }
      return out;
    } else if (v instanceof float[] f) {
      List<Float> out = new ArrayList<>();
      for (float x : f) {
        out.add(x);
      }
      return out;
    } else if (v instanceof Float[] f) {
      return Arrays.asList(f);
    } else if (v instanceof Object[] a) {
      return Arrays.asList(a);
    } else if (v instanceof Map<?, ?> m) {
      Map<Object, Object> out = new TreeMap<>();
      m.forEach((k, x) -> out.put(k, comparable(x)));
      return out;
    }
    return v;
  }

  /**
   * The {@code datagen} preset (key {@code event_id}, not {@code id}; timestamps, lists, a blob, a vector)
   * through the DataStream sink as maps: core reads back every record equal to what was written, all 33
   * columns, and a Flink SQL scan of the store returns the same values.
   */
  @Test
  void theDatagenPresetWrittenThroughFlinkReadsBackEqual() throws Exception {
    String path = dir.resolve("datagen").toString();
    int n = 20;
    List<Map<String, Object>> events = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      events.add(datagenEvent(i));
    }
    LanceContextSink<Map<String, Object>> sink = LanceContextSink.builder()
        .options(Map.of("path", path, "schema", "datagen", "schema.embedding-dim", "3", "shards", "2",
            "write.batch-rows", "7"))
        .build(RecordConverter.maps());
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(200);
    env.fromData(events, Types.MAP(Types.STRING, Types.GENERIC(Object.class))).sinkTo(sink);
    env.execute();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(n, store.count());
      assertEquals(33, store.spec().columns().size());
      for (Map<String, Object> event : events) {
        Map<String, Object> back = store.get((String) event.get("event_id")).orElseThrow();
        assertEquals(comparable(event), comparable(back), "event " + event.get("event_id"));
      }
    }
    TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    tables.executeSql("CREATE TABLE d (event_id STRING, step BIGINT, created_at TIMESTAMP_LTZ(6), duration_ms DOUBLE,"
        + " output_binary BYTES, input_ids ARRAY<STRING>, filter_passed BOOLEAN, num_tokens_in INT,"
        + " embedding ARRAY<FLOAT NOT NULL>, PRIMARY KEY (event_id) NOT ENFORCED)"
        + " WITH ('connector' = 'lancecontext', 'path' = '" + path + "')");
    Map<String, List<Object>> scanned = new TreeMap<>();
    try (CloseableIterator<Row> rows = tables.executeSql("SELECT * FROM d").collect()) {
      rows.forEachRemaining(r -> {
        List<Object> values = new ArrayList<>();
        for (int f = 1; f < r.getArity(); f++) {
          values.add(comparable(r.getField(f)));
        }
        assertEquals(null, scanned.put((String) r.getField(0), values), "a key appears once");
      });
    }
    Map<String, List<Object>> model = new TreeMap<>();
    for (Map<String, Object> e : events) {
      List<Object> values = new ArrayList<>();
      for (String c : List.of("step", "created_at", "duration_ms", "output_binary", "input_ids", "filter_passed",
          "num_tokens_in", "embedding")) {
        values.add(comparable(e.get(c)));
      }
      model.put((String) e.get("event_id"), values);
    }
    assertEquals(model, scanned);
  }

  /**
   * At-least-once puts full buffers through the MemWAL: no bulk transaction (a Lance dataset and a publish per
   * buffer) unless {@code write.bulk-rows} asks for one.
   */
  @Test
  void atLeastOnceFullBuffersTakeTheWalPathUnlessBulkRowsIsSet() throws Exception {
    assertEquals(0, bulkTransactionsAfterAtLeastOnce("alo-wal", Map.of()));
    assertTrue(bulkTransactionsAfterAtLeastOnce("alo-bulk", Map.of("write.bulk-rows", "100")) > 0);
  }

  private static long bulkTransactionsAfterAtLeastOnce(String name, Map<String, String> extra) throws Exception {
    String path = dir.resolve(name).toString();
    Map<String, String> options = new java.util.HashMap<>(Map.of("path", path, "schema", "rollout", "shards", "2",
        "write.batch-rows", "100"));
    options.putAll(extra);
    RowType type = RowType.of(new org.apache.flink.table.types.logical.LogicalType[] {
        new VarCharType(false, VarCharType.MAX_LENGTH), new DoubleType()}, new String[] {"id", "reward"});
    LanceContextSink<RowData> sink = LanceContextSink.builder().options(options)
        .deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).rowType(type).build();
    List<RowData> rows = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      rows.add(GenericRowData.of(StringData.fromString("k" + i), (double) i));
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    env.fromData(rows, InternalTypeInfo.of(type)).sinkTo(sink);
    env.execute();
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(1_000, store.count());
      assertEquals(42.0, store.get("k42").orElseThrow().get("reward"));
    }
    Path txns = Path.of(path, "_lc", "txn");
    if (!java.nio.file.Files.isDirectory(txns)) {
      return 0;
    }
    try (var names = java.nio.file.Files.list(txns)) {
      return names.filter(n -> n.getFileName().toString().startsWith("bulk-")).count();
    }
  }

  @Test
  void committablesRoundTripVersionedAndCarryNoSecretOrLocation() throws Exception {
    String secret = "s3cr3t-sink-value";
    String path = dir.resolve("committables").toString();
    Map<String, String> options = Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "2",
        "storage.aws_secret_access_key", secret);
    LanceContextSink<Map<String, Object>> sink = LanceContextSink.builder().options(options)
        .build(RecordConverter.maps());
    assertEquals(DeliveryGuarantee.EXACTLY_ONCE, sink.deliveryGuarantee(), "the default");
    WriteSummary summary;
    try (ContextStore store = ContextStore.open(options);
        StoreWriter w = store.newWriter(WriterOptions.builder().transaction("flink-t-1", "0").build())) {
      w.write(Map.of("id", "a", "reward", 1.0));
      summary = w.commit();
    }
    LanceContextWriteResult result = new LanceContextWriteResult("flink-t-1", 0, summary.toBytes());
    SimpleVersionedSerializer<LanceContextWriteResult> results = sink.getWriteResultSerializer();
    byte[] resultBytes = results.serialize(result);
    assertEquals(result, results.deserialize(results.getVersion(), resultBytes));
    LanceContextCommittable committable = new LanceContextCommittable(7,
        Map.of("flink-t-2", List.of(summary.toBytes()), "flink-t-1", List.of(summary.toBytes(), summary.toBytes())));
    assertEquals(List.of("flink-t-1", "flink-t-2"), List.copyOf(committable.transactions().keySet()),
        "published in transaction order");
    SimpleVersionedSerializer<LanceContextCommittable> committables = sink.getCommittableSerializer();
    byte[] bytes = committables.serialize(committable);
    LanceContextCommittable back = committables.deserialize(committables.getVersion(), bytes);
    assertEquals(committable, back);
    assertArrayEquals(summary.toBytes(), back.transactions().get("flink-t-2").get(0));
    for (byte[] b : List.of(bytes, resultBytes)) {
      String text = new String(b, StandardCharsets.ISO_8859_1);
      assertFalse(text.contains(secret), "no storage secret");
      assertFalse(text.contains(path), "no store location");
    }
    assertThrows(IOException.class, () -> committables.deserialize(committables.getVersion() + 1, bytes));
  }

  @Test
  void aWriteCommitThatContradictsTheGuaranteeIsRefusedNamingBoth() {
    String path = dir.resolve("modes").toString();
    BadOptionException e = assertThrows(BadOptionException.class, () -> LanceContextSink.builder()
        .options(Map.of("path", path, "schema", "rollout", "write.commit", "immediate")).build(RecordConverter.maps()));
    assertTrue(e.getMessage().contains("'write.commit' = 'immediate' contradicts 'sink.delivery-guarantee' = "
        + "'exactly-once'"), e.getMessage());
    e = assertThrows(BadOptionException.class, () -> LanceContextSink.builder()
        .options(Map.of("path", path, "write.commit", "atomic")).deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
        .build(RecordConverter.maps()));
    assertTrue(e.getMessage().contains("'write.commit' = 'atomic' contradicts 'sink.delivery-guarantee' = "
        + "'at-least-once'"), e.getMessage());
  }

  @Test
  void exactlyOnceIsRefusedOnAStoreWithUniqueIds() {
    String spec = "{\"key\": \"id\", \"columns\": [{\"name\": \"id\", \"type\": \"string\", \"nullable\": false}],"
        + " \"capabilities\": [\"unique-ids\"]}";
    Map<String, String> options = Map.of("path", dir.resolve("unique").toString(), "schema", spec);
    BadOptionException e = assertThrows(BadOptionException.class,
        () -> LanceContextSink.builder().options(options).build(RecordConverter.maps()));
    assertEquals("sink.delivery-guarantee", e.key());
    assertEquals(DeliveryGuarantee.AT_LEAST_ONCE, LanceContextSink.builder().options(options)
        .deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build(RecordConverter.maps()).deliveryGuarantee());
  }

  /** The init context of a committer restored at checkpoint {@code restored} (none if negative). */
  static CommitterInitContext committerContext(long restored) {
    return new CommitterInitContext() {
      @Override
      public org.apache.flink.metrics.groups.SinkCommitterMetricGroup metricGroup() {
        return InternalSinkCommitterMetricGroup.wrap(UnregisteredMetricsGroup.createOperatorMetricGroup());
      }

      @Override
      public java.util.OptionalLong getRestoredCheckpointId() {
        return restored < 0 ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(restored);
      }

      @Override
      public org.apache.flink.api.common.JobInfo getJobInfo() {
        throw new UnsupportedOperationException();
      }

      @Override
      public org.apache.flink.api.common.TaskInfo getTaskInfo() {
        // the committer subtask the aggregator sends to, as in a job
        return new org.apache.flink.api.common.TaskInfoImpl("Committer", 1, 0, 1, 0);
      }
    };
  }

  /** A commit request as Flink's committer operator makes one; records how the committer answered. */
  static class Request implements Committer.CommitRequest<LanceContextCommittable> {
    final LanceContextCommittable committable;
    boolean alreadyCommitted;
    boolean retryLater;

    Request(LanceContextCommittable committable) {
      this.committable = committable;
    }

    @Override
    public LanceContextCommittable getCommittable() {
      return committable;
    }

    @Override
    public int getNumberOfRetries() {
      return 0;
    }

    @Override
    public void signalFailedWithKnownReason(Throwable t) {
      throw new AssertionError(t);
    }

    @Override
    public void signalFailedWithUnknownReason(Throwable t) {
      throw new AssertionError(t);
    }

    @Override
    public void retryLater() {
      retryLater = true;
    }

    @Override
    public void updateAndRetryLater(LanceContextCommittable c) {
      retryLater = true;
    }

    @Override
    public void signalAlreadyCommitted() {
      alreadyCommitted = true;
    }
  }

  @Test
  void theCommitterPublishesEverySubtasksRowsTogetherAndAReplayChangesNothing() throws Exception {
    String path = dir.resolve("replay").toString();
    Map<String, String> options = Map.of("path", path, "schema", "rollout", "schema.embedding-dim", "2");
    LanceContextSink<Map<String, Object>> sink = LanceContextSink.builder().options(options)
        .build(RecordConverter.maps());
    String txn = "flink-test-job-3";
    Map<String, List<byte[]>> summaries = new java.util.HashMap<>();
    try (ContextStore store = ContextStore.open(options)) {
      List<byte[]> parts = new ArrayList<>();
      for (int subtask = 0; subtask < 2; subtask++) {
        try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txn, String.valueOf(subtask)).build())) {
          for (int i = 0; i < 50; i++) {
            w.write(Map.of("id", "s" + subtask + "-" + i, "reward", (double) i));
          }
          parts.add(w.commit().toBytes());
        }
      }
      summaries.put(txn, parts);
      assertEquals(0, store.count(), "staged rows are invisible until published");
    }
    LanceContextCommittable committable = new LanceContextCommittable(3, summaries);
    try (Committer<LanceContextCommittable> committer = sink.createCommitter(committerContext(3))) {
      Request first = new Request(committable);
      committer.commit(List.of(first));
      assertFalse(first.alreadyCommitted || first.retryLater);
      try (ContextStore store = ContextStore.open(options)) {
        assertEquals(100, store.count(), "both subtasks' rows, in one publish");
        store.add(List.of(Map.of("id", "s0-7", "reward", 99.0)));
      }
      // a restored committer commits the checkpoint it restored again: nothing changes, the later add stays
      Request replay = new Request(committable);
      committer.commit(List.of(replay));
      assertTrue(replay.alreadyCommitted, "a replay is reported as already committed");
      try (ContextStore store = ContextStore.open(options)) {
        assertEquals(100, store.count());
        assertEquals(99.0, store.get("s0-7").orElseThrow().get("reward"));
      }
    }
  }

  @Test
  void anExactlyOnceCommitterOpensTheStoresLanesWhenItStartsAndAnAtLeastOnceOneDoesNot() throws Exception {
    Map<String, String> options = Map.of("path", dir.resolve("prepared").toString(), "schema", "rollout",
        "schema.embedding-dim", "2", "shards", "2");
    ContextStore.open(options).close();  // created
    ContextStore.closeAllResident();
    LanceContextSink<Map<String, Object>> alo = LanceContextSink.builder().options(options)
        .deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build(RecordConverter.maps());
    try (ContextStore store = ContextStore.open(options);
        Committer<LanceContextCommittable> committer = alo.createCommitter(committerContext(-1))) {
      Thread.sleep(200);
      assertEquals(0, store.stats().openWriters(), "an at-least-once committer publishes nothing: it opens nothing");
    }
    ContextStore.closeAllResident();
    LanceContextSink<Map<String, Object>> eo = LanceContextSink.builder().options(options).build(RecordConverter.maps());
    try (ContextStore store = ContextStore.open(options);
        Committer<LanceContextCommittable> committer = eo.createCommitter(committerContext(-1))) {
      long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
      while (store.stats().openWriters() < 2 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(2, store.stats().openWriters(), "the publishing committer opened each bucket's lane before its "
          + "first checkpoint's publish");
    }
  }
}
