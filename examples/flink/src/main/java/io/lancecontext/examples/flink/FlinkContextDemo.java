package io.lancecontext.examples.flink;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.StoreNotFoundException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.SchemaPresets;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

/**
 * The demo's Flink step: a local Flink SQL job (parallelism 2, checkpoints every second) streams {@code records}
 * agent {@code context} records into a store, enriching each one with a lookup join on the rollout it came from:
 * the Spark step's rollout store when it is there, otherwise a small rollout store of its own, written first.
 * Prints progress while the job runs and the final counts. Ids are deterministic, so a rerun upserts the same
 * rows. Usage: {@code FlinkContextDemo [context-store-dir] [records] [rollout-store-dir]}.
 */
public final class FlinkContextDemo {
  private static final int OWN_ROLLOUTS = 2_000;
  private static final int MAX_ROLLOUT_KEYS = 10_000;

  private FlinkContextDemo() {}

  public static void main(String[] args) throws Exception {
    Path contexts = Paths.get(args.length > 0 ? args[0] : "demo-store-flink").toAbsolutePath();
    long records = args.length > 1 ? Long.parseLong(args[1]) : 50_000L;
    Path sparkRollouts = Paths.get(args.length > 2 ? args[2] : "demo-store-spark").toAbsolutePath();
    try {
      run(contexts, records, sparkRollouts);
    } finally {
      ContextStore.closeAllResident();
    }
    System.exit(0);
  }

  static void run(Path contexts, long records, Path sparkRollouts) throws Exception {
    long started = System.nanoTime();
    String rollouts = rolloutStore(sparkRollouts, contexts);
    List<String> rolloutIds = rolloutIds(rollouts);
    System.out.printf(Locale.ROOT, "  %,d rollout ids to enrich from%n", rolloutIds.size());

    Configuration conf = new Configuration();
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.set(RestOptions.ADDRESS, "127.0.0.1");
    conf.set(RestOptions.BIND_PORT, "0");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
    env.enableCheckpointing(1000);
    StreamTableEnvironment tables = StreamTableEnvironment.create(env);

    tables.executeSql("CREATE TABLE rollouts (id STRING, rollout_id STRING, model_name STRING, reward DOUBLE, "
        + "policy_version BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'lancecontext', 'path' = '"
        + rollouts + "', 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '20000', "
        + "'lookup.partial-cache.expire-after-write' = '1min')");
    // no PRIMARY KEY: the store upserts by its key 'id' anyway, and Flink asks an insert-only query into a
    // table that declares one for an ON CONFLICT strategy
    tables.executeSql("CREATE TABLE contexts (id STRING, run_id STRING, session_id STRING, external_id STRING, "
        + "role STRING, content_type STRING, text_payload STRING, importance FLOAT, token_count INT, source STRING, "
        + "metadata_json STRING, created_at TIMESTAMP_LTZ(3)) WITH ('connector' = 'lancecontext', 'path' = '" + contexts
        + "', 'schema' = 'context', 'schema.embedding-dim' = '8', 'shards' = '2')");

    TypeInformation<Row> type = Types.ROW_NAMED(new String[] {"id", "session_id", "rollout_ref", "role", "text_payload",
        "token_count", "created_ms"}, Types.STRING, Types.STRING, Types.STRING, Types.STRING, Types.STRING, Types.INT,
        Types.LONG);
    tables.createTemporaryView("agent_events", tables.fromDataStream(
        env.fromSequence(0, records - 1).map(new AgentEvent(rolloutIds.toArray(new String[0]))).returns(type),
        Schema.newBuilder().columnByExpression("proc_time", "PROCTIME()").build()));

    System.out.printf(Locale.ROOT, "  streaming %,d context records into %s (lookup join on %s)%n", records, contexts,
        rollouts);
    TableResult result = tables.executeSql("""
        INSERT INTO contexts
        SELECT e.id, r.rollout_id, e.session_id, e.rollout_ref, e.role, 'text', e.text_payload,
               CAST(r.reward AS FLOAT), e.token_count, 'flink-demo',
               CONCAT('{"model": "', COALESCE(r.model_name, 'unknown'), '", "policy": ',
                      COALESCE(CAST(r.policy_version AS STRING), 'null'), '}'),
               TO_TIMESTAMP_LTZ(e.created_ms, 3)
        FROM agent_events AS e
        LEFT JOIN rollouts FOR SYSTEM_TIME AS OF e.proc_time AS r ON e.rollout_ref = r.id""");
    JobClient job = result.getJobClient().orElseThrow();
    CompletableFuture<JobExecutionResult> done = job.getJobExecutionResult();
    try (ContextStore store = ContextStore.open(Map.of("path", contexts.toString()))) {
      Predicate mine = Predicate.compare("source", Predicate.Op.EQ, "flink-demo");
      long last = -1;
      while (!done.isDone()) {
        try {
          done.get(2, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
          long n = store.count(mine);
          if (n != last) {
            System.out.printf(Locale.ROOT, "  %,9d context records in the store (%.0f s)%n", n, seconds(started));
            last = n;
          }
        }
      }
      JobExecutionResult finished = done.get();
      long total = store.count(mine);
      long enriched = store.count(Predicate.and(mine, Predicate.isNotNull("run_id")));
      System.out.printf(Locale.ROOT, "  job finished in %.0f s (%.0f s since the step started): %,d context records from "
          + "this step, %,d enriched with their rollout's run, reward and model; %,d records in the store%n",
          finished.getNetRuntime(TimeUnit.MILLISECONDS) / 1000.0, seconds(started), total, enriched, store.count());
      Map<String, Object> sample = store.get(AgentEvent.id(0)).orElseThrow();
      System.out.printf(Locale.ROOT, "  %s: run %s, importance %s, %s%n", sample.get("id"), sample.get("run_id"),
          sample.get("importance"), sample.get("metadata_json"));
      if (total != records) {
        throw new IllegalStateException("expected " + records + " records from this step, found " + total);
      }
    }
  }

  /** The Spark step's rollout store if it holds rollouts, otherwise a small one of this step's own. */
  private static String rolloutStore(Path sparkRollouts, Path contexts) {
    if (Files.isDirectory(sparkRollouts)) {
      try (ContextStore store = ContextStore.open(Map.of("path", sparkRollouts.toString()))) {
        SchemaSpec spec = store.spec();
        if (spec.preset().filter(SchemaPresets.ROLLOUT::equals).isPresent() && store.count() > 0) {
          System.out.printf(Locale.ROOT, "  enriching from the Spark step's rollout store %s (%,d rollouts)%n",
              sparkRollouts, store.count());
          return sparkRollouts.toString();
        }
      } catch (StoreNotFoundException e) {
        // not a store: fall through to this step's own
      }
    }
    Path own = Paths.get(contexts + "-rollouts");
    try (ContextStore store = ContextStore.open(Map.of("path", own.toString(), "schema", "rollout",
        "schema.embedding-dim", "8", "shards", "2"))) {
      List<Map<String, Object>> rows = new ArrayList<>();
      String[] models = {"policy-small", "policy-medium", "policy-large"};
      for (int i = 0; i < OWN_ROLLOUTS; i++) {
        Map<String, Object> r = new HashMap<>();
        r.put("id", String.format(Locale.ROOT, "flink-demo-r%05d", i));
        r.put("rollout_id", String.format(Locale.ROOT, "run-%03d", i / 20));
        r.put("model_name", models[i % models.length]);
        r.put("policy_version", (long) (i % 4));
        r.put("reward", (i * 37 % 100) / 100.0);
        r.put("created_at", Instant.now());
        rows.add(r);
      }
      store.add(rows);
      System.out.printf(Locale.ROOT, "  no Spark rollout store at %s: wrote %,d rollouts of this step's own to %s%n",
          sparkRollouts, OWN_ROLLOUTS, own);
    }
    return own.toString();
  }

  private static List<String> rolloutIds(String path) throws Exception {
    List<String> ids = new ArrayList<>();
    try (ContextStore store = ContextStore.open(Map.of("path", path));
        var reader = store.scan(ScanSpec.all().withColumns(List.of("id")).withLimit(MAX_ROLLOUT_KEYS))) {
      while (reader.next()) {
        var batch = reader.batch();
        var column = batch.getVector("id");
        for (int i = 0; i < batch.getRowCount(); i++) {
          ids.add(column.getObject(i).toString());
        }
      }
    }
    return ids;
  }

  private static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }

  /** One agent event, made from a sequence number, naming one of the rollouts it came from. */
  static final class AgentEvent implements MapFunction<Long, Row> {
    private static final String[] ROLES = {"system", "user", "assistant", "tool"};
    private final String[] rollouts;

    AgentEvent(String[] rollouts) {
      this.rollouts = rollouts;
    }

    static String id(long n) {
      return String.format(Locale.ROOT, "flink-demo-c%07d", n);
    }

    @Override
    public Row map(Long n) {
      String rollout = rollouts.length == 0 ? null : rollouts[(int) (n % rollouts.length)];
      return Row.of(id(n), "session-" + (n / 25), rollout, ROLES[(int) (n % 4)],
          "step " + (n % 25) + " of session " + (n / 25) + ": the agent reads, plans and calls a tool",
          12 + (int) (n % 40), System.currentTimeMillis());
    }
  }
}
