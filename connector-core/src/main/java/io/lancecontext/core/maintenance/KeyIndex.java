package io.lancecontext.core.maintenance;

import io.lancecontext.core.error.LanceErrors;
import io.lancecontext.core.options.KeyIndexType;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.List;
import java.util.Optional;
import org.lance.Dataset;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.ScalarIndexParams;

/** The scalar index on the key column (option {@code index.key}), used by point lookups and merges. */
public final class KeyIndex {
  private KeyIndex() {}

  public static String name(SchemaSpec spec) {
    return spec.key() + "_idx";
  }

  /**
   * Creates the index when the store wants one and it is missing, or rebuilds it ({@code rebuild}, after
   * a compaction) so that it covers every fragment.
   *
   * @return whether an index was built
   */
  public static boolean ensure(Dataset ds, SchemaSpec spec, StoreConfig config, boolean rebuild) {
    KeyIndexType type = config.get(StoreOptions.INDEX_KEY);
    if (type == KeyIndexType.NONE) {
      return false;
    }
    String name = name(spec);
    if (!rebuild && ds.listIndexes().contains(name)) {
      return false;
    }
    IndexType indexType = type == KeyIndexType.BTREE ? IndexType.BTREE : IndexType.ZONEMAP;
    LanceErrors.run("build the " + type.lanceName() + " index on '" + spec.key() + "'", () ->
        ds.createIndex(List.of(spec.key()), indexType, Optional.of(name),
            IndexParams.builder().setScalarIndexParams(ScalarIndexParams.create(type.lanceName())).build(), true));
    return true;
  }
}
