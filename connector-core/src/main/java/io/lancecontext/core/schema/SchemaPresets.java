package io.lancecontext.core.schema;

import static io.lancecontext.core.schema.ColumnSpec.item;
import static io.lancecontext.core.schema.ColumnSpec.list;
import static io.lancecontext.core.schema.ColumnSpec.of;
import static io.lancecontext.core.schema.ColumnSpec.string;
import static io.lancecontext.core.schema.ColumnSpec.struct;
import static io.lancecontext.core.schema.ColumnSpec.structItem;
import static io.lancecontext.core.schema.ColumnType.BOOL;
import static io.lancecontext.core.schema.ColumnType.FLOAT32;
import static io.lancecontext.core.schema.ColumnType.FLOAT64;
import static io.lancecontext.core.schema.ColumnType.INT32;
import static io.lancecontext.core.schema.ColumnType.INT64;
import static io.lancecontext.core.schema.ColumnType.LARGE_BINARY;
import static io.lancecontext.core.schema.ColumnType.LARGE_STRING;
import static io.lancecontext.core.schema.ColumnType.STRING;
import static io.lancecontext.core.schema.ColumnType.TIMESTAMP;

import io.lancecontext.core.error.SchemaException;
import java.util.List;

/**
 * The built-in schemas (design §2): {@code context} (26 columns), {@code rollout} (36) and
 * {@code datagen} (33). Thin specs over the same store layer; the vector dimension is a parameter
 * (option {@code schema.embedding-dim}, default {@value #DEFAULT_EMBEDDING_DIM}).
 */
public final class SchemaPresets {
  private SchemaPresets() {}

  public static final String CONTEXT = "context";
  public static final String ROLLOUT = "rollout";
  public static final String DATAGEN = "datagen";
  public static final List<String> NAMES = List.of(CONTEXT, ROLLOUT, DATAGEN);
  public static final int DEFAULT_EMBEDDING_DIM = 1536;
  static final String EMBEDDING_COLUMN = "embedding";

  /** The preset named {@code name} with embeddings of {@code embeddingDim} dimensions. */
  public static SchemaSpec byName(String name, int embeddingDim) {
    return switch (name) {
      case CONTEXT -> context(embeddingDim);
      case ROLLOUT -> rollout(embeddingDim);
      case DATAGEN -> datagen(embeddingDim);
      default -> throw new SchemaException("unknown preset '" + name + "'; presets are " + NAMES);
    };
  }

  public static boolean isPreset(String name) {
    return NAMES.contains(name);
  }

  /** Agent context records: 26 columns; tombstones, supersession and lifecycle on. */
  public static SchemaSpec context(int embeddingDim) {
    return SchemaSpec.builder().preset(CONTEXT)
        .idColumn()
        .column(string("run_id"))
        .column(string("bot_id"))
        .column(string("session_id"))
        .column(string("parent_id"))
        .column(string("external_id"))
        .column(of("created_at", TIMESTAMP))
        .column(of("updated_at", TIMESTAMP))
        .column(string("role"))
        .column(string("content_type"))
        .column(of("text_payload", LARGE_STRING))
        .column(ColumnSpec.blob("binary_payload", LARGE_BINARY))
        .column(ColumnSpec.vector(EMBEDDING_COLUMN, embeddingDim, VectorMetric.COSINE))
        .column(string("embedding_model"))
        .column(struct("state_metadata",
            of("step", INT32), string("active_plan_id"), of("tokens_used", INT32), string("custom")))
        .column(list("relationships", structItem(string("kind"), string("target_id"))))
        .column(list("tags", item(STRING)))
        .column(string("source"))
        .column(string("lifecycle_status"))
        .column(of("expires_at", TIMESTAMP))
        .column(string("supersedes"))
        .column(of("importance", FLOAT32))
        .column(of("token_count", INT32))
        .column(of("metadata_json", LARGE_STRING))
        .column(string("tenant"))
        .column(string("trace_id"))
        .capability(Capability.TOMBSTONES)
        .capability(Capability.SUPERSESSION)
        .capability(Capability.LIFECYCLE)
        .build();
  }

  /** RL rollout steps: 36 columns. */
  public static SchemaSpec rollout(int embeddingDim) {
    return SchemaSpec.builder().preset(ROLLOUT)
        .idColumn()
        .column(string("rollout_id"))
        .column(of("sequence_order", INT32))
        .column(string("group_id"))
        .column(string("prompt_id"))
        .column(string("dataset"))
        .column(string("environment"))
        .column(string("task_id"))
        .column(of("policy_version", INT64))
        .column(string("model_name"))
        .column(string("worker_id"))
        .column(string("actor"))
        .column(string("content_type"))
        .column(of("text_payload", LARGE_STRING))
        .column(ColumnSpec.blob("binary_payload", LARGE_BINARY))
        .column(list("prompt_tokens", item(INT32)))
        .column(list("completion_tokens", item(INT32)))
        .column(list("logprobs", item(FLOAT32)))
        .column(of("reward", FLOAT64))
        .column(of("advantage", FLOAT64))
        .column(of("value", FLOAT64))
        .column(of("done", BOOL))
        .column(of("truncated", BOOL))
        .column(string("finish_reason"))
        .column(of("num_tokens", INT32))
        .column(of("latency_ms", FLOAT64))
        .column(of("temperature", FLOAT32))
        .column(of("top_p", FLOAT32))
        .column(of("seed", INT64))
        .column(of("created_at", TIMESTAMP))
        .column(of("completed_at", TIMESTAMP))
        .column(list("tool_calls", structItem(string("name"), of("arguments", LARGE_STRING))))
        .column(of("metadata_json", LARGE_STRING))
        .column(list("tags", item(STRING)))
        .column(ColumnSpec.vector(EMBEDDING_COLUMN, embeddingDim, VectorMetric.COSINE))
        .column(string("split"))
        .build();
  }

  /** Data-generation pipeline events: 33 columns, keyed by {@code event_id}. */
  public static SchemaSpec datagen(int embeddingDim) {
    return SchemaSpec.builder().preset(DATAGEN)
        .key("event_id")
        .column(string("event_id").withNullable(false))
        .column(string("run_id"))
        .column(string("pipeline"))
        .column(string("stage"))
        .column(of("step", INT64))
        .column(string("event_type"))
        .column(string("status"))
        .column(of("created_at", TIMESTAMP))
        .column(of("started_at", TIMESTAMP))
        .column(of("finished_at", TIMESTAMP))
        .column(of("duration_ms", FLOAT64))
        .column(string("worker_id"))
        .column(string("host"))
        .column(string("generator_model"))
        .column(string("prompt_template"))
        .column(of("prompt_text", LARGE_STRING))
        .column(of("output_text", LARGE_STRING))
        .column(ColumnSpec.blob("output_binary", LARGE_BINARY))
        .column(list("input_ids", item(STRING)))
        .column(list("output_ids", item(STRING)))
        .column(string("parent_event_id"))
        .column(of("quality_score", FLOAT64))
        .column(of("filter_passed", BOOL))
        .column(string("filter_reason"))
        .column(of("num_tokens_in", INT32))
        .column(of("num_tokens_out", INT32))
        .column(of("cost_usd", FLOAT64))
        .column(string("error_message"))
        .column(of("retry_count", INT32))
        .column(of("seed", INT64))
        .column(list("tags", item(STRING)))
        .column(of("metadata_json", LARGE_STRING))
        .column(ColumnSpec.vector(EMBEDDING_COLUMN, embeddingDim, VectorMetric.COSINE))
        .build();
  }
}
