package io.lancecontext.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.util.QueryExecutionListener;
import scala.jdk.javaapi.CollectionConverters;

/** Captures the executed plans of the queries a block runs, and reads their SQL metrics (the Spark UI's). */
final class SparkPlans implements QueryExecutionListener {
  private final List<SparkPlan> plans = new CopyOnWriteArrayList<>();

  /** Runs {@code body} and returns the plans of the queries it executed. */
  static List<SparkPlan> during(SparkSession spark, Runnable body) {
    SparkPlans listener = new SparkPlans();
    spark.listenerManager().register(listener);
    try {
      body.run();
      try {
        spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
      } catch (java.util.concurrent.TimeoutException e) {
        throw new AssertionError("Spark's listener bus did not drain", e);
      }
    } finally {
      spark.listenerManager().unregister(listener);
    }
    return new ArrayList<>(listener.plans);
  }

  @Override
  public void onSuccess(String funcName, QueryExecution qe, long durationNs) {
    plans.add(qe.executedPlan());
  }

  @Override
  public void onFailure(String funcName, QueryExecution qe, Exception exception) {}

  /** Every SQL metric of every node (summed by name), AQE stages and command plans included. */
  static Map<String, Long> metrics(List<SparkPlan> plans) {
    Map<String, Long> out = new HashMap<>();
    for (SparkPlan p : plans) {
      collect(p, out);
    }
    return out;
  }

  /** The plans' trees as text (for assertions on distribution). */
  static String text(List<SparkPlan> plans) {
    StringBuilder sb = new StringBuilder();
    for (SparkPlan p : nodes(plans)) {
      sb.append(p.simpleString(1000)).append('\n');
    }
    return sb.toString();
  }

  private static List<SparkPlan> nodes(List<SparkPlan> plans) {
    List<SparkPlan> out = new ArrayList<>();
    for (SparkPlan p : plans) {
      walk(p, out);
    }
    return out;
  }

  private static void walk(SparkPlan p, List<SparkPlan> out) {
    out.add(p);
    if (p instanceof AdaptiveSparkPlanExec a) {
      walk(a.executedPlan(), out);
    }
    if (p instanceof QueryStageExec s) {
      walk(s.plan(), out);
    }
    for (Object c : CollectionConverters.asJava(p.innerChildren())) {
      if (c instanceof SparkPlan sp && !(p instanceof AdaptiveSparkPlanExec)) {
        walk(sp, out);
      }
    }
    for (SparkPlan c : CollectionConverters.asJava(p.children())) {
      walk(c, out);
    }
  }

  private static void collect(SparkPlan root, Map<String, Long> out) {
    for (SparkPlan p : nodes(List.of(root))) {
      CollectionConverters.asJava(p.metrics()).forEach((k, v) -> out.merge(k, v.value(), Long::sum));
    }
  }
}
