package io.lancecontext.core.schema;

import io.lancecontext.core.error.SchemaException;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/** The creation rules of design §2, each failing with a {@link SchemaException} naming the column. */
final class SchemaRules {
  private SchemaRules() {}

  /** Identifiers that need no quoting in Lance filters, Spark SQL or Flink SQL. */
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  static final int MAX_VECTOR_DIM = 65_536;

  static final String SUPERSEDES_COLUMN = "supersedes";
  static final String LIFECYCLE_STATUS_COLUMN = "lifecycle_status";
  static final String EXPIRES_AT_COLUMN = "expires_at";

  static void check(SchemaSpec spec) {
    if (spec.columns().isEmpty()) {
      throw new SchemaException("a schema spec needs at least one column");
    }
    checkColumns(spec.columns(), "", true);
    checkKey(spec);
    checkCapabilities(spec);
    if (spec.preset().isPresent() && !SchemaPresets.NAMES.contains(spec.preset().get())) {
      throw new SchemaException("unknown preset '" + spec.preset().get() + "'; presets are " + SchemaPresets.NAMES);
    }
  }

  private static void checkColumns(List<ColumnSpec> columns, String prefix, boolean topLevel) {
    Map<String, String> seen = new HashMap<>();
    for (ColumnSpec c : columns) {
      if (c == null) {
        throw new SchemaException(prefix.isEmpty() ? null : stripDot(prefix), "a column entry is null");
      }
      String path = prefix + c.name();
      if (c.name() == null || c.name().isEmpty()) {
        throw new SchemaException(prefix.isEmpty() ? "<unnamed>" : path + "<unnamed>", "every column needs a non-empty name");
      }
      if (!IDENTIFIER.matcher(c.name()).matches()) {
        throw new SchemaException(path, "names must match [A-Za-z_][A-Za-z0-9_]* (letters, digits, underscores)");
      }
      String previous = seen.put(c.name().toLowerCase(Locale.ROOT), c.name());
      if (previous != null) {
        throw new SchemaException(path, "duplicate column name (names are compared case-insensitively; clashes with '"
            + previous + "')");
      }
      if (topLevel) {
        String reserved = SystemColumns.reservation(c.name());
        if (reserved != null) {
          throw new SchemaException(path, "the name is reserved: it " + reserved);
        }
      }
      checkColumn(c, path, topLevel);
    }
  }

  private static void checkColumn(ColumnSpec c, String path, boolean topLevel) {
    ColumnType t = c.type();
    if (c.blob()) {
      if (!t.isBinary()) {
        throw new SchemaException(path, "blob: true is only allowed on binary or large_binary columns, not " + t);
      }
      if (!topLevel) {
        throw new SchemaException(path, "blob columns must be top-level columns");
      }
    }
    if (t == ColumnType.VECTOR) {
      if (!topLevel) {
        throw new SchemaException(path, "vector columns must be top-level columns");
      }
      if (c.dim() <= 0 || c.dim() > MAX_VECTOR_DIM) {
        throw new SchemaException(path, "a vector needs dim between 1 and " + MAX_VECTOR_DIM + ", got " + c.dim());
      }
      if (c.metric() == null) {
        throw new SchemaException(path, "a vector needs a metric (l2, cosine or dot)");
      }
    } else {
      if (c.dim() != 0) {
        throw new SchemaException(path, "dim is only allowed on vector columns, not " + t);
      }
      if (c.metric() != null) {
        throw new SchemaException(path, "metric is only allowed on vector columns, not " + t);
      }
    }
    if (t == ColumnType.STRUCT) {
      if (c.fields().isEmpty()) {
        throw new SchemaException(path, "a struct needs at least one field");
      }
      checkColumns(c.fields(), path + ".", false);
    } else if (!c.fields().isEmpty()) {
      throw new SchemaException(path, "fields are only allowed on struct columns, not " + t);
    }
    if (t == ColumnType.LIST) {
      if (c.item() == null) {
        throw new SchemaException(path, "a list needs an item type");
      }
      ColumnSpec item = c.item();
      if (item.name() != null && !ColumnSpec.LIST_ITEM_NAME.equals(item.name())) {
        throw new SchemaException(path, "a list item is unnamed (or named 'item'), got '" + item.name() + "'");
      }
      checkColumn(item.withName(ColumnSpec.LIST_ITEM_NAME), path + "[]", false);
    } else if (c.item() != null) {
      throw new SchemaException(path, "item is only allowed on list columns, not " + t);
    }
  }

  private static void checkKey(SchemaSpec spec) {
    String key = spec.key();
    if (key == null || key.isEmpty()) {
      throw new SchemaException("a schema spec needs a key column");
    }
    if (spec.preset().isEmpty() && !SchemaSpec.DEFAULT_KEY.equals(key)) {
      throw new SchemaException(key, "the key column of a user-declared spec must be named '" + SchemaSpec.DEFAULT_KEY + "'");
    }
    ColumnSpec k = spec.columns().stream().filter(c -> key.equals(c.name())).findFirst()
        .orElseThrow(() -> new SchemaException(key, "the key column is not declared among the columns"));
    if (k.type() != ColumnType.STRING) {
      throw new SchemaException(key, "the key column must be of type string (Arrow Utf8), not " + k.type());
    }
    if (k.nullable()) {
      throw new SchemaException(key, "the key column must be non-nullable (\"nullable\": false)");
    }
  }

  private static void checkCapabilities(SchemaSpec spec) {
    if (spec.has(Capability.SUPERSESSION)) {
      requireType(spec, SUPERSEDES_COLUMN, ColumnType.STRING, Capability.SUPERSESSION);
    }
    if (spec.has(Capability.LIFECYCLE)) {
      ColumnSpec status = spec.columns().stream().filter(c -> c.name().equals(LIFECYCLE_STATUS_COLUMN)).findFirst().orElse(null);
      ColumnSpec expires = spec.columns().stream().filter(c -> c.name().equals(EXPIRES_AT_COLUMN)).findFirst().orElse(null);
      if (status == null && expires == null) {
        throw new SchemaException(LIFECYCLE_STATUS_COLUMN, "capability lifecycle needs a string column '"
            + LIFECYCLE_STATUS_COLUMN + "' and/or a timestamp column '" + EXPIRES_AT_COLUMN + "'");
      }
      if (status != null) {
        requireType(spec, LIFECYCLE_STATUS_COLUMN, ColumnType.STRING, Capability.LIFECYCLE);
      }
      if (expires != null) {
        requireType(spec, EXPIRES_AT_COLUMN, ColumnType.TIMESTAMP, Capability.LIFECYCLE);
      }
    }
    if (spec.has(Capability.TOMBSTONES)) {
      for (ColumnSpec c : spec.columns()) {
        if (!c.name().equals(spec.key()) && !c.nullable()) {
          throw new SchemaException(c.name(), "capability tombstones needs every non-key column to be nullable "
              + "(a tombstone row carries only the key)");
        }
      }
    }
  }

  private static void requireType(SchemaSpec spec, String name, ColumnType type, Capability cap) {
    ColumnSpec c = spec.columns().stream().filter(x -> x.name().equals(name)).findFirst()
        .orElseThrow(() -> new SchemaException(name, "capability " + cap + " needs a " + type + " column '" + name + "'"));
    if (c.type() != type) {
      throw new SchemaException(name, "capability " + cap + " needs this column to be " + type + ", not " + c.type());
    }
  }

  private static String stripDot(String prefix) {
    return prefix.endsWith(".") ? prefix.substring(0, prefix.length() - 1) : prefix;
  }
}
