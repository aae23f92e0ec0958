package io.lancecontext.core.internal.lance;

import io.lancecontext.core.schema.SchemaSpec;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.lance.Dataset;
import org.lance.index.Index;

/**
 * Which fragments of one base-table version the key index covers. Merges append fragments the index does
 * not cover until it is rebuilt; Lance scans those without the index. An index that does not say which
 * fragments it covers counts as covering none (a scan of every fragment is slower, never wrong).
 *
 * @param exists whether the table has the key index
 * @param fragments every fragment, in table order
 * @param coveredIds ids of the fragments the index covers
 * @param rows live rows in the whole table
 */
public record KeyIndexCoverage(boolean exists, List<LanceFragment> fragments, Set<Integer> coveredIds, long rows) {
  public KeyIndexCoverage {
    fragments = List.copyOf(fragments);
    coveredIds = Set.copyOf(coveredIds);
  }

  /** The name of the key index of tables of {@code spec}. */
  public static String indexName(SchemaSpec spec) {
    return spec.key() + "_idx";
  }

  /** Reads the coverage of {@code ds} (its index list and fragment list). */
  public static KeyIndexCoverage of(LanceDataset dataset, SchemaSpec spec) {
    return ofIndex(dataset, indexName(spec));
  }

  /** Reads which fragments of {@code ds} the index {@code name} covers (any index: key or vector). */
  public static KeyIndexCoverage ofIndex(LanceDataset dataset, String name) {
    Dataset ds = dataset.lance();
    Optional<Index> index = LanceErrors.call("list the indexes of " + ds.uri(),
        () -> ds.getIndexes().stream().filter(i -> i.name().equals(name)).findFirst());
    Set<Integer> ids = index.flatMap(Index::fragments).map(Set::copyOf).orElse(Set.of());
    List<LanceFragment> fragments = dataset.fragments();
    long rows = 0;
    for (LanceFragment f : fragments) {
      rows += f.rows();
    }
    return new KeyIndexCoverage(index.isPresent(), fragments, ids, rows);
  }

  /** Ids of the fragments the index covers, in table order. */
  public List<Integer> covered() {
    return fragments.stream().map(LanceFragment::id).filter(coveredIds::contains).toList();
  }

  /** The fragments the index does not cover (every fragment when there is no index), in table order. */
  public List<LanceFragment> uncovered() {
    return fragments.stream().filter(f -> !coveredIds.contains(f.id())).toList();
  }

  /** Live rows in the fragments the index does not cover. */
  public long uncoveredRows() {
    return uncovered().stream().mapToLong(LanceFragment::rows).sum();
  }
}
