package consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.ContextStore;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A Flink job project with lancecontext-flink: the store works on Flink's class path (create, add, get, count). */
class FlinkConsumerTest {
  @TempDir
  Path dir;

  @Test
  void aFlinkProjectCreatesAStoreAndReadsItsRecordBack() {
    try (ContextStore store = ContextStore.open(Map.of("path", dir.resolve("store").toString(), "schema", "rollout",
        "schema.embedding-dim", "8"))) {
      store.add(List.of(Map.of("id", "r1-s0", "rollout_id", "r1", "reward", 0.5)));
      Optional<Map<String, Object>> row = store.get("r1-s0");
      assertTrue(row.isPresent(), "the record just added");
      assertEquals("r1", row.get().get("rollout_id"));
      assertEquals(0.5, row.get().get("reward"));
      assertEquals(1, store.count());
    } finally {
      ContextStore.closeAllResident();
    }
  }

  /**
   * The SQL factory, found as Flink's planner finds it, lists its options, among them
   * {@code sink.delivery-guarantee} of Flink's {@code DeliveryGuarantee}: flink-connector-base arrives with
   * the connector (this project does not declare it; a cluster's lib/ does not hold it).
   */
  @Test
  void theSqlFactoryLoadsWithItsDeliveryGuaranteeOptionWithoutDeclaringFlinkConnectorBase() {
    var factory = org.apache.flink.table.factories.FactoryUtil.discoverFactory(getClass().getClassLoader(),
        org.apache.flink.table.factories.DynamicTableSinkFactory.class, "lancecontext");
    var guarantee = factory.optionalOptions().stream().filter(o -> o.key().equals("sink.delivery-guarantee"))
        .findFirst().orElseThrow();
    assertEquals("EXACTLY_ONCE", ((Enum<?>) guarantee.defaultValue()).name());
  }

  @Test
  void jacksonModulesResolveToOneVersion() {
    // databind needs annotations and core of its own minor version (2.21 databind with 2.18 annotations
    // fails with NoClassDefFoundError: com/fasterxml/jackson/annotation/JsonSerializeAs)
    var databind = com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION;
    var core = com.fasterxml.jackson.core.json.PackageVersion.VERSION;
    assertEquals(databind.getMinorVersion(), core.getMinorVersion(), "jackson-core " + core + " with databind " + databind);
    assertTrue(new com.fasterxml.jackson.databind.ObjectMapper().canSerialize(Map.class));
  }
}
