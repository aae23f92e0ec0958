package io.lancecontext.flink.table;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.StoreNotFoundException;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.ColumnOptions;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.flink.FlinkSchemas;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.source.lookup.LookupOptions;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import java.util.List;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.logical.RowType;

/**
 * {@code 'connector' = 'lancecontext'}: a store as a Flink table (source, lookup and sink). Options are
 * core's, with the same keys (docs/options.md), plus Flink's standard {@code lookup.*} and {@code sink.*}
 * options; an unknown key is rejected by Flink's factory helper. The DDL's columns must be columns of the store
 * (a subset, any order), with compatible types. A table on a path with no store creates it when the table is
 * first used (planned as a source or a sink): with option {@code schema} (a preset or a JSON spec) when given,
 * otherwise from the DDL itself ({@link FlinkSchemas#toSpec}: {@code PRIMARY KEY (id) NOT ENFORCED},
 * {@code vector.<col>.dim}/{@code .metric}, {@code blob.<col>}).
 */
public final class LanceContextDynamicTableFactory implements DynamicTableSourceFactory, DynamicTableSinkFactory {
  public static final String IDENTIFIER = "lancecontext";

  @Override
  public String factoryIdentifier() {
    return IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return FlinkOptions.required();
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    return FlinkOptions.optional();
  }

  @Override
  public DynamicTableSource createDynamicTableSource(Context context) {
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    Resolved store = resolve(context, helper);
    if (helper.getOptions().get(LookupOptions.CACHE_TYPE) == LookupOptions.LookupCacheType.FULL) {
      // refused for every query of the table, not only lookup joins: a scan would accept it silently
      throw new ValidationException("option 'lookup.cache' = 'FULL' is not supported by the lancecontext table on "
          + store.options().get("path") + " (a full cache would copy the whole store into every lookup subtask and "
          + "reload it on a timer): supported values are 'NONE' (the default: every probe looks its key up in the "
          + "store) and 'PARTIAL' (lookup.partial-cache.*)");
    }
    checkScanOptions(helper.getOptions(), store.options().get("path"));
    return new LanceContextTableSource(store.options(), helper.getOptions(), store.spec(), store.rowType(),
        !store.primaryKey().isEmpty());
  }

  /** The scan options' values, each error naming its option. */
  private static void checkScanOptions(org.apache.flink.configuration.ReadableConfig options, String path) {
    boolean continuous = options.get(FlinkOptions.SCAN_MODE) == FlinkOptions.ScanMode.CONTINUOUS;
    java.time.Duration interval = options.get(FlinkOptions.SCAN_DISCOVERY_INTERVAL);
    if (interval.isNegative() || interval.isZero()) {
      throw new ValidationException("option 'scan.discovery-interval' of the lancecontext table on " + path
          + " must be positive, not " + interval);
    }
    if (options.getOptional(FlinkOptions.SCAN_SINCE).isPresent()) {
      if (!continuous) {
        throw new ValidationException("option 'scan.since' of the lancecontext table on " + path + " is the start of "
            + "a continuous scan: set 'scan.mode' = 'continuous' too");
      }
      if (options.getOptional(FlinkOptions.SCAN_SNAPSHOT).isPresent()) {
        throw new ValidationException("options 'scan.since' and 'scan.snapshot' of the lancecontext table on " + path
            + " exclude each other: a continuous scan starts after a snapshot (scan.since) or at one, read whole "
            + "first (scan.snapshot)");
      }
    }
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    String table = context.getObjectIdentifier().asSummaryString();
    Resolved store = resolve(context, helper);
    if (!store.rowType().getFieldNames().contains(store.spec().key())) {
      throw new ValidationException("table " + table + ": the store's key column '" + store.spec().key()
          + "' must be one of the table's columns");
    }
    try {
      return new LanceContextTableSink(store.options(), store.rowType(), !store.primaryKey().isEmpty(),
          helper.getOptions().get(FlinkOptions.BUFFER_FLUSH_INTERVAL), helper.getOptions().get(FlinkOptions.DELIVERY_GUARANTEE),
          helper.getOptions().getOptional(FactoryUtil.SINK_PARALLELISM).orElse(null));
    } catch (RuntimeException e) {
      throw new ValidationException("table " + table + ": " + e.getMessage(), e);
    }
  }

  /** A table's store: its options (store options only), its spec, and the DDL's columns and primary key. */
  private record Resolved(Map<String, String> options, SchemaSpec spec, RowType rowType, List<String> primaryKey) {
    /** Never the options: they may hold storage credentials. */
    @Override
    public String toString() {
      return "Resolved[" + options.get("path") + ", key " + primaryKey + "]";
    }
  }

  /**
   * Validates the table's options and finds its store, creating it when none exists at {@code path}: with
   * the spec of option {@code schema} when given (a preset or JSON), otherwise with the spec the DDL declares
   * ({@link FlinkSchemas#toSpec}). The DDL's columns must then be columns of the store, its primary key the
   * store's key, and its per-column options ({@code vector.*}, {@code blob.*}) must agree with the spec.
   */
  private static Resolved resolve(Context context, FactoryUtil.TableFactoryHelper helper) {
    helper.validateExcept(StoreOptions.STORAGE_PREFIX, ColumnOptions.VECTOR_PREFIX, ColumnOptions.BLOB_PREFIX);
    String table = context.getObjectIdentifier().asSummaryString();
    Map<String, String> tableOptions = context.getCatalogTable().getOptions();
    Map<String, String> options = storeOptions(tableOptions);
    RowType rowType = (RowType) context.getPhysicalRowDataType().getLogicalType();
    List<String> primaryKey = context.getCatalogTable().getResolvedSchema().getPrimaryKey()
        .map(k -> k.getColumns()).orElse(List.of());
    try {
      Map<String, String> create = null;
      SchemaSpec spec = existingSpec(options);
      if (spec == null) {
        spec = options.containsKey(StoreOptions.SCHEMA.key())
            ? StoreConfig.of(options).requestedSpec().orElseThrow()
            : FlinkSchemas.toSpec(rowType, primaryKey, tableOptions);
        create = new LinkedHashMap<>(options);
        create.put(StoreOptions.SCHEMA.key(), spec.toJson());
      }
      FlinkSchemas.checkDeclared(rowType, spec);
      FlinkSchemas.checkColumnOptions(rowType, spec, tableOptions);
      if (!primaryKey.isEmpty() && !primaryKey.equals(List.of(spec.key()))) {
        throw new ValidationException("table " + table + ": the primary key must be the store's key column ('"
            + spec.key() + "'), not " + primaryKey);
      }
      if (create != null) {
        try (ContextStore store = ContextStore.open(create)) {
          spec = store.spec();
        }
      }
      return new Resolved(options, spec, rowType, primaryKey);
    } catch (RuntimeException e) {
      throw e instanceof ValidationException v ? v : new ValidationException("table " + table + ": " + e.getMessage(), e);
    }
  }

  /**
   * The spec of the store at option {@code path}, or null when there is none (then nothing is created here:
   * the table is checked against the spec it would create first). With option {@code schema} given, opening
   * an existing store also checks that spec against the stored one.
   */
  private static SchemaSpec existingSpec(Map<String, String> options) {
    Map<String, String> probe = new LinkedHashMap<>(options);
    probe.remove(StoreOptions.SCHEMA.key());
    try (ContextStore store = ContextStore.open(probe)) {
      if (!options.containsKey(StoreOptions.SCHEMA.key())) {
        return store.spec();
      }
    } catch (StoreNotFoundException e) {
      return null;
    }
    try (ContextStore store = ContextStore.open(options)) {
      return store.spec();
    }
  }

  /** The table's options that are store options (Flink's own, the per-column ones and {@code connector} removed). */
  static Map<String, String> storeOptions(Map<String, String> tableOptions) {
    Map<String, String> out = new LinkedHashMap<>();
    tableOptions.forEach((k, v) -> {
      if (!FlinkOptions.isFlinkOnly(k) && !FlinkSchemas.isColumnOption(k)) {
        out.put(k, v);
      }
    });
    return out;
  }
}
