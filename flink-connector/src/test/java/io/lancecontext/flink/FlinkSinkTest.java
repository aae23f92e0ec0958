package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import io.lancecontext.flink.sink.LanceContextSink;
import java.nio.file.Path;
import java.util.ArrayList;
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

/** The DataStream sink: rows partitioned by their key's bucket before the writers, then upserted. */
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
    DataStream<RowData> source = env.fromData(rows, InternalTypeInfo.of(type));
    source.sinkTo(sink);
    StreamGraph graph = env.getStreamGraph(false);
    boolean keyed = false;
    for (StreamNode node : graph.getStreamNodes()) {
      if (node.getOperatorName().contains("Writer")) {
        for (StreamEdge in : node.getInEdges()) {
          keyed |= in.getPartitioner() instanceof CustomPartitionerWrapper;
        }
      }
    }
    assertTrue(keyed, "the sink writer's input is partitioned by bucket");
    env.execute(graph);
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(500, store.count());
      assertEquals(42.0, store.get("k42").orElseThrow().get("reward"));
    }
  }
}
