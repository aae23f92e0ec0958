package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import io.lancecontext.flink.source.LanceContextSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The continuous source ({@code LanceContextSource.builder().continuous(...)}): it emits the store, then every change
 * made while it runs, each key's newest version per change once, as an upsert changelog; across a failure and a
 * stop-with-savepoint, each restored later than {@code snapshot.retention} while merges, compactions and garbage
 * collections ran, every acknowledged change arrives exactly once; an idle store costs no write.
 *
 * <p>What the job delivers is what {@link Collect} published: the rows of a checkpoint once it completed (rows after
 * the last completed checkpoint of a failed attempt are replayed by the restored one, as a transactional sink's
 * would be). {@link #check} then holds, per key, the published events against the store: every upsert newer than the
 * key's last one (a duplicate or a reordered row fails), a delete only of a key present, and, folded, the store.
 */
class FlinkContinuousSourceTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(3);

  static final String SPEC = "{\"key\": \"id\", \"columns\": [{\"name\": \"id\", \"type\": \"string\", \"nullable\": false},"
      + " {\"name\": \"v\", \"type\": \"int64\"}], \"capabilities\": [\"tombstones\"]}";
  static final int KEYS = 60;

  @TempDir
  static Path dir;

  private long counter;

  @BeforeEach
  void reset() {
    Collect.reset();
  }

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static Map<String, String> options(String name) {
    return Map.of("path", dir.resolve(name).toString(), "schema", SPEC, "shards", "2", "snapshot.retention", "1s",
        "gc.grace", "1s", "merge.trigger.interval", "1d");
  }

  private static String key(int i) {
    return String.format("k%03d", i);
  }

  /** Upserts a few keys with new values and, now and then, deletes one. */
  private void round(ContextStore store, Map<String, Long> model, Random rnd) {
    Set<String> keys = new TreeSet<>();
    for (int i = 0; i < 6; i++) {
      keys.add(key(rnd.nextInt(KEYS)));
    }
    List<Map<String, Object>> rows = new ArrayList<>();
    for (String k : keys) {
      long v = ++counter;
      rows.add(Map.of("id", k, "v", v));
      model.put(k, v);
    }
    store.add(rows);
    String gone = key(rnd.nextInt(KEYS));
    if (rnd.nextInt(3) == 0 && !keys.contains(gone)) {
      store.delete(List.of(gone));
      model.remove(gone);
    }
  }

  private void initial(ContextStore store, Map<String, Long> model) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < KEYS; i += 2) {
      long v = ++counter;
      rows.add(Map.of("id", key(i), "v", v));
      model.put(key(i), v);
    }
    store.add(rows);
  }

  private static JobClient start(Map<String, String> options, Configuration conf) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.enableCheckpointing(100);
    env.setParallelism(2);
    LanceContextSource source = LanceContextSource.builder().options(options)
        .scan(ScanSpec.all().withColumns(List.of("id", "v"))).continuous(Duration.ofMillis(50)).build();
    env.fromSource(source, WatermarkStrategy.noWatermarks(), "changes", InternalTypeInfo.of(source.rowType()))
        .uid("changes")
        .map(new Collect()).setParallelism(1).uid("collect")
        .sinkTo(new DiscardingSink<>()).setParallelism(1);
    return env.executeAsync("continuous");
  }

  /** Waits until the published events, folded, are the store's rows; then checks them against the model. */
  private static void awaitAndCheck(Map<String, Long> model, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!fold(Collect.published()).equals(model) && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    check(Collect.published(), model);
  }

  private static Map<String, Long> fold(List<String> events) {
    Map<String, Long> out = new TreeMap<>();
    for (String e : events) {
      String[] f = e.split(",", -1);
      if (f[0].equals("-D")) {
        out.remove(f[1]);
      } else {
        out.put(f[1], Long.parseLong(f[2]));
      }
    }
    return out;
  }

  /** Per key: each upsert newer than the last (no duplicate, no reorder), deletes only of present keys; folded: the store. */
  private static void check(List<String> events, Map<String, Long> model) {
    Map<String, Long> last = new HashMap<>();
    Map<String, Boolean> present = new HashMap<>();
    List<String> wrong = new ArrayList<>();
    for (String e : events) {
      String[] f = e.split(",", -1);
      if (f[0].equals("-D")) {
        if (!present.getOrDefault(f[1], false)) {
          wrong.add(e + " (not present)");
        }
        present.put(f[1], false);
      } else {
        long v = Long.parseLong(f[2]);
        if (v <= last.getOrDefault(f[1], 0L)) {
          wrong.add(e + " (after " + last.get(f[1]) + ")");
        }
        last.put(f[1], v);
        present.put(f[1], true);
      }
    }
    assertEquals(List.of(), wrong, "events repeated or out of order");
    assertEquals(new TreeMap<>(model), fold(events), "the published changes, folded, are the store");
  }

  private static Set<String> streamTags(ContextStore store) {
    return store.tags().stream().map(StoreSnapshot::tag).filter(t -> t.startsWith("stream-"))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  @Test
  void aContinuousJobEmitsTheStoreThenEveryChangeOnce() throws Exception {
    Map<String, String> options = options("changes");
    Map<String, Long> model = new TreeMap<>();
    Random rnd = new Random(1);
    try (ContextStore store = ContextStore.open(options)) {
      initial(store, model);
      JobClient job = start(options, new Configuration());
      try {
        awaitAndCheck(model, Duration.ofSeconds(30));
        assertTrue(Collect.published().stream().allMatch(e -> e.startsWith("+I")), "the first snapshot is inserts");
        for (int r = 0; r < 40; r++) {
          round(store, model, rnd);
          if (r % 10 == 9) {
            store.flush();
          }
          Thread.sleep(20);
        }
        awaitAndCheck(model, Duration.ofSeconds(30));
        assertTrue(Collect.published().stream().anyMatch(e -> e.startsWith("-D")), "deletes arrive as -D");
        assertTrue(Collect.published().stream().anyMatch(e -> e.startsWith("+U")), "changes arrive as +U");
        assertOnlyTheLastPositionTagged(store);
      } finally {
        job.cancel().get();
      }
    }
  }

  /**
   * A failure (restarted after 2.5 s) and a stop-with-savepoint (restored 2.5 s later), both longer than
   * {@code snapshot.retention} (1 s), while the store is written, merged, compacted and collected: every change
   * arrives once.
   */
  @Test
  void aJobRestoredLaterThanTheRetentionDeliversEveryChangeExactlyOnce() throws Exception {
    Map<String, String> options = options("failover");
    Map<String, Long> model = new TreeMap<>();
    Random rnd = new Random(2);
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(2_500));
    try (ContextStore store = ContextStore.open(options)) {
      initial(store, model);
      JobClient job = start(options, conf);
      awaitAndCheck(model, Duration.ofSeconds(30));
      Collect.failAfter.set(25);  // fails while the next changes arrive; restarted 2.5 s later
      long until = System.currentTimeMillis() + 4_500;
      for (int r = 0; System.currentTimeMillis() < until; r++) {
        round(store, model, rnd);
        maintain(store, r);
        Thread.sleep(30);
      }
      assertEquals(1, Collect.failures.get(), "the injected failure happened");
      awaitAndCheck(model, Duration.ofSeconds(30));

      String savepoint = job.stopWithSavepoint(false, dir.resolve("savepoints").toUri().toString(),
          SavepointFormatType.CANONICAL).get();
      Set<String> tagsAtStop = streamTags(store);
      until = System.currentTimeMillis() + 2_500;
      for (int r = 0; System.currentTimeMillis() < until; r++) {
        round(store, model, rnd);
        maintain(store, r);
        Thread.sleep(30);
      }
      store.flush();
      store.compact();
      store.gc();  // every untagged snapshot of the stopped job is older than the retention: collected
      Configuration restore = new Configuration();
      restore.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
      job = start(options, restore);
      try {
        for (int r = 0; r < 20; r++) {
          round(store, model, rnd);
          Thread.sleep(30);
        }
        awaitAndCheck(model, Duration.ofSeconds(30));
        Set<String> tags = assertOnlyTheLastPositionTagged(store);
        assertTrue(tags.stream().noneMatch(tagsAtStop::contains),
            "the restored job dropped the tags the stopped one kept: " + tagsAtStop + " then " + tags);
      } finally {
        job.cancel().get();
      }
    }
  }

  /**
   * Once nothing changes, the checkpoints that follow refer to the last position only: every older position's tag
   * is dropped, and that one is kept.
   */
  private static Set<String> assertOnlyTheLastPositionTagged(ContextStore store) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 10_000;
    while (streamTags(store).size() != 1 && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
    Set<String> tags = streamTags(store);
    assertEquals(1, tags.size(), "tags of older checkpoints are dropped: " + tags);
    return tags;
  }

  private static void maintain(ContextStore store, int round) {
    if (round % 8 == 7) {
      store.flush();
    }
    if (round % 20 == 19) {
      store.compact();
      store.gc();
    }
  }

  @Test
  void anIdleStoreGetsNoSplitsAndNoWrites() throws Exception {
    Map<String, String> options = options("idle");
    Map<String, Long> model = new TreeMap<>();
    try (ContextStore store = ContextStore.open(options)) {
      initial(store, model);
      JobClient job = start(options, new Configuration());
      try {
        awaitAndCheck(model, Duration.ofSeconds(30));
        Thread.sleep(300);  // the checkpoint after the first rows completed
        Set<String> before = files(Path.of(options.get("path")));
        int events = Collect.published().size();
        Thread.sleep(1_500);  // 30 discovery intervals, 15 checkpoints
        assertEquals(before, files(Path.of(options.get("path"))), "an idle store: no snapshot, tag or lease written");
        assertEquals(events, Collect.published().size());
        store.add(List.of(Map.of("id", "new", "v", ++counter)));
        model.put("new", counter);
        awaitAndCheck(model, Duration.ofSeconds(30));
      } finally {
        job.cancel().get();
      }
    }
  }

  /** The store's snapshot, tag and lease objects. */
  private static Set<String> files(Path store) throws IOException {
    Set<String> out = new TreeSet<>();
    for (String d : List.of("_lc/read-leases", "_lc/tags")) {
      Path p = store.resolve(d);
      if (Files.exists(p)) {
        try (Stream<Path> s = Files.walk(p)) {
          s.forEach(f -> out.add(store.relativize(f).toString()));
        }
      }
    }
    return out;
  }

  @Test
  void badBuilderValuesAreRefused() {
    Map<String, String> options = options("bad");
    LanceContextSource.Builder zero = LanceContextSource.builder().options(options).continuous(Duration.ZERO);
    assertTrue(assertThrows(IllegalArgumentException.class, zero::build).getMessage().contains("discovery interval"));
    LanceContextSource.Builder since = LanceContextSource.builder().options(options).since("step-1");
    assertTrue(assertThrows(IllegalArgumentException.class, since::build).getMessage().contains("continuous"));
  }

  /**
   * Publishes the rows of each checkpoint once it completed (to {@link #published}): what a transactional sink would
   * have committed. Also throws once after {@link #failAfter} rows, when set.
   */
  static final class Collect extends RichMapFunction<RowData, Integer> implements CheckpointedFunction,
      CheckpointListener {
    private static final List<String> PUBLISHED = new ArrayList<>();
    private static final Set<Long> PUBLISHED_CHECKPOINTS = ConcurrentHashMap.newKeySet();
    static final AtomicInteger failAfter = new AtomicInteger();
    static final AtomicInteger failures = new AtomicInteger();

    private transient List<String> buffer;
    private transient TreeMap<Long, List<String>> pending;
    private transient ListState<String> state;

    static synchronized void reset() {
      PUBLISHED.clear();
      PUBLISHED_CHECKPOINTS.clear();
      failAfter.set(0);
      failures.set(0);
    }

    static synchronized List<String> published() {
      return new ArrayList<>(PUBLISHED);
    }

    private static synchronized void publish(Map<Long, List<String>> checkpoints) {
      checkpoints.forEach((id, rows) -> {
        if (PUBLISHED_CHECKPOINTS.add(id)) {
          PUBLISHED.addAll(rows);
        }
      });
    }

    @Override
    public Integer map(RowData row) {
      buffer.add(row.getRowKind().shortString() + "," + row.getString(0) + "," + (row.isNullAt(1) ? "" : row.getLong(1)));
      if (failAfter.get() > 0 && failAfter.decrementAndGet() == 0) {
        failures.incrementAndGet();
        throw new IllegalStateException("a failure injected by the test");
      }
      return 0;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      pending.put(context.getCheckpointId(), new ArrayList<>(buffer));
      buffer.clear();
      List<String> all = new ArrayList<>();
      pending.forEach((id, rows) -> rows.forEach(r -> all.add(id + "|" + r)));
      pending.keySet().forEach(id -> all.add(id + "|"));
      state.update(all);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      Map<Long, List<String>> done = pending.headMap(checkpointId, true);
      publish(new TreeMap<>(done));
      done.clear();
    }

    /** A restored state's checkpoints are complete (the restore uses one): publish what is not yet. */
    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
      state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("pending", String.class));
      buffer = new ArrayList<>();
      pending = new TreeMap<>();
      if (context.isRestored()) {
        TreeMap<Long, List<String>> restored = new TreeMap<>();
        for (String s : state.get()) {
          int bar = s.indexOf('|');
          List<String> rows = restored.computeIfAbsent(Long.parseLong(s.substring(0, bar)), k -> new ArrayList<>());
          if (bar < s.length() - 1) {
            rows.add(s.substring(bar + 1));
          }
        }
        publish(restored);
      }
    }
  }
}
