package consumer;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.result.FlushResult;
import io.lancecontext.core.result.MergeResult;
import io.lancecontext.it.JobProcess;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark job of {@link SparkOnS3Test}, in a JVM whose environment names the S3 server: a store on
 * {@code s3://} configured through {@code storage.*} options alone (read from stdin, {@code key=value}, then
 * {@code end}), written and read by Spark (local[2]), merged and flushed by core in the driver. Prints what it
 * read, one {@code name value} line each, and {@code done}.
 */
public final class SparkOnS3Job {
  private SparkOnS3Job() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Map<String, String> options = JobProcess.readOptionsFromStdin();
    String path = options.remove("path");
    String wrongSecret = options.remove("test.wrong-secret");
    SparkSession spark = SparkSession.builder()
        .master("local[2]")
        .appName("lancecontext-spark-on-s3")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.debug.maxToStringFields", "1000")  // whole plans in the log the test scans
        .getOrCreate();
    try {
      // 1. an atomic batch write creates the store: k0000..k0199, reward i / 8
      spark.range(0, 200, 1, 2)
          .selectExpr("format_string('k%04d', id) AS id", "concat('r', id % 5) AS rollout_id", "CAST(id AS DOUBLE) / 8 AS reward")
          .write().format("lancecontext").options(options).option("schema", "rollout").option("shards", "2")
          .option("write.commit", "atomic").mode("append").save(path);
      out.println("written atomic");
      // 2. an immediate upsert through the MemWAL: k0150..k0249, reward i / 8 + 1 (50 replaced, 50 new)
      spark.range(150, 250, 1, 2)
          .selectExpr("format_string('k%04d', id) AS id", "concat('u', id % 5) AS rollout_id", "CAST(id AS DOUBLE) / 8 + 1 AS reward")
          .write().format("lancecontext").options(options).option("write.commit", "immediate").mode("append").save(path);
      out.println("written immediate");

      Dataset<Row> store = spark.read().format("lancecontext").options(options).load(path)
          .select("id", "rollout_id", "reward");
      store.createOrReplaceTempView("store");
      print(out, "all", store);
      print(out, "filter", store.filter("reward > 10 AND reward < 25"));
      Dataset<Row> byId = spark.sql("SELECT id, rollout_id, reward FROM store WHERE id = 'k0160'");
      out.println("plan-by-id " + byId.queryExecution().executedPlan().toString().replace('\n', ' '));
      print(out, "by-id", byId);
      print(out, "by-id-base", spark.sql("SELECT id, rollout_id, reward FROM store WHERE id = 'k0042'"));

      // 3. core's merge in the driver (the JVM that wrote), then the same reads again
      try (ContextStore cs = ContextStore.open(storeOptions(options, path))) {
        MergeResult merged = cs.merge();
        out.println("merge " + merged.merged() + " " + merged.rows());
        out.println("after-merge-base " + cs.stats().baseRows());
      }
      print(out, "merged-all", store);
      print(out, "merged-filter", store.filter("reward > 10 AND reward < 25"));
      print(out, "merged-by-id", spark.sql("SELECT id, rollout_id, reward FROM store WHERE id = 'k0160'"));
      try (ContextStore cs = ContextStore.open(storeOptions(options, path))) {
        FlushResult flushed = cs.flush();
        out.println("flush " + flushed.complete() + " " + cs.stats().baseRows() + " " + cs.stats().freshRows());
        out.println("tostring " + cs + " " + cs.config());
      }
      print(out, "flushed-all", store);

      // 4. a catalog whose warehouse is on S3: namespaces, CREATE TABLE, INSERT, SHOW, CALL, DROP
      spark.conf().set("spark.sql.catalog.lcs", "io.lancecontext.spark.catalog.LanceContextCatalog");
      spark.conf().set("spark.sql.catalog.lcs.warehouse", path + "-wh");
      options.forEach((k, v) -> spark.conf().set("spark.sql.catalog.lcs." + k, v));
      spark.sql("CREATE NAMESPACE lcs.db");
      spark.sql("CREATE NAMESPACE lcs.empty");
      spark.sql("CREATE TABLE lcs.db.t USING lancecontext TBLPROPERTIES ('schema' = 'rollout', 'shards' = '2')");
      spark.sql("INSERT INTO lcs.db.t (id, rollout_id, reward) SELECT format_string('c%02d', id), 'c', CAST(id AS DOUBLE) "
          + "FROM range(10)");
      out.println("catalog-namespaces " + names(spark.sql("SHOW NAMESPACES IN lcs"), 0));
      out.println("catalog-tables " + names(spark.sql("SHOW TABLES IN lcs.db"), 1));
      out.println("catalog-count " + spark.sql("SELECT count(*) FROM lcs.db.t").first().getLong(0));
      Row merged = spark.sql("CALL lcs.system.merge(table => 'db.t')").first();
      out.println("catalog-merge " + merged.getBoolean(merged.fieldIndex("merged")) + " " + merged);
      out.println("catalog-count-merged " + spark.sql("SELECT count(*) FROM lcs.db.t WHERE reward >= 5").first().getLong(0));
      spark.sql("DROP TABLE lcs.db.t");
      out.println("catalog-tables-dropped " + names(spark.sql("SHOW TABLES IN lcs.db"), 1));
      spark.sql("DROP NAMESPACE lcs.db");
      out.println("catalog-namespaces-dropped " + names(spark.sql("SHOW NAMESPACES IN lcs"), 0));

      // 5. the wrong secret: refused for the store resident in this JVM (idle, it reopens with the new options)
      //    and for another store, at open because it disagrees with AWS_SECRET_ACCESS_KEY; no message shows a secret
      Map<String, String> wrong = new LinkedHashMap<>(options);
      wrong.put("storage.aws_secret_access_key", wrongSecret);
      out.println("wrong-secret-open " + failure(() -> spark.read().format("lancecontext").options(wrong).load(path).count()));
      out.println("wrong-secret-new " + failure(() -> spark.range(0, 1).selectExpr("'x' AS id").write()
          .format("lancecontext").options(wrong).option("schema", "rollout").mode("append").save(path + "-other")));
      out.println("done");
    } catch (Exception e) {
      out.println("error " + e.getClass().getName() + " " + messages(e));
      e.printStackTrace();
    } finally {
      spark.stop();
      ContextStore.closeAllResident();
    }
    System.exit(0);
  }

  private static String names(Dataset<Row> rows, int column) {
    List<String> out = new java.util.ArrayList<>();
    for (Row r : rows.collectAsList()) {
      out.add(r.getString(column));
    }
    java.util.Collections.sort(out);
    return String.join(",", out);
  }

  private static String failure(Runnable r) {
    try {
      r.run();
      return "none";
    } catch (RuntimeException e) {
      return messages(e);
    }
  }

  private static Map<String, String> storeOptions(Map<String, String> options, String path) {
    Map<String, String> o = new LinkedHashMap<>(options);
    o.put("path", path);
    return o;
  }

  private static void print(PrintStream out, String name, Dataset<Row> rows) {
    List<Row> all = rows.collectAsList();
    out.println(name + "-count " + all.size());
    for (Row r : all) {
      out.println(name + " " + r.getString(0) + " " + r.getString(1) + " " + r.getDouble(2));
    }
  }

  private static String messages(Throwable t) {
    return JobProcess.messages(t);
  }
}
