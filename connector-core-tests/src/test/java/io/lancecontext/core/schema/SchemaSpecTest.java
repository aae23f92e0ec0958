package io.lancecontext.core.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.SchemaException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SchemaSpecTest {

  static final String DESIGN_EXAMPLE = """
      { "key": "id",
        "columns": [
          {"name": "id", "type": "string", "nullable": false},
          {"name": "created_at", "type": "timestamp"},
          {"name": "text", "type": "large_string"},
          {"name": "image", "type": "large_binary", "blob": true},
          {"name": "embedding", "type": "vector", "dim": 768, "metric": "cosine"},
          {"name": "meta", "type": "struct", "fields": [{"name": "step", "type": "int32"}]},
          {"name": "tags", "type": "list", "item": {"type": "string"}} ],
        "capabilities": ["tombstones", "unique-ids"] }
      """;

  @Test
  void vectorMetricsAreNamedInAnyCase() {
    assertEquals(VectorMetric.L2, VectorMetric.fromJsonName("L2").orElseThrow());
    assertEquals(VectorMetric.COSINE, VectorMetric.fromJsonName("Cosine").orElseThrow());
    assertEquals(VectorMetric.DOT, VectorMetric.fromJsonName(" dot ").orElseThrow());
    assertTrue(VectorMetric.fromJsonName("hamming").isEmpty());
    assertTrue(VectorMetric.fromJsonName(null).isEmpty());
    SchemaSpec spec = SchemaSpec.fromJson(DESIGN_EXAMPLE.replace("\"cosine\"", "\"COSINE\""));
    assertEquals(VectorMetric.COSINE, spec.column("embedding").metric());
    assertTrue(spec.toJson().contains("\"cosine\""), "written back in its canonical lower case");
  }

  @Test
  void parsesTheDesignExample() {
    SchemaSpec spec = SchemaSpec.fromJson(DESIGN_EXAMPLE);
    assertEquals("id", spec.key());
    assertEquals(7, spec.columns().size());
    assertEquals(ColumnType.VECTOR, spec.column("embedding").type());
    assertEquals(768, spec.column("embedding").dim());
    assertEquals(VectorMetric.COSINE, spec.column("embedding").metric());
    assertTrue(spec.column("image").blob());
    assertEquals(ColumnType.INT32, spec.column("meta").field("step").type());
    assertEquals(ColumnType.STRING, spec.column("tags").item().type());
    assertTrue(spec.has(Capability.TOMBSTONES));
    assertTrue(spec.has(Capability.UNIQUE_IDS));
    assertFalse(spec.has(Capability.LIFECYCLE));
  }

  @Test
  void jsonRoundTripsExactly() {
    SchemaSpec spec = SchemaSpec.fromJson(DESIGN_EXAMPLE);
    String json = spec.toJson();
    SchemaSpec again = SchemaSpec.fromJson(json);
    assertEquals(spec, again);
    assertEquals(json, again.toJson());
  }

  @Test
  void builderAndJsonAgree() {
    SchemaSpec built = SchemaSpec.builder()
        .idColumn()
        .column("created_at", ColumnType.TIMESTAMP)
        .column("text", ColumnType.LARGE_STRING)
        .column(ColumnSpec.blob("image", ColumnType.LARGE_BINARY))
        .column(ColumnSpec.vector("embedding", 768, VectorMetric.COSINE))
        .column(ColumnSpec.struct("meta", ColumnSpec.of("step", ColumnType.INT32)))
        .column(ColumnSpec.list("tags", ColumnSpec.item(ColumnType.STRING)))
        .capability(Capability.UNIQUE_IDS)
        .capability(Capability.TOMBSTONES)
        .build();
    assertEquals(SchemaSpec.fromJson(DESIGN_EXAMPLE), built);
  }

  @Test
  void keyDefaultsToNonNullableWhenNullableIsOmitted() {
    SchemaSpec spec = SchemaSpec.fromJson("{\"columns\":[{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"x\",\"type\":\"int64\"}]}");
    assertFalse(spec.column("id").nullable());
    assertTrue(spec.column("x").nullable());
  }

  static Stream<Arguments> badSpecs() {
    return Stream.of(
        bad("no columns", "{\"columns\":[]}", null, "at least one column"),
        bad("missing key column", "{\"columns\":[{\"name\":\"x\",\"type\":\"string\"}]}", "id", "not declared"),
        bad("key not string", "{\"columns\":[{\"name\":\"id\",\"type\":\"int64\",\"nullable\":false}]}", "id", "must be of type string"),
        bad("key large_string", "{\"columns\":[{\"name\":\"id\",\"type\":\"large_string\",\"nullable\":false}]}", "id", "must be of type string"),
        bad("key nullable", "{\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":true}]}", "id", "non-nullable"),
        bad("user key not id", "{\"key\":\"pk\",\"columns\":[{\"name\":\"pk\",\"type\":\"string\",\"nullable\":false}]}", "pk", "must be named 'id'"),
        bad("reserved _rowid", spec("{\"name\":\"_rowid\",\"type\":\"int64\"}"), "_rowid", "reserved"),
        bad("reserved _rowaddr", spec("{\"name\":\"_rowaddr\",\"type\":\"int64\"}"), "_rowaddr", "reserved"),
        bad("reserved _mem_wal prefix", spec("{\"name\":\"_mem_wal_x\",\"type\":\"int64\"}"), "_mem_wal_x", "_mem_wal"),
        bad("reserved _lance prefix", spec("{\"name\":\"_lance_frag\",\"type\":\"int64\"}"), "_lance_frag", "_lance"),
        bad("reserved _lc_ prefix", spec("{\"name\":\"_lc_seq\",\"type\":\"int64\"}"), "_lc_seq", "_lc_"),
        bad("tombstone sentinel", spec("{\"name\":\"_lc_tombstone\",\"type\":\"bool\"}"), "_lc_tombstone", "tombstone sentinel"),
        bad("reserved case-insensitive", spec("{\"name\":\"_ROWID\",\"type\":\"int64\"}"), "_ROWID", "reserved"),
        bad("unsupported type", spec("{\"name\":\"d\",\"type\":\"decimal\"}"), "d", "unsupported type 'decimal'"),
        bad("unsupported map type", spec("{\"name\":\"m\",\"type\":\"map\"}"), "m", "unsupported type 'map'"),
        bad("blob on string", spec("{\"name\":\"b\",\"type\":\"string\",\"blob\":true}"), "b", "blob: true is only allowed on binary"),
        bad("blob nested", spec("{\"name\":\"s\",\"type\":\"struct\",\"fields\":[{\"name\":\"b\",\"type\":\"binary\",\"blob\":true}]}"), "s.b", "top-level"),
        bad("vector without dim", spec("{\"name\":\"v\",\"type\":\"vector\",\"metric\":\"l2\"}"), "v", "dim between"),
        bad("vector zero dim", spec("{\"name\":\"v\",\"type\":\"vector\",\"dim\":0,\"metric\":\"l2\"}"), "v", "dim between"),
        bad("vector negative dim", spec("{\"name\":\"v\",\"type\":\"vector\",\"dim\":-3,\"metric\":\"l2\"}"), "v", "dim between"),
        bad("vector without metric", spec("{\"name\":\"v\",\"type\":\"vector\",\"dim\":8}"), "v", "needs a metric"),
        bad("vector bad metric", spec("{\"name\":\"v\",\"type\":\"vector\",\"dim\":8,\"metric\":\"hamming\"}"), "v", "unsupported metric 'hamming'"),
        bad("dim on non-vector", spec("{\"name\":\"x\",\"type\":\"int32\",\"dim\":8}"), "x", "dim is only allowed on vector"),
        bad("metric on non-vector", spec("{\"name\":\"x\",\"type\":\"float32\",\"metric\":\"l2\"}"), "x", "metric is only allowed on vector"),
        bad("vector inside struct", spec("{\"name\":\"s\",\"type\":\"struct\",\"fields\":[{\"name\":\"v\",\"type\":\"vector\",\"dim\":4,\"metric\":\"l2\"}]}"), "s.v", "top-level"),
        bad("empty struct", spec("{\"name\":\"s\",\"type\":\"struct\",\"fields\":[]}"), "s", "at least one field"),
        bad("list without item", spec("{\"name\":\"l\",\"type\":\"list\"}"), "l", "needs an item type"),
        bad("fields on list", spec("{\"name\":\"l\",\"type\":\"list\",\"item\":{\"type\":\"string\"},\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]}"), "l", "fields are only allowed on struct"),
        bad("item on struct", spec("{\"name\":\"s\",\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}],\"item\":{\"type\":\"string\"}}"), "s", "item is only allowed on list"),
        bad("unsupported nested type", spec("{\"name\":\"l\",\"type\":\"list\",\"item\":{\"type\":\"uuid\"}}"), "l[]", "unsupported type 'uuid'"),
        bad("duplicate column", spec("{\"name\":\"a\",\"type\":\"string\"},{\"name\":\"A\",\"type\":\"int32\"}"), "A", "duplicate column name"),
        bad("duplicate struct field", spec("{\"name\":\"s\",\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"},{\"name\":\"a\",\"type\":\"int32\"}]}"), "s.a", "duplicate"),
        bad("bad identifier", spec("{\"name\":\"my col\",\"type\":\"string\"}"), "my col", "must match"),
        bad("dotted name", spec("{\"name\":\"a.b\",\"type\":\"string\"}"), "a.b", "must match"),
        bad("unknown column key", spec("{\"name\":\"a\",\"type\":\"string\",\"nulable\":true}"), "a", "unknown key \"nulable\""),
        bad("unknown spec key", "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"}],\"shards\":4}", null, "unknown key \"shards\""),
        bad("unknown capability", "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"}],\"capabilities\":[\"versioning\"]}", null, "unknown capability 'versioning'"),
        bad("supersession without supersedes", "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"}],\"capabilities\":[\"supersession\"]}", "supersedes", "needs a string column"),
        bad("supersedes wrong type", spec("{\"name\":\"supersedes\",\"type\":\"int64\"}").replace("]}", "],\"capabilities\":[\"supersession\"]}"), "supersedes", "to be string"),
        bad("lifecycle without columns", "{\"columns\":[{\"name\":\"id\",\"type\":\"string\"}],\"capabilities\":[\"lifecycle\"]}", "lifecycle_status", "lifecycle needs"),
        bad("expires_at wrong type", spec("{\"name\":\"expires_at\",\"type\":\"string\"}").replace("]}", "],\"capabilities\":[\"lifecycle\"]}"), "expires_at", "to be timestamp"),
        bad("tombstones with non-nullable column", spec("{\"name\":\"n\",\"type\":\"int32\",\"nullable\":false}").replace("]}", "],\"capabilities\":[\"tombstones\"]}"), "n", "tombstones needs every non-key column to be nullable"),
        bad("missing type", spec("{\"name\":\"a\"}"), "a", "needs a \"type\""),
        bad("missing name", spec("{\"type\":\"string\"}"), "<unnamed>", "needs a \"name\""),
        bad("malformed json", "{\"columns\":[", null, "malformed schema spec JSON"),
        bad("duplicate json key", "{\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"type\":\"int32\"}]}", null, "malformed"),
        bad("preset that differs", "{\"key\":\"id\",\"preset\":\"rollout\",\"columns\":[{\"name\":\"id\",\"type\":\"string\"}]}", null, "differ from it"),
        bad("unknown preset", "{\"preset\":\"chat\",\"columns\":[{\"name\":\"id\",\"type\":\"string\"}]}", null, "unknown preset 'chat'"));
  }

  private static String spec(String extraColumns) {
    return "{\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":false}," + extraColumns + "]}";
  }

  private static Arguments bad(String rule, String json, String column, String messagePart) {
    return Arguments.of(rule, json, column, messagePart);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badSpecs")
  void rejectsBadSpecNamingColumnAndRule(String rule, String json, String column, String messagePart) {
    SchemaException e = assertThrows(SchemaException.class, () -> SchemaSpec.fromJson(json), rule);
    assertTrue(e.getMessage().contains(messagePart), () -> rule + ": message '" + e.getMessage() + "' lacks '" + messagePart + "'");
    if (column != null) {
      assertEquals(column, e.column().orElse(null), () -> rule + ": " + e.getMessage());
      assertTrue(e.getMessage().contains("'" + column + "'"), () -> rule + ": message does not name the column: " + e.getMessage());
    }
  }

  @Test
  void builderRejectsTheSameRulesAsJson() {
    SchemaException e = assertThrows(SchemaException.class, () -> SchemaSpec.builder().idColumn()
        .column(ColumnSpec.vector("v", 0, VectorMetric.L2)).build());
    assertEquals("v", e.column().orElseThrow());
    SchemaException k = assertThrows(SchemaException.class, () -> SchemaSpec.builder()
        .column(ColumnSpec.string("id")).build());
    assertTrue(k.getMessage().contains("non-nullable"), k.getMessage());
  }
}
