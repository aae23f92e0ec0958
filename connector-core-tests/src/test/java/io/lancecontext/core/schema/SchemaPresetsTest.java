package io.lancecontext.core.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/** Every preset's columns, order, Arrow types and capabilities, exactly as design §2 lists them. */
class SchemaPresetsTest {

  private static final String S = "Utf8";
  private static final String LS = "LargeUtf8";
  private static final String TS = "Timestamp(MICROSECOND, UTC)";
  private static final String I32 = "Int(32, true)";
  private static final String I64 = "Int(64, true)";
  private static final String F32 = "FloatingPoint(SINGLE)";
  private static final String F64 = "FloatingPoint(DOUBLE)";
  private static final String B = "Bool";
  private static final String BLOB = "LargeBinary";

  private static String vec(int dim) {
    return "FixedSizeList(" + dim + ")<item: " + F32 + ">";
  }

  private static String listOf(String item) {
    return "List<item: " + item + ">";
  }

  @Test
  void contextPresetHas26ColumnsInOrder() {
    assertColumns(SchemaPresets.context(1536), List.of(
        "id:" + S, "run_id:" + S, "bot_id:" + S, "session_id:" + S, "parent_id:" + S, "external_id:" + S,
        "created_at:" + TS, "updated_at:" + TS, "role:" + S, "content_type:" + S, "text_payload:" + LS,
        "binary_payload:" + BLOB, "embedding:" + vec(1536), "embedding_model:" + S,
        "state_metadata:Struct<step: " + I32 + ", active_plan_id: " + S + ", tokens_used: " + I32 + ", custom: " + S + ">",
        "relationships:" + listOf("Struct<kind: " + S + ", target_id: " + S + ">"), "tags:" + listOf(S),
        "source:" + S, "lifecycle_status:" + S, "expires_at:" + TS, "supersedes:" + S, "importance:" + F32,
        "token_count:" + I32, "metadata_json:" + LS, "tenant:" + S, "trace_id:" + S));
    assertEquals(Set.of(Capability.TOMBSTONES, Capability.SUPERSESSION, Capability.LIFECYCLE),
        SchemaPresets.context(1536).capabilities());
  }

  @Test
  void rolloutPresetHas36ColumnsInOrder() {
    assertColumns(SchemaPresets.rollout(1536), List.of(
        "id:" + S, "rollout_id:" + S, "sequence_order:" + I32, "group_id:" + S, "prompt_id:" + S, "dataset:" + S,
        "environment:" + S, "task_id:" + S, "policy_version:" + I64, "model_name:" + S, "worker_id:" + S,
        "actor:" + S, "content_type:" + S, "text_payload:" + LS, "binary_payload:" + BLOB,
        "prompt_tokens:" + listOf(I32), "completion_tokens:" + listOf(I32), "logprobs:" + listOf(F32),
        "reward:" + F64, "advantage:" + F64, "value:" + F64, "done:" + B, "truncated:" + B, "finish_reason:" + S,
        "num_tokens:" + I32, "latency_ms:" + F64, "temperature:" + F32, "top_p:" + F32, "seed:" + I64,
        "created_at:" + TS, "completed_at:" + TS,
        "tool_calls:" + listOf("Struct<name: " + S + ", arguments: " + LS + ">"), "metadata_json:" + LS,
        "tags:" + listOf(S), "embedding:" + vec(1536), "split:" + S));
    assertTrue(SchemaPresets.rollout(1536).capabilities().isEmpty());
  }

  @Test
  void datagenPresetHas33ColumnsKeyedByEventId() {
    SchemaSpec datagen = SchemaPresets.datagen(1536);
    assertColumns(datagen, List.of(
        "event_id:" + S, "run_id:" + S, "pipeline:" + S, "stage:" + S, "step:" + I64, "event_type:" + S,
        "status:" + S, "created_at:" + TS, "started_at:" + TS, "finished_at:" + TS, "duration_ms:" + F64,
        "worker_id:" + S, "host:" + S, "generator_model:" + S, "prompt_template:" + S, "prompt_text:" + LS,
        "output_text:" + LS, "output_binary:" + BLOB, "input_ids:" + listOf(S), "output_ids:" + listOf(S),
        "parent_event_id:" + S, "quality_score:" + F64, "filter_passed:" + B, "filter_reason:" + S,
        "num_tokens_in:" + I32, "num_tokens_out:" + I32, "cost_usd:" + F64, "error_message:" + S,
        "retry_count:" + I32, "seed:" + I64, "tags:" + listOf(S), "metadata_json:" + LS, "embedding:" + vec(1536)));
    assertEquals("event_id", datagen.key());
    assertTrue(datagen.capabilities().isEmpty());
  }

  @Test
  void keyCarriesPrimaryKeyMetadataAndIsNonNullable() {
    for (String name : SchemaPresets.NAMES) {
      SchemaSpec spec = SchemaPresets.byName(name, 8);
      Schema arrow = spec.toArrowSchema();
      Field key = arrow.findField(spec.key());
      assertFalse(key.isNullable(), name);
      assertEquals("true", key.getMetadata().get(ArrowSchemas.PRIMARY_KEY_METADATA), name);
      for (Field f : arrow.getFields()) {
        if (!f.getName().equals(spec.key())) {
          assertNull(f.getMetadata().get(ArrowSchemas.PRIMARY_KEY_METADATA), name + "." + f.getName());
          assertTrue(f.isNullable(), name + "." + f.getName());
        }
      }
    }
  }

  @Test
  void blobAndVectorMetadata() {
    Schema arrow = SchemaPresets.context(1536).toArrowSchema();
    assertEquals("true", arrow.findField("binary_payload").getMetadata().get(ArrowSchemas.BLOB_METADATA));
    assertNull(arrow.findField("text_payload").getMetadata().get(ArrowSchemas.BLOB_METADATA));
    assertEquals("cosine", arrow.findField("embedding").getMetadata().get(ArrowSchemas.METRIC_METADATA));
  }

  @Test
  void embeddingDimIsAParameter() {
    assertEquals(vec(64), describe(SchemaPresets.rollout(64).toArrowSchema().findField("embedding")));
    assertEquals(64, SchemaPresets.byName("datagen", 64).column("embedding").dim());
  }

  @Test
  void tombstoneSystemColumnOnlyWithTheCapability() {
    List<String> context = SchemaPresets.context(8).toArrowSchema().getFields().stream().map(Field::getName).toList();
    assertEquals(SystemColumns.TOMBSTONE, context.get(context.size() - 1));
    assertEquals(SystemColumns.SEQUENCE, context.get(context.size() - 2));
    assertEquals(28, context.size(), "26 columns, the write sequence and the tombstone sentinel");
    assertFalse(SchemaPresets.rollout(8).toArrowSchema().getFields().stream()
        .anyMatch(f -> f.getName().equals(SystemColumns.TOMBSTONE)));
  }

  @Test
  void presetsRoundTripThroughJsonAndKeepTheirName() {
    for (String name : SchemaPresets.NAMES) {
      SchemaSpec spec = SchemaPresets.byName(name, 384);
      SchemaSpec again = SchemaSpec.fromJson(spec.toJson());
      assertEquals(spec, again, name);
      assertEquals(name, again.preset().orElseThrow());
      assertEquals(spec.toJson(), again.toJson());
    }
  }

  private static void assertColumns(SchemaSpec spec, List<String> expected) {
    List<String> actual = new ArrayList<>();
    for (String column : spec.columnNames()) {
      actual.add(column + ":" + describe(spec.toArrowSchema().findField(column)));
    }
    assertEquals(expected.size(), spec.columns().size(), "column count");
    assertEquals(expected, actual);
  }

  static String describe(Field f) {
    String t = f.getType().toString();
    if (f.getChildren().isEmpty()) {
      return t;
    }
    StringBuilder sb = new StringBuilder(t).append('<');
    for (int i = 0; i < f.getChildren().size(); i++) {
      Field c = f.getChildren().get(i);
      sb.append(i == 0 ? "" : ", ").append(c.getName()).append(": ").append(describe(c));
    }
    return sb.append('>').toString();
  }
}
