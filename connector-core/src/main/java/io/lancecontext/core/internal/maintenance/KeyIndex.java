package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceErrors;
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

  /** Rows in fragments the key index does not cover, above which merges rebuild it. */
  static final long UNINDEXED_ROWS_MIN = 20_000;

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

  /**
   * Rebuilds the index when too many rows sit in fragments it does not cover (each merge appends such
   * fragments; Lance scans them without the index, so lookups slow down as they accumulate): more than
   * {@value #UNINDEXED_ROWS_MIN} rows and more than a tenth of the table. A rebuild, not
   * {@code optimizeIndices}, which loses rows after a deferred-remap compaction in lance-core 7.0.0.
   *
   * @return whether the index was rebuilt
   */
  public static boolean refreshIfStale(Dataset ds, SchemaSpec spec, StoreConfig config) {
    if (config.get(StoreOptions.INDEX_KEY) == KeyIndexType.NONE) {
      return false;
    }
    String name = name(spec);
    Optional<org.lance.index.Index> index = ds.getIndexes().stream().filter(i -> i.name().equals(name)).findFirst();
    if (index.isEmpty()) {
      return ensure(ds, spec, config, false);
    }
    java.util.Set<Integer> covered = new java.util.HashSet<>(index.get().fragments().orElse(List.of()));
    long unindexed = 0;
    long total = 0;
    for (org.lance.Fragment f : ds.getFragments()) {
      long rows = f.metadata().getNumRows();
      total += rows;
      if (!covered.contains(f.getId())) {
        unindexed += rows;
      }
    }
    if (unindexed > UNINDEXED_ROWS_MIN && unindexed * 10 > total) {
      return ensure(ds, spec, config, true);
    }
    return false;
  }
}
