package io.lancecontext.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancecontext.core.ContextStore;
import io.lancecontext.flink.sink.LanceContextSink;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A -U is never published without its +U: no put between them makes the key vanish for readers. */
class FlinkUpdateBeforeTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER = FlinkTestCluster.create(2);

  @TempDir
  static Path dir;

  /** What a reader saw of key 'a' while the +U was held back, by store path. */
  static final Map<String, Optional<Object>> SEEN = new ConcurrentHashMap<>();

  @AfterAll
  static void closeStores() {
    ContextStore.closeAllResident();
  }

  private static final RowType COUNTS = RowType.of(new LogicalType[] {new VarCharType(false, VarCharType.MAX_LENGTH),
      new IntType()}, new String[] {"id", "token_count"});

  private static RowData row(RowKind kind, String id, int count) {
    return GenericRowData.ofKind(kind, StringData.fromString(id), count);
  }

  /** Holds back every +U for {@code delay} (several flush intervals), then reads its key from the store. */
  private static final class ReadBeforeUpdateAfter implements MapFunction<RowData, RowData> {
    private static final long serialVersionUID = 1L;
    private final String path;
    private final long delay;

    ReadBeforeUpdateAfter(String path, long delay) {
      this.path = path;
      this.delay = delay;
    }

    @Override
    public RowData map(RowData row) throws Exception {
      if (row.getRowKind() == RowKind.UPDATE_AFTER) {
        Thread.sleep(delay);
        try (ContextStore store = ContextStore.open(Map.of("path", path))) {
          SEEN.put(path, store.get(row.getString(0).toString()).map(r -> r.get("token_count")));
        }
      }
      return row;
    }
  }

  /**
   * At-least-once with {@code sink.buffer-flush.interval}: the interval flushes that put while a -U waits for its
   * +U leave the key's row in place (it used to be deleted there and come back with the +U's put); the +U then
   * replaces it, and a lone -U still deletes its key at the end of input.
   */
  @Test
  void intervalFlushesBetweenAnUpdateBeforeAndItsUpdateAfterNeverDeleteTheKey() throws Exception {
    String path = dir.resolve("held").toString();
    Map<String, String> options = Map.of("path", path, "schema", "context", "schema.embedding-dim", "2");
    try (ContextStore store = ContextStore.open(options)) {
      store.add(List.of(Map.of("id", "a", "token_count", 1), Map.of("id", "b", "token_count", 1)));
    }
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    env.setBufferTimeout(0);
    env.fromData(List.of(row(RowKind.UPDATE_BEFORE, "a", 1), row(RowKind.UPDATE_AFTER, "a", 2),
            row(RowKind.UPDATE_BEFORE, "b", 1)), InternalTypeInfo.of(COUNTS))
        .map(new ReadBeforeUpdateAfter(path, 1000)).returns(InternalTypeInfo.of(COUNTS))
        .sinkTo(LanceContextSink.builder().options(options).rowType(COUNTS).flushInterval(Duration.ofMillis(50))
            .deliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build());
    env.execute();
    assertEquals(Optional.of(1), SEEN.get(path), "between the -U and its +U (after ~20 interval flushes) 'a' kept its row");
    try (ContextStore store = ContextStore.open(Map.of("path", path))) {
      assertEquals(2, store.get("a").orElseThrow().get("token_count"), "the +U row");
      assertEquals(Optional.empty(), store.get("b"), "a lone -U deletes its key at the end of input");
      assertEquals(1, store.count());
    }
  }
}
