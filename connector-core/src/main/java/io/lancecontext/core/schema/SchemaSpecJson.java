package io.lancecontext.core.schema;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancecontext.core.error.SchemaException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/** The JSON form of a {@link SchemaSpec} (design §2): strict parsing, canonical writing. */
final class SchemaSpecJson {
  private SchemaSpecJson() {}

  private static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  private static final Set<String> SPEC_KEYS = Set.of("key", "columns", "capabilities", "preset");
  private static final Set<String> COLUMN_KEYS = Set.of("name", "type", "nullable", "blob", "dim", "metric", "fields", "item");

  static SchemaSpec parse(String json) {
    if (json == null || json.isBlank()) {
      throw new SchemaException("the schema spec JSON is empty");
    }
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new SchemaException("malformed schema spec JSON: " + e.getOriginalMessage());
    }
    if (root == null || !root.isObject()) {
      throw new SchemaException("a schema spec must be a JSON object");
    }
    rejectUnknownKeys(root, SPEC_KEYS, null, "schema spec");
    String key = root.has("key") ? text(root.get("key"), null, "key") : SchemaSpec.DEFAULT_KEY;
    JsonNode cols = root.get("columns");
    if (cols == null || !cols.isArray()) {
      throw new SchemaException("a schema spec needs a \"columns\" array");
    }
    List<ColumnSpec> columns = new ArrayList<>();
    for (JsonNode c : cols) {
      columns.add(column(c, key, "", false));
    }
    Set<Capability> caps = EnumSet.noneOf(Capability.class);
    JsonNode capsNode = root.get("capabilities");
    if (capsNode != null) {
      if (!capsNode.isArray()) {
        throw new SchemaException("\"capabilities\" must be an array of strings");
      }
      for (JsonNode c : capsNode) {
        String name = text(c, null, "capabilities[]");
        caps.add(Capability.fromJsonName(name).orElseThrow(() -> new SchemaException("unknown capability '" + name
            + "'; known capabilities are tombstones, supersession, lifecycle, unique-ids")));
      }
    }
    String preset = root.has("preset") ? text(root.get("preset"), null, "preset") : null;
    SchemaSpec.Builder b = SchemaSpec.builder().key(key).columns(columns).capabilities(caps);
    if (preset != null) {
      b.preset(preset);
    }
    SchemaSpec spec = b.build();
    if (preset != null) {
      ColumnSpec embedding = spec.column(SchemaPresets.EMBEDDING_COLUMN);
      int dim = embedding == null ? SchemaPresets.DEFAULT_EMBEDDING_DIM : embedding.dim();
      SchemaSpec expected = SchemaPresets.byName(preset, dim);
      if (!expected.equals(spec)) {
        throw new SchemaException("the spec names preset '" + preset + "' but its columns or capabilities differ from it; "
            + "drop \"preset\" to declare a custom schema");
      }
    }
    return spec;
  }

  private static ColumnSpec column(JsonNode node, String key, String prefix, boolean item) {
    if (node == null || !node.isObject()) {
      throw new SchemaException(prefix.isEmpty() ? null : prefix, "each column must be a JSON object");
    }
    String name;
    if (item) {
      name = ColumnSpec.LIST_ITEM_NAME;
      if (node.has("name")) {
        throw new SchemaException(prefix, "a list item has no name");
      }
    } else {
      if (!node.has("name")) {
        throw new SchemaException(prefix.isEmpty() ? "<unnamed>" : prefix + ".<unnamed>", "every column needs a \"name\"");
      }
      name = text(node.get("name"), prefix.isEmpty() ? null : prefix, "name");
    }
    String path = item ? prefix : (prefix.isEmpty() ? name : prefix + "." + name);
    rejectUnknownKeys(node, COLUMN_KEYS, path, "column");
    String typeName = node.has("type") ? text(node.get("type"), path, "type") : null;
    if (typeName == null) {
      throw new SchemaException(path, "every column needs a \"type\"");
    }
    ColumnType type = ColumnType.fromJsonName(typeName).orElseThrow(() -> new SchemaException(path,
        "unsupported type '" + typeName + "'; supported types are " + ColumnType.supportedNames()));
    boolean isKey = !item && prefix.isEmpty() && name.equals(key);
    boolean nullable = node.has("nullable") ? bool(node.get("nullable"), path, "nullable") : !isKey;
    boolean blob = node.has("blob") && bool(node.get("blob"), path, "blob");
    int dim = 0;
    if (node.has("dim")) {
      JsonNode d = node.get("dim");
      if (!d.isIntegralNumber() || !d.canConvertToInt()) {
        throw new SchemaException(path, "\"dim\" must be an integer");
      }
      dim = d.intValue();
    }
    VectorMetric metric = null;
    if (node.has("metric")) {
      String m = text(node.get("metric"), path, "metric");
      metric = VectorMetric.fromJsonName(m).orElseThrow(() -> new SchemaException(path,
          "unsupported metric '" + m + "'; metrics are l2, cosine, dot"));
    }
    List<ColumnSpec> fields = new ArrayList<>();
    if (node.has("fields")) {
      JsonNode f = node.get("fields");
      if (!f.isArray()) {
        throw new SchemaException(path, "\"fields\" must be an array");
      }
      for (JsonNode fn : f) {
        fields.add(column(fn, key, path, false));
      }
    }
    ColumnSpec itemSpec = node.has("item") ? column(node.get("item"), key, path + "[]", true) : null;
    return new ColumnSpec(name, type, nullable, blob, dim, metric, fields, itemSpec);
  }

  private static void rejectUnknownKeys(JsonNode node, Set<String> allowed, String column, String what) {
    Iterator<String> names = node.fieldNames();
    while (names.hasNext()) {
      String n = names.next();
      if (!allowed.contains(n)) {
        throw new SchemaException(column, "unknown key \"" + n + "\" in " + what + "; allowed keys are "
            + allowed.stream().sorted().toList());
      }
    }
  }

  private static String text(JsonNode n, String column, String what) {
    if (n == null || !n.isTextual()) {
      throw new SchemaException(column, "\"" + what + "\" must be a string");
    }
    return n.textValue();
  }

  private static boolean bool(JsonNode n, String column, String what) {
    if (!n.isBoolean()) {
      throw new SchemaException(column, "\"" + what + "\" must be true or false");
    }
    return n.booleanValue();
  }

  static String write(SchemaSpec spec) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("key", spec.key());
    spec.preset().ifPresent(p -> root.put("preset", p));
    ArrayNode cols = root.putArray("columns");
    for (ColumnSpec c : spec.columns()) {
      cols.add(columnNode(c, false));
    }
    if (!spec.capabilities().isEmpty()) {
      ArrayNode caps = root.putArray("capabilities");
      spec.capabilities().forEach(c -> caps.add(c.jsonName()));
    }
    try {
      return MAPPER.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static ObjectNode columnNode(ColumnSpec c, boolean item) {
    ObjectNode n = MAPPER.createObjectNode();
    if (!item) {
      n.put("name", c.name());
    }
    n.put("type", c.type().jsonName());
    n.put("nullable", c.nullable());
    if (c.blob()) {
      n.put("blob", true);
    }
    if (c.type() == ColumnType.VECTOR) {
      n.put("dim", c.dim());
      n.put("metric", c.metric().jsonName());
    }
    if (c.type() == ColumnType.STRUCT) {
      ArrayNode fields = n.putArray("fields");
      c.fields().forEach(f -> fields.add(columnNode(f, false)));
    }
    if (c.type() == ColumnType.LIST) {
      n.set("item", columnNode(c.item(), true));
    }
    return n;
  }
}
