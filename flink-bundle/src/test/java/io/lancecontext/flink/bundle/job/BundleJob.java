package io.lancecontext.flink.bundle.job;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.result.StoreStats;
import io.lancecontext.flink.sink.LanceContextSink;
import java.util.Map;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * The job {@code BundleOnClusterTest} submits with {@code flink run} ({@code CliFrontend}): a user jar holding
 * only this package, the connector coming from the cluster's class path (the bundle). {@code BundleJob <store>
 * <rows>}:
 * <ol>
 *   <li>a DataStream job writes {@code rows} rows through {@link LanceContextSink} (at-least-once, two writer
 *       subtasks, four buckets);</li>
 *   <li>a SQL batch job inserts two more rows through the table factory (exactly-once: staged, then published by
 *       the committer);</li>
 *   <li>a SQL lookup join at parallelism 2 prints, for each TaskManager that looked keys up, its
 *       {@link SessionReport} ({@code report ...});</li>
 *   <li>a SQL batch scan counts the store ({@code count <n>}).</li>
 * </ol>
 */
public final class BundleJob {
  static final int PROBES = 20;

  private BundleJob() {}

  public static void main(String[] args) throws Exception {
    String path = args[0];
    int rows = Integer.parseInt(args[1]);

    RowType type = RowType.of(new LogicalType[] {new VarCharType(false, VarCharType.MAX_LENGTH),
        new VarCharType(true, VarCharType.MAX_LENGTH), new IntType()}, new String[] {"id", "text_payload", "token_count"});
    // at-least-once: the report counts each TaskManager's puts (exactly-once would stage parts instead)
    LanceContextSink<RowData> sink = LanceContextSink.builder()
        .options(Map.of("path", path, "schema", "context", "schema.embedding-dim", "4", "shards", "4"))
        .rowType(type).deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build();
    StreamExecutionEnvironment write = StreamExecutionEnvironment.getExecutionEnvironment();
    write.setParallelism(2);
    write.setMaxParallelism(128);
    write.fromSequence(0, rows - 1).map(new ToRow()).returns(InternalTypeInfo.of(type)).sinkTo(sink);
    write.execute("lancecontext bundle: DataStream write");
    System.out.println("written " + rows);

    String ddl = "CREATE TABLE store (id STRING, text_payload STRING, token_count INT) WITH ("
        + "'connector' = 'lancecontext', 'path' = '" + path + "')";
    StreamTableEnvironment batch = batch();
    batch.executeSql(ddl);
    batch.executeSql("INSERT INTO store VALUES ('x1', 'sql 1', 1), ('x2', 'sql 2', 2)").await();
    System.out.println("inserted 2");

    // one lookup subtask per TaskManager (two slots, one each), probes dealt round robin over both; each row
    // carries the report of the JVM that looked it up, taken after its lookup (in the same task)
    StreamExecutionEnvironment lookups = StreamExecutionEnvironment.getExecutionEnvironment();
    lookups.setParallelism(2);
    lookups.setMaxParallelism(128);
    StreamTableEnvironment tables = StreamTableEnvironment.create(lookups);
    tables.createTemporarySystemFunction("SESSION_REPORT", SessionReport.class);
    tables.createTemporaryView("probes", tables.fromDataStream(
        lookups.fromSequence(0, PROBES - 1).setParallelism(1).rebalance().map(n -> "k" + (n * 97 % rows))
            .returns(Types.STRING),
        Schema.newBuilder().column("f0", DataTypes.STRING()).columnByExpression("pt", "PROCTIME()").build()));
    tables.executeSql(ddl);
    int joined = 0;
    Map<String, String> last = new java.util.TreeMap<>();
    try (CloseableIterator<Row> it = tables.executeSql("SELECT p.f0, s.token_count, SESSION_REPORT('" + path + "') "
        + "FROM probes AS p JOIN store FOR SYSTEM_TIME AS OF p.pt AS s ON p.f0 = s.id").collect()) {
      while (it.hasNext()) {
        Row row = it.next();
        String key = (String) row.getField(0);
        if (!row.getField(1).equals(Integer.parseInt(key.substring(1)) % 1000)) {
          throw new IllegalStateException("token_count of " + key + ": " + row);
        }
        String report = (String) row.getField(2);
        last.put(report.substring(0, report.indexOf(' ')), report);  // by pid: one subtask's rows arrive in order
        joined++;
      }
    }
    System.out.println("joined " + joined);
    last.values().forEach(r -> System.out.println("report " + r));

    try (CloseableIterator<Row> it = batch.executeSql("SELECT COUNT(*) FROM store").collect()) {
      Row total = it.next();
      System.out.println("count " + total.getField(0));
    }
  }

  private static StreamTableEnvironment batch() {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setRuntimeMode(RuntimeExecutionMode.BATCH);
    env.setParallelism(2);
    return StreamTableEnvironment.create(env, EnvironmentSettings.inBatchMode());
  }

  /** One row per number: key {@code k<n>}. */
  public static final class ToRow implements MapFunction<Long, RowData> {
    @Override
    public RowData map(Long n) {
      return GenericRowData.of(StringData.fromString("k" + n), StringData.fromString("row " + n), (int) (n % 1000));
    }
  }

  /**
   * What the TaskManager evaluating it holds: its pid, where lancecontext's runtime was loaded from, the shared
   * Lance session and budget, the resident stores and its puts to the store at {@code path}. Not deterministic,
   * so the planner evaluates it in the TaskManager, per row.
   */
  public static final class SessionReport extends ScalarFunction {
    public String eval(String path) {
      LanceRuntime runtime = LanceRuntime.get();
      try (ContextStore store = ContextStore.open(Map.of("path", path))) {
        StoreStats stats = store.stats();
        long puts = stats.shards().stream().mapToLong(StoreStats.Shard::puts).sum();
        return "pid=" + ProcessHandle.current().pid()
            + " systemLoader=" + (LanceRuntime.class.getClassLoader() == ClassLoader.getSystemClassLoader())
            + " jobLoader=" + (SessionReport.class.getClassLoader() != ClassLoader.getSystemClassLoader())
            + " from=" + LanceRuntime.class.getProtectionDomain().getCodeSource().getLocation().getPath()
            + " session=" + (runtime.sharedSession() != null)
            + " budget=" + (runtime.sharedBudget() == null ? -1 : runtime.sharedBudget().bytes())
            + " sessionBytes=" + runtime.sessionSizeBytes()
            + " residentStores=" + stats.residentStores()
            + " puts=" + puts;
      }
    }

    @Override
    public boolean isDeterministic() {
      return false;
    }
  }
}
