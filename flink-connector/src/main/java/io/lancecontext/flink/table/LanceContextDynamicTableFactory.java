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
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.logical.RowType;

/**
 * {@code 'connector' = 'lancecontext'}: a store as a Flink table. Options are core's, with the same keys
 * (docs/options.md), plus Flink's standard {@code lookup.*} options; an unknown key is rejected by Flink's
 * factory helper. The DDL's columns must be columns of the store (a subset, any order), with compatible types.
 */
public final class LanceContextDynamicTableFactory implements DynamicTableSourceFactory {
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
