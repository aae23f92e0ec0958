package io.lancecontext.benchmarks.flink;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.core.result.StoreStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.executiongraph.ArchivedExecutionGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.lance.Dataset;

/**
 * Flink ingest, in one MiniCluster (one TaskManager, two slots), parallelism 2, checkpoints every second:
 * {@code n} small {@code context} records (five columns set, about 260 bytes) into
 * <ul>
 *   <li>the baseline, {@link FragmentSink}: fragments written by the writers and appended per checkpoint by
 *   each committer subtask on its own (the lance-flink approach),
 *   <li>a lancecontext table with {@code 'sink.delivery-guarantee' = 'at-least-once'},
 *   <li>the same with {@code 'exactly-once'}, when the connector offers it (otherwise it prints
 *   {@code exactly-once: not available} and skips it),
 * </ul>
 * first as fast as the source goes (throughput), then at a fixed source rate (freshness samples, one record
 * in {@value #SAMPLE_EVERY}). Measured: rows/s from submission to job end; at-least-once freshness (sampled
 * record emitted by the source until a reader in this JVM finds it by key); exactly-once freshness (until
 * found, from the completion of the checkpoint the record belongs to, as the JobManager's last
 * acknowledgement time); checkpoints a polling reader saw part of (its row count between two checkpoint
 * boundaries); fragments after one merge and one compaction, against the baseline's after its run. A warm-up
 * of every sink runs first, unreported.
 *
 * <p>Usage: {@code FlinkIngestBenchmark [rows=1000000] [rate=50000] [dir=target/flink-ingest] [shards=4]}. The last line is
 * {@code RESULT flink throughput_vs_baseline=<x> freshness_p99_ms=<y> alo_freshness_p99_ms=<z> fragments=<n>
 * baseline_fragments=<m> partial_checkpoints_seen=<k>} ({@code n/a} for the exactly-once figures when it is
 * not available; {@code fragments} is then the at-least-once store's). With
 * {@code -Dflink.bench.only=at-least-once|exactly-once|baseline} it runs that sink alone (a warm-up of at most 100,000
 * rows, then one unthrottled run of {@code rows}) and prints its rows/s, no RESULT line: for profiling. With
 * {@code -Dflink.bench.rate-only=at-least-once|exactly-once} it runs that sink alone at the fixed rate and prints its
 * freshness ({@code -Dflink.bench.poll-counts=true}: with the full run's counting reader beside it;
 * {@code -Dflink.bench.per-checkpoint=true}: when each checkpoint completed and its samples were found).
 */
@SuppressWarnings("deprecation") // Dataset.open(uri, allocator), as the baseline reads its dataset
public final class FlinkIngestBenchmark {
  static final int PARALLELISM = 2;
  static final int MAX_PARALLELISM = 128;
  static final int SAMPLE_EVERY = 250;
  static final int BASELINE_BATCH_ROWS = 8192;
  static final String MERGE_BYTES_RETRY = "16MiB";
  /** The store default; the sink sends bucket {@code b} to writer subtask {@code b % parallelism}. */
  static final int DEFAULT_SHARDS = 4;
  /**
   * More table options for the lancecontext runs, from system property {@code flink.bench.options}
   * ({@code key=value,key=value}), to try settings against the same baseline; none by default.
   */
  static final Map<String, String> EXTRA_OPTIONS = parseOptions(System.getProperty("flink.bench.options", ""));

  private static Map<String, String> parseOptions(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String pair : text.split(",")) {
      if (!pair.isBlank()) {
        int eq = pair.indexOf('=');
        out.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
      }
    }
    return out;
  }

  private FlinkIngestBenchmark() {}

  /** What one run measured. */
  static final class Run {
    final String label;
    final long rows;
    double seconds;
    /** From the start of the run until the job was submitted (for the store: SQL planning and code generation). */
    double submitSeconds;
    long count;
    List<Double> emitToVisibleMs = new ArrayList<>();
    List<Double> checkpointToVisibleMs = new ArrayList<>();
    /** How long the freshness reader's lookup calls took. */
    List<Double> lookupCallMs = new ArrayList<>();
    int samplesWithoutCheckpoint;
    int samplesNeverSeen;
    int partialCheckpointsSeen = -1;
    int countPolls;
    int checkpoints;
    int fragments = -1;

    Run(String label, long rows) {
      this.label = label;
      this.rows = rows;
    }

    double rowsPerSecond() {
      return rows / seconds;
    }
  }

  public static void main(String[] args) throws Exception {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
    double rate = args.length > 1 ? Double.parseDouble(args[1]) : 50_000;
    Path dir = Paths.get(args.length > 2 ? args[2] : "target/flink-ingest");
    int shards = args.length > 3 ? Integer.parseInt(args[3]) : DEFAULT_SHARDS;
    deleteTree(dir);
    Files.createDirectories(dir);

    Configuration conf = new Configuration();
    conf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 100_000);
    conf.set(RestOptions.BIND_PORT, "0");
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.set(RestOptions.ADDRESS, "127.0.0.1");
    try (MiniCluster mc = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(conf)
        .setNumTaskManagers(1).setNumSlotsPerTaskManager(PARALLELISM).build())) {
      mc.start();
      FlinkIngestBenchmark.Bench bench = new Bench(mc, dir);
      int[] split = bucketsPerSubtask(shards);
      System.out.printf(Locale.ROOT, "Flink ingest: %,d context records, parallelism %d, checkpoint 1 s, %d shards "
          + "(buckets per writer subtask: %d/%d); rate runs at %,.0f rows/s%s%n", rows, PARALLELISM, shards, split[0], split[1],
          rate, EXTRA_OPTIONS.isEmpty() ? "" : "; table options " + EXTRA_OPTIONS);

      String only = System.getProperty("flink.bench.only", "");
      if (!only.isEmpty()) {
        // one sink, one unthrottled run after a warm-up: for profiling (-Dflink.bench.only=at-least-once|exactly-once|baseline)
        boolean baseline = only.equals("baseline");
        if (baseline) {
          bench.baseline("warmup-baseline", Math.min(rows, 100_000), 0, false);
        } else {
          bench.store("warmup-" + only, only, shards, Math.min(rows, 100_000), 0, false);
        }
        Run r = baseline ? bench.baseline(only, rows, 0, false) : bench.store(only, only, shards, rows, 0, false);
        System.out.printf(Locale.ROOT, "%s: %,d rows in %.2f s, %,.0f rows/s, %d checkpoints%n", only, rows, r.seconds,
            r.rowsPerSecond(), r.checkpoints);
        ContextStore.closeAllResident();
        System.exit(0);
      }
      String rateOnly = System.getProperty("flink.bench.rate-only", "");
      if (!rateOnly.isEmpty()) {
        // one sink at the fixed rate after a warm-up: for profiling freshness (-Dflink.bench.rate-only=exactly-once)
        bench.store("warmup-" + rateOnly, rateOnly, shards, Math.min(rows, 100_000), 0, false);
        // -Dflink.bench.poll-counts=true: with the full run's second reader counting the store meanwhile
        Run r = bench.store(rateOnly + "-rate", rateOnly, shards, rows, rate, Boolean.getBoolean("flink.bench.poll-counts"));
        System.out.printf(Locale.ROOT, "%s at %,.0f rows/s: from emission %s; from checkpoint completion %s; lookup calls %s%n",
            rateOnly, rate, stats(r.emitToVisibleMs), stats(r.checkpointToVisibleMs), stats(r.lookupCallMs));
        ContextStore.closeAllResident();
        System.exit(0);
      }
      long warm = Math.min(rows, 200_000);
      bench.baseline("warmup-baseline", warm, 0, false);
      bench.store("warmup-alo", "at-least-once", shards, warm, 0, false);
      boolean eo = bench.store("warmup-eo", "exactly-once", shards, warm, 0, false) != null;
      if (!eo) {
        System.out.println("exactly-once: not available (" + bench.unavailable + ")");
      }

      Run base = bench.baseline("baseline", rows, 0, false);
      Run alo = bench.store("alo", "at-least-once", shards, rows, 0, false);
      Run eoRun = eo ? bench.store("eo", "exactly-once", shards, rows, 0, false) : null;
      base.fragments = bench.baselineFragments(base);
      alo.fragments = bench.mergeAndCompact(alo);
      if (eoRun != null) {
        eoRun.fragments = bench.mergeAndCompact(eoRun);
      }

      Run baseRate = bench.baseline("baseline-rate", rows, rate, true);
      Run aloRate = bench.store("alo-rate", "at-least-once", shards, rows, rate, false);
      Run eoRate = eo ? bench.store("eo-rate", "exactly-once", shards, rows, rate, true) : null;

      System.out.println();
      System.out.println("throughput (rows/s, submission to job end, same run):");
      System.out.printf(Locale.ROOT, "  baseline       %,10.0f%n", base.rowsPerSecond());
      System.out.printf(Locale.ROOT, "  at-least-once  %,10.0f  (%.2fx baseline)%n", alo.rowsPerSecond(),
          alo.rowsPerSecond() / base.rowsPerSecond());
      if (eoRun != null) {
        System.out.printf(Locale.ROOT, "  exactly-once   %,10.0f  (%.2fx baseline)%n", eoRun.rowsPerSecond(),
            eoRun.rowsPerSecond() / base.rowsPerSecond());
      }
      System.out.printf(Locale.ROOT, "freshness at %,.0f rows/s (ms p50 / p99 / max, samples):%n", rate);
      System.out.printf(Locale.ROOT, "  at-least-once, from source emission: %s; %d never seen%n",
          stats(aloRate.emitToVisibleMs), aloRate.samplesNeverSeen);
      System.out.printf(Locale.ROOT, "  baseline, from checkpoint completion to its last commit's end: %s%n",
          stats(baseRate.checkpointToVisibleMs));
      if (eoRate != null) {
        System.out.printf(Locale.ROOT, "  exactly-once, from checkpoint completion: %s; from emission: %s; %d never seen%n",
            stats(eoRate.checkpointToVisibleMs), stats(eoRate.emitToVisibleMs), eoRate.samplesNeverSeen);
      }
      System.out.printf(Locale.ROOT, "partial checkpoints seen by a polling reader: baseline %d of %d checkpoints (%d polls)%s%n",
          baseRate.partialCheckpointsSeen, baseRate.checkpoints, baseRate.countPolls,
          eoRate == null ? "" : String.format(Locale.ROOT, ", exactly-once %d of %d (%d polls)", eoRate.partialCheckpointsSeen,
              eoRate.checkpoints, eoRate.countPolls));
      System.out.printf(Locale.ROOT, "fragments: baseline %d after its run; at-least-once %d after one merge + compaction%s%n",
          base.fragments, alo.fragments, eoRun == null ? "" : "; exactly-once " + eoRun.fragments);
      System.out.printf(Locale.ROOT, "at-least-once: throughput_vs_baseline=%.2f alo_freshness_p99_ms=%.1f fragments=%d%n",
          alo.rowsPerSecond() / base.rowsPerSecond(), pct(aloRate.emitToVisibleMs, 99), alo.fragments);
      System.out.printf(Locale.ROOT, "RESULT flink throughput_vs_baseline=%s freshness_p99_ms=%s alo_freshness_p99_ms=%.1f "
              + "fragments=%d baseline_fragments=%d partial_checkpoints_seen=%s%n",
          eoRun == null ? "n/a" : String.format(Locale.ROOT, "%.2f", eoRun.rowsPerSecond() / base.rowsPerSecond()),
          eoRate == null ? "n/a" : String.format(Locale.ROOT, "%.1f", pct(eoRate.checkpointToVisibleMs, 99)),
          pct(aloRate.emitToVisibleMs, 99), eoRun == null ? alo.fragments : eoRun.fragments, base.fragments,
          eoRate == null ? "n/a" : Integer.toString(eoRate.partialCheckpointsSeen));
    } finally {
      ContextStore.closeAllResident();
    }
    System.exit(0);
  }

  /** The runs, sharing one MiniCluster. */
  static final class Bench {
    private final MiniCluster mc;
    private final Path dir;
    String unavailable;

    Bench(MiniCluster mc, Path dir) {
      this.mc = mc;
      this.dir = dir;
    }

    private StreamExecutionEnvironment env() {
      StreamExecutionEnvironment env = new TestStreamEnvironment(mc, PARALLELISM);
      env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
      env.setMaxParallelism(MAX_PARALLELISM);
      env.enableCheckpointing(1000);
      return env;
    }

    private static DataStream<Row> records(StreamExecutionEnvironment env, long rows, double rate, boolean sample) {
      return env.fromSequence(0, rows - 1)
          .map(new IngestRecords(rate / PARALLELISM, sample || rate > 0 ? SAMPLE_EVERY : 0))
          .returns(IngestRecords.TYPE).name("context records");
    }

    Run baseline(String label, long rows, double rate, boolean pollCounts) throws Exception {
      String uri = dir.resolve(label + ".lance").toString();
      IngestRecords.reset();
      FragmentSink.COMMITS.clear();
      FragmentSink sink = FragmentSink.create(uri, BASELINE_BATCH_ROWS);
      StreamExecutionEnvironment env = env();
      records(env, rows, rate, false).sinkTo(sink).name("fragment sink");
      try (BufferAllocator allocator = new RootAllocator()) {
        LongSupplier count = () -> {
          try (Dataset ds = Dataset.open(uri, allocator)) {
            return ds.countRows();
          }
        };
        JobClient[] job = new JobClient[1];
        Run run = execute(label, rows, null, pollCounts ? count : null, () -> job[0] = env.executeAsync("baseline " + label));
        run.count = count.getAsLong();
        run.checkpointToVisibleMs = commitEndAfterCheckpoint(checkpointAcks(job[0].getJobID()));
        check(run);
        return run;
      }
    }

    /** A run into a lancecontext table, or null when the connector refuses the delivery guarantee. */
    Run store(String label, String guarantee, int shards, long rows, double rate, boolean pollCounts) throws Exception {
      String path = dir.resolve(label).toString();
      IngestRecords.reset();
      Map<String, String> options = new LinkedHashMap<>();
      options.put("path", path);
      options.put("schema", "context");
      options.put("schema.embedding-dim", "8");
      options.put("shards", Integer.toString(shards));
      options.putAll(EXTRA_OPTIONS);
      StreamExecutionEnvironment env = env();
      StreamTableEnvironment tables = StreamTableEnvironment.create(env);
      StringBuilder with = new StringBuilder("'connector' = 'lancecontext', 'sink.delivery-guarantee' = '" + guarantee + "'");
      options.forEach((k, v) -> with.append(", '").append(k).append("' = '").append(v).append('\''));
      // no PRIMARY KEY: the store upserts by its key anyway, and Flink 2.3 asks an insert-only query into a table
      // with one for an ON CONFLICT clause (a state-keeping materializer)
      tables.executeSql("CREATE TABLE ctx (id STRING, session_id STRING, role STRING, text_payload STRING, token_count INT) "
          + "WITH (" + with + ")");
      tables.createTemporaryView("src", tables.fromDataStream(records(env, rows, rate, false)));
      // the reader is a core store: the Flink connector's own options (sink.*, lookup.*) are not its options
      Map<String, String> storeOptions = new LinkedHashMap<>(options);
      storeOptions.keySet().removeIf(k -> k.startsWith("sink.") || k.startsWith("lookup."));
      Run run;
      try (ContextStore store = ContextStore.open(storeOptions)) {
        Function<List<String>, Set<String>> lookup = keys -> {
          Set<String> found = new HashSet<>();
          for (Map<String, Object> r : store.lookup(keys, List.of("id"), false)) {
            found.add((String) r.get("id"));
          }
          return found;
        };
        TableResult[] result = new TableResult[1];
        try {
          run = execute(label, rows, rate > 0 ? lookup : null, pollCounts ? store::count : null, () -> {
            result[0] = tables.executeSql("INSERT INTO ctx SELECT * FROM src");
            return result[0].getJobClient().orElseThrow();
          });
        } catch (ValidationException e) {
          if (guarantee.equals("exactly-once")) {
            unavailable = rootMessage(e);
            return null;
          }
          throw e;
        }
        run.count = store.count();
        check(run);
      } finally {
        // the next run starts without this store's background merges competing with it
        ContextStore.closeAllResident();
      }
      return run;
    }

    private Run execute(String label, long rows, Function<List<String>, Set<String>> lookup, LongSupplier count,
        JobStart start) throws Exception {
      Run run = new Run(label, rows);
      // two readers on their own threads: a count (a full scan, up to a second on a 1 M-row store) must not hold
      // up the lookups that time visibility
      Poller poller = new Poller(lookup, null);
      Poller counter = new Poller(null, count);
      Thread thread = new Thread(poller, "poller-" + label);
      Thread counting = new Thread(counter, "counter-" + label);
      long t0 = System.nanoTime();
      JobClient job = start.start();
      run.submitSeconds = (System.nanoTime() - t0) / 1e9;
      thread.start();
      counting.start();
      job.getJobExecutionResult().get();
      run.seconds = (System.nanoTime() - t0) / 1e9;
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (lookup != null && poller.pendingOrQueued() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      poller.running = false;
      counter.running = false;
      thread.join();
      counting.join();
      for (Poller p : List.of(poller, counter)) {
        if (p.failure != null) {
          throw new IllegalStateException(label + ": reader failed", p.failure);
        }
      }

      Map<Long, Long> ackMs = checkpointAcks(job.getJobID());
      run.checkpoints = ackMs.size();
      if (Boolean.getBoolean("flink.bench.per-checkpoint")) {
        printPerCheckpoint(ackMs);
      }
      for (IngestRecords.Sample s : IngestRecords.SAMPLES) {
        if (s.visibleNanos < 0) {
          run.samplesNeverSeen++;
          continue;
        }
        run.emitToVisibleMs.add((s.visibleNanos - s.emittedNanos) / 1e6);
        Long ack = s.checkpoint < 0 ? null : ackMs.get(s.checkpoint);
        if (ack == null) {
          run.samplesWithoutCheckpoint++;
        } else {
          run.checkpointToVisibleMs.add((double) (s.visibleMs - ack));
        }
      }
      run.lookupCallMs = new ArrayList<>(poller.lookupCallMs);
      if (count != null) {
        run.countPolls = counter.counts.size();
        run.partialCheckpointsSeen = partialCheckpoints(counter.counts, rows);
      }
      System.out.printf(Locale.ROOT, "  %-16s %,9d rows in %6.2f s = %,9.0f rows/s (submitted after %.2f s); %d checkpoints%s%n",
          label, rows, run.seconds, rows / run.seconds, run.submitSeconds, run.checkpoints,
          lookup == null ? "" : String.format(Locale.ROOT, "; emit->visible %s", FlinkIngestBenchmark.stats(run.emitToVisibleMs)));
      return run;
    }

    /** Per checkpoint: its completion time and when the reader first and last found one of its samples. */
    private static void printPerCheckpoint(Map<Long, Long> ackMs) {
      java.time.format.DateTimeFormatter f = java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss.SSS")
          .withZone(java.time.ZoneId.systemDefault());
      new java.util.TreeMap<>(ackMs).forEach((cp, ack) -> {
        long first = Long.MAX_VALUE;
        long last = -1;
        for (IngestRecords.Sample s : IngestRecords.SAMPLES) {
          if (s.checkpoint == cp && s.visibleMs > 0) {
            first = Math.min(first, s.visibleMs);
            last = Math.max(last, s.visibleMs);
          }
        }
        System.out.printf(Locale.ROOT, "    checkpoint %d completed %s; its samples found %s .. %s%n", cp,
            f.format(java.time.Instant.ofEpochMilli(ack)), first == Long.MAX_VALUE ? "-" : f.format(java.time.Instant.ofEpochMilli(first)),
            last < 0 ? "-" : f.format(java.time.Instant.ofEpochMilli(last)));
      });
    }

    /** Per checkpoint, from its completion until the last committer's commit of it ended (visible to every reader). */
    private static List<Double> commitEndAfterCheckpoint(Map<Long, Long> ackMs) {
      List<Long> acks = new ArrayList<>(ackMs.values());
      Collections.sort(acks);
      List<Double> out = new ArrayList<>();
      for (int i = 0; i < acks.size(); i++) {
        long ack = acks.get(i);
        long next = i + 1 < acks.size() ? acks.get(i + 1) : Long.MAX_VALUE;
        long end = -1;
        for (long[] c : FragmentSink.COMMITS) {
          if (c[0] >= ack && c[0] < next) {
            end = Math.max(end, c[1]);
          }
        }
        if (end >= 0) {
          out.add((double) (end - ack));
        }
      }
      return out;
    }

    private Map<Long, Long> checkpointAcks(JobID id) throws Exception {
      ArchivedExecutionGraph g = mc.getArchivedExecutionGraph(id).get();
      Map<Long, Long> out = new TreeMap<>();
      for (AbstractCheckpointStats c : g.getCheckpointStatsSnapshot().getHistory().getCheckpoints()) {
        if (c.getStatus() == CheckpointStatsStatus.COMPLETED) {
          out.put(c.getCheckpointId(), c.getLatestAckTimestamp());
        }
      }
      return out;
    }

    int baselineFragments(Run run) {
      try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(dir.resolve(run.label + ".lance").toString(), a)) {
        return ds.getFragments().size();
      }
    }

    /**
     * Merges everything unmerged, then compacts, and returns the fragments left. One merge is asked for; when
     * lance-core refuses a merge that large (its merge-insert memory pool), the merge is repeated with
     * {@code merge.max-bytes} = {@value #MERGE_BYTES_RETRY} until nothing is left, and the rounds are printed.
     */
    int mergeAndCompact(Run run) {
      String path = dir.resolve(run.label).toString();
      int rounds = 0;
      String failure = null;
      long t0 = System.nanoTime();
      StoreStats before;
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        before = store.stats();
        try {
          store.merge();
          rounds++;
        } catch (RuntimeException e) {
          failure = rootMessage(e);
        }
      }
      if (failure != null) {
        System.out.printf(Locale.ROOT, "  %-16s one merge of everything failed: %s%n", run.label, failure);
        ContextStore.closeAllResident();
        try (ContextStore store = ContextStore.open(Map.of("path", path, "merge.max-bytes", MERGE_BYTES_RETRY))) {
          for (MergeResult m = store.merge(); ; m = store.merge()) {
            rounds++;
            if (m.remaining() == 0 || !m.merged() || rounds > 1000) {
              break;
            }
          }
        } catch (RuntimeException e) {
          System.out.printf(Locale.ROOT, "  %-16s merging bucket by bucket failed too, after %d round(s): %s%n", run.label,
              rounds, rootMessage(e));
        }
        ContextStore.closeAllResident();
      }
      long t1 = System.nanoTime();
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        CompactionResult compaction = store.compact();
        long t2 = System.nanoTime();
        StoreStats after = store.stats();
        System.out.printf(Locale.ROOT, "  %-16s before: %d fragments, %d fresh keys, %d unmerged generations; %d merge "
                + "round(s) %.1f s; compaction %.1f s (%d -> %d fragments%s); after: %d fragments, %d fresh keys, "
                + "%d unmerged generations; count %,d%n", run.label, before.fragments(), before.freshRows(),
            before.unmergedGenerations(), rounds, (t1 - t0) / 1e9, (t2 - t1) / 1e9, compaction.fragmentsBefore(),
            compaction.fragmentsAfter(), compaction.skippedFragments().isEmpty() ? "" : ", skipped "
                + compaction.skippedFragments().size() + ": " + compaction.reason(), after.fragments(), after.freshRows(),
            after.unmergedGenerations(), store.count());
        return after.fragments();
      }
    }

    private static void check(Run run) {
      if (run.count != run.rows) {
        throw new IllegalStateException(run.label + ": the store holds " + run.count + " rows, not " + run.rows);
      }
    }
  }

  /** Checkpoints a reader saw part of: counts strictly between two consecutive checkpoint boundaries. */
  static int partialCheckpoints(List<Long> counts, long rows) {
    List<Long> boundaries = new ArrayList<>();
    boundaries.add(0L);
    for (Map<Integer, Long> perSubtask : IngestRecords.EMITTED_AT_SNAPSHOT.values()) {
      if (perSubtask.size() == PARALLELISM) {
        boundaries.add(perSubtask.values().stream().mapToLong(Long::longValue).sum());
      }
    }
    boundaries.add(rows);
    Collections.sort(boundaries);
    Set<Integer> partial = new HashSet<>();
    for (long c : counts) {
      int i = Collections.binarySearch(boundaries, c);
      if (i < 0) {
        partial.add(-i - 1);
      }
    }
    return partial.size();
  }

  /** A reader in this JVM: looks sampled keys up until found, and/or counts rows, in a loop. */
  static final class Poller implements Runnable {
    private final Function<List<String>, Set<String>> lookup;
    private final LongSupplier count;
    private final List<IngestRecords.Sample> pending = new ArrayList<>();
    private final Set<IngestRecords.Sample> taken = Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    final List<Long> counts = Collections.synchronizedList(new ArrayList<>());
    final List<Double> lookupCallMs = Collections.synchronizedList(new ArrayList<>());
    volatile boolean running = true;
    volatile Throwable failure;

    Poller(Function<List<String>, Set<String>> lookup, LongSupplier count) {
      this.lookup = lookup;
      this.count = count;
    }

    synchronized boolean pendingOrQueued() {
      return !pending.isEmpty() || IngestRecords.SAMPLES.size() > taken.size();
    }

    @Override
    public void run() {
      try {
        while (running) {
          if (lookup != null) {
            lookUp();
          }
          if (count != null) {
            long c = count.getAsLong();
            if (counts.isEmpty() || counts.get(counts.size() - 1) != c) {
              counts.add(c);
            }
          }
          Thread.sleep(lookup != null ? 2 : 5);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Throwable t) {
        failure = t;
      }
    }

    private void lookUp() {
      synchronized (this) {
        for (IngestRecords.Sample s : IngestRecords.SAMPLES) {
          if (taken.add(s)) {
            pending.add(s);
          }
        }
      }
      if (pending.isEmpty()) {
        return;
      }
      List<IngestRecords.Sample> batch = new ArrayList<>(pending.subList(0, Math.min(pending.size(), 200)));
      Map<String, IngestRecords.Sample> byKey = new HashMap<>();
      batch.forEach(s -> byKey.put(s.key, s));
      long before = System.nanoTime();
      Set<String> found = lookup.apply(new ArrayList<>(byKey.keySet()));
      long nanos = System.nanoTime();
      lookupCallMs.add((nanos - before) / 1e6);
      long ms = System.currentTimeMillis();
      synchronized (this) {
        for (String k : found) {
          IngestRecords.Sample s = byKey.get(k);
          if (s != null) {
            s.visibleNanos = nanos;
            s.visibleMs = ms;
            pending.remove(s);
          }
        }
      }
    }
  }

  @FunctionalInterface
  interface JobStart {
    JobClient start() throws Exception;
  }

  /** How many buckets each writer subtask gets from the sink's keyBy on the bucket (Flink's key groups). */
  static int[] bucketsPerSubtask(int shards) {
    int[] perSubtask = new int[PARALLELISM];
    for (int b = 0; b < shards; b++) {
      perSubtask[b % PARALLELISM]++;
    }
    return perSubtask;
  }

  static String stats(List<Double> xs) {
    return String.format(Locale.ROOT, "%.1f / %.1f / %.1f (%d)", pct(xs, 50), pct(xs, 99), pct(xs, 100), xs.size());
  }

  /** Nearest-rank percentile (100: the maximum); NaN when empty. */
  static double pct(List<Double> xs, double p) {
    if (xs.isEmpty()) {
      return Double.NaN;
    }
    List<Double> s = new ArrayList<>(xs);
    Collections.sort(s);
    int i = (int) Math.ceil(p / 100.0 * s.size()) - 1;
    return s.get(Math.max(0, Math.min(s.size() - 1, i)));
  }

  private static String rootMessage(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null) {
      c = c.getCause();
    }
    return c.getMessage();
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path f : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(f);
      }
    }
  }
}
