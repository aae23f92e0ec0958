package consumer;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.flink.sink.LanceContextSink;
import io.lancecontext.flink.sink.RecordConverter;
import io.lancecontext.flink.source.LanceContextSource;
import io.lancecontext.it.JobProcess;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.util.CloseableIterator;

/**
 * The Flink job of {@link FlinkOnS3Test}, in a JVM whose environment names the S3 server: an exactly-once sink
 * into a store on {@code s3://} configured through {@code storage.*} options alone (read from stdin,
 * {@code key=value}, then {@code end}), then a bounded scan of it, each a job on a local MiniCluster
 * (parallelism 2). Prints the rows the scan read, one {@code name value} line each, and {@code done}.
 */
public final class FlinkOnS3Job {
  private FlinkOnS3Job() {}

  /** Record {@code j} of the input: key {@code f<j % 200>}, so keys f0000..f0099 come twice (the later wins). */
  public static Map<String, Object> record(int j) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", String.format("f%04d", j % 200));
    r.put("rollout_id", "r" + (j % 7));
    r.put("reward", (double) j);
    return r;
  }

  public static final int RECORDS = 300;

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Map<String, String> options = JobProcess.readOptionsFromStdin();
    String wrongSecret = options.remove("test.wrong-secret");
    try {
      List<Map<String, Object>> records = new ArrayList<>();
      for (int j = 0; j < RECORDS; j++) {
        records.add(record(j));
      }
      Map<String, String> create = new LinkedHashMap<>(options);
      create.put("schema", "rollout");
      create.put("shards", "2");
      LanceContextSink<Map<String, Object>> sink = LanceContextSink.builder().options(create)
          .deliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE).build(RecordConverter.maps());
      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
      env.setParallelism(2);
      env.enableCheckpointing(200);
      env.fromData(records, Types.MAP(Types.STRING, Types.GENERIC(Object.class))).sinkTo(sink);
      env.execute("lancecontext-sink-to-s3");
      out.println("sink done");

      LanceContextSource source = LanceContextSource.builder().options(options)
          .scan(ScanSpec.all().withColumns(List.of("id", "rollout_id", "reward"))).build();
      StreamExecutionEnvironment scanEnv = StreamExecutionEnvironment.getExecutionEnvironment();
      scanEnv.setParallelism(2);
      int n = 0;
      try (CloseableIterator<RowData> rows = scanEnv.fromSource(source, WatermarkStrategy.noWatermarks(),
          "lancecontext-scan-s3", InternalTypeInfo.of(source.rowType())).executeAndCollect("lancecontext-scan-s3")) {
        while (rows.hasNext()) {
          RowData r = rows.next();
          out.println("row " + r.getString(0) + " " + r.getString(1) + " " + r.getDouble(2));
          n++;
        }
      }
      out.println("row-count " + n);
      try (ContextStore store = ContextStore.open(options)) {
        out.println("core-count " + store.count());
        out.println("tostring " + store + " " + store.config());
      }

      // the wrong secret: a store whose secret disagrees with AWS_SECRET_ACCESS_KEY is refused when the sink is built
      Map<String, String> wrong = new LinkedHashMap<>(create);
      wrong.put("storage.aws_secret_access_key", wrongSecret);
      wrong.put("path", options.get("path") + "-other");
      String failure;
      try {
        LanceContextSink.builder().options(wrong).build(RecordConverter.maps());
        failure = "none";
      } catch (RuntimeException e) {
        failure = messages(e);
      }
      out.println("wrong-secret-new " + failure);
      out.println("done");
    } catch (Exception e) {
      out.println("error " + e.getClass().getName() + " " + messages(e));
      e.printStackTrace();
    } finally {
      ContextStore.closeAllResident();
    }
    System.exit(0);
  }

  private static String messages(Throwable t) {
    return JobProcess.messages(t);
  }
}
