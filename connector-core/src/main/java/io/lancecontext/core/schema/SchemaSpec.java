package io.lancecontext.core.schema;

import io.lancecontext.core.error.SchemaException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The declared schema of a context store: its columns, its string primary key and its capabilities.
 * Declared once when the store is created and persisted with the dataset (schema metadata), so that
 * every engine and process reads the same spec.
 *
 * <p>Every instance is valid: the rules of design §2 are checked on construction ({@link SchemaRules})
 * and a violation raises a {@link SchemaException} naming the column and the rule. Instances are
 * immutable and thread-safe.
 */
public final class SchemaSpec {
  /** The key column name every user-declared spec must use. */
  public static final String DEFAULT_KEY = "id";

  private final String key;
  private final List<ColumnSpec> columns;
  private final Set<Capability> capabilities;
  private final String preset;
  private final Map<String, ColumnSpec> byName;
  private volatile Schema arrowSchema;
  private volatile Schema userArrowSchema;
  private volatile String json;

  SchemaSpec(String key, List<ColumnSpec> columns, Set<Capability> capabilities, String preset) {
    this.key = key;
    this.columns = List.copyOf(columns);
    EnumSet<Capability> caps = EnumSet.noneOf(Capability.class);
    caps.addAll(capabilities);
    this.capabilities = Collections.unmodifiableSet(caps);
    this.preset = preset;
    SchemaRules.check(this);
    Map<String, ColumnSpec> m = new LinkedHashMap<>();
    for (ColumnSpec c : this.columns) {
      m.put(c.name(), c);
    }
    this.byName = Collections.unmodifiableMap(m);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Parses the JSON form (design §2). Unknown JSON keys are rejected. */
  public static SchemaSpec fromJson(String json) {
    return SchemaSpecJson.parse(json);
  }

  /**
   * Reads the spec persisted in a dataset's schema metadata.
   *
   * @return empty if the schema carries no lancecontext spec (not a lancecontext store)
   */
  public static Optional<SchemaSpec> fromArrowSchema(Schema schema) {
    Map<String, String> metadata = schema.getCustomMetadata();
    String stored = metadata == null ? null : metadata.get(ArrowSchemas.SPEC_METADATA);
    if (stored == null) {
      return Optional.empty();
    }
    String format = metadata.get(ArrowSchemas.FORMAT_METADATA);
    if (!ArrowSchemas.FORMAT_VERSION.equals(format)) {
      throw new SchemaException("the stored spec has format version " + format + "; this build reads version "
          + ArrowSchemas.FORMAT_VERSION);
    }
    return Optional.of(fromJson(stored));
  }

  /** The canonical JSON form; {@code fromJson(spec.toJson()).equals(spec)} always holds. */
  public String toJson() {
    String j = json;
    if (j == null) {
      j = SchemaSpecJson.write(this);
      json = j;
    }
    return j;
  }

  /**
   * The exact Arrow schema of the store's dataset: declared columns in order (primary-key metadata on
   * the key, blob metadata on blob columns, vectors as FixedSizeList&lt;float32&gt;(dim) with their
   * metric), then the system columns ({@code _lc_seq}, and {@code _lc_tombstone} with capability
   * tombstones), and the spec itself in the schema metadata.
   */
  public Schema toArrowSchema() {
    Schema s = arrowSchema;
    if (s == null) {
      s = ArrowSchemas.toArrow(this);
      arrowSchema = s;
    }
    return s;
  }

  /**
   * The Arrow schema of what a user writes and reads: the declared columns in order, as in
   * {@link #toArrowSchema()} (same types, nullability and field metadata), without the system columns
   * ({@code _lc_*}) and without the spec in the schema metadata. Batches in this schema are what a write
   * handle takes without conversion; a batch may also differ from it as docs/schema.md allows (column
   * order, string and binary widths, list kinds, timestamp units and zones, widening numbers).
   */
  public Schema toUserArrowSchema() {
    Schema s = userArrowSchema;
    if (s == null) {
      s = ArrowSchemas.toUserArrow(this);
      userArrowSchema = s;
    }
    return s;
  }

  public String key() {
    return key;
  }

  public List<ColumnSpec> columns() {
    return columns;
  }

  public List<String> columnNames() {
    return columns.stream().map(ColumnSpec::name).toList();
  }

  /** The column with this exact name, or null. */
  public ColumnSpec column(String name) {
    return byName.get(name);
  }

  public Set<Capability> capabilities() {
    return capabilities;
  }

  public boolean has(Capability capability) {
    return capabilities.contains(capability);
  }

  /** The preset this spec was built from ({@code context}, {@code rollout}, {@code datagen}), if any. */
  public Optional<String> preset() {
    return Optional.ofNullable(preset);
  }

  /** Columns stored with Lance's blob encoding. */
  public List<ColumnSpec> blobColumns() {
    return columns.stream().filter(ColumnSpec::blob).toList();
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof SchemaSpec other)) {
      return false;
    }
    return key.equals(other.key) && columns.equals(other.columns) && capabilities.equals(other.capabilities)
        && Objects.equals(preset, other.preset);
  }

  @Override
  public int hashCode() {
    return Objects.hash(key, columns, capabilities, preset);
  }

  @Override
  public String toString() {
    return "SchemaSpec" + toJson();
  }

  /** Builds a user-declared spec; the key column is {@value #DEFAULT_KEY}. */
  public static final class Builder {
    private final List<ColumnSpec> columns = new ArrayList<>();
    private final Set<Capability> capabilities = EnumSet.noneOf(Capability.class);
    private String key = DEFAULT_KEY;
    private String preset;

    private Builder() {}

    /** Adds a non-nullable string key column named {@value #DEFAULT_KEY}. */
    public Builder idColumn() {
      return column(ColumnSpec.string(DEFAULT_KEY).withNullable(false));
    }

    public Builder column(ColumnSpec column) {
      columns.add(Objects.requireNonNull(column, "column"));
      return this;
    }

    public Builder column(String name, ColumnType type) {
      return column(ColumnSpec.of(name, type));
    }

    public Builder columns(List<ColumnSpec> cols) {
      cols.forEach(this::column);
      return this;
    }

    public Builder capability(Capability capability) {
      capabilities.add(capability);
      return this;
    }

    public Builder capabilities(Set<Capability> caps) {
      capabilities.addAll(caps);
      return this;
    }

    /** Names the key column. User-declared specs must keep {@value #DEFAULT_KEY}; presets may not. */
    public Builder key(String keyColumn) {
      this.key = keyColumn;
      return this;
    }

    Builder preset(String presetName) {
      this.preset = presetName;
      return this;
    }

    /** Validates and builds the spec. */
    public SchemaSpec build() {
      return new SchemaSpec(key, columns, capabilities, preset);
    }
  }
}
