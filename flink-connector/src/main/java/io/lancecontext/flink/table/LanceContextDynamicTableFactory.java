package io.lancecontext.flink.table;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.flink.FlinkSchemas;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.api.ValidationException;
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
 * options; an unknown key is rejected by Flink's factory helper. The DDL's columns must be columns of the store (a subset, any order), with compatible types.
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
    helper.validateExcept(StoreOptions.STORAGE_PREFIX);
    Map<String, String> options = storeOptions(context.getCatalogTable().getOptions());
    RowType rowType = (RowType) context.getPhysicalRowDataType().getLogicalType();
    SchemaSpec spec;
    try (ContextStore store = ContextStore.open(options)) {
      spec = store.spec();
    }
    try {
      FlinkSchemas.checkDeclared(rowType, spec);
    } catch (RuntimeException e) {
      throw new ValidationException("table " + context.getObjectIdentifier().asSummaryString() + ": " + e.getMessage(), e);
    }
    return new LanceContextTableSource(options, helper.getOptions(), spec, rowType);
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validateExcept(StoreOptions.STORAGE_PREFIX);
    String table = context.getObjectIdentifier().asSummaryString();
    Map<String, String> options = storeOptions(context.getCatalogTable().getOptions());
    RowType rowType = (RowType) context.getPhysicalRowDataType().getLogicalType();
    List<String> primaryKey = context.getCatalogTable().getResolvedSchema().getPrimaryKey()
        .map(k -> k.getColumns()).orElse(List.of());
    try (ContextStore store = ContextStore.open(options)) {
      SchemaSpec spec = store.spec();
      FlinkSchemas.checkDeclared(rowType, spec);
      if (!primaryKey.isEmpty() && !primaryKey.equals(List.of(spec.key()))) {
        throw new ValidationException("table " + table + ": the primary key must be the store's key column ('"
            + spec.key() + "'), not " + primaryKey);
      }
      if (!rowType.getFieldNames().contains(spec.key())) {
        throw new ValidationException("table " + table + ": the store's key column '" + spec.key()
            + "' must be one of the table's columns");
      }
    } catch (RuntimeException e) {
      throw e instanceof ValidationException v ? v : new ValidationException("table " + table + ": " + e.getMessage(), e);
    }
    try {
      return new LanceContextTableSink(options, rowType, !primaryKey.isEmpty(),
          helper.getOptions().get(FlinkOptions.BUFFER_FLUSH_INTERVAL), helper.getOptions().get(FlinkOptions.DELIVERY_GUARANTEE));
    } catch (RuntimeException e) {
      throw new ValidationException("table " + table + ": " + e.getMessage(), e);
    }
  }

  /** The table's options that are store options (Flink's own and {@code connector} removed). */
  static Map<String, String> storeOptions(Map<String, String> tableOptions) {
    Map<String, String> out = new LinkedHashMap<>();
    tableOptions.forEach((k, v) -> {
      if (!FlinkOptions.isFlinkOnly(k)) {
        out.put(k, v);
      }
    });
    return out;
  }
}
