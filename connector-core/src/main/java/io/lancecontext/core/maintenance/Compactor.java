package io.lancecontext.core.maintenance;

import io.lancecontext.core.error.LanceErrors;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.store.StoreDatasets;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.compaction.CompactionOptions;

/**
 * Rewrites the base table's small fragments into fewer large ones. Always with deferred index remap:
 * lance-core 7.0.0's default remap aborts the JVM on a table with a MemWAL index. The key index is
 * then rebuilt so that it covers the new fragments ({@code optimizeIndices} after a deferred remap
 * silently loses rows in 7.0.0), after which nothing needs the fragment-reuse index the deferred
 * remap left: it is dropped, because it references the pre-compaction version, and once garbage
 * collection removed that version every later compaction would fail. Callers hold the
 * {@link MaintenanceLock}.
 */
final class Compactor {
  private Compactor() {}

  static final String FRAG_REUSE_INDEX = "__lance_frag_reuse";

  /** The only compaction options lancecontext ever passes to lance-core. */
  static CompactionOptions options(StoreConfig config) {
    return CompactionOptions.builder().withDeferIndexRemap(true)
        .withTargetRowsPerFragment(config.get(StoreOptions.COMPACTION_TARGET_ROWS)).build();
  }

  static CompactionResult compact(StoreConfig config, SchemaSpec spec, BufferAllocator allocator) {
    long started = System.nanoTime();
    try (Dataset ds = StoreDatasets.open(config.uri(), config, allocator)) {
      int before = ds.getFragments().size();
      long versionBefore = ds.version();
      CompactionOptions options = options(config);
      LanceErrors.run("compact the base table", () -> ds.compact(options));
      ds.checkoutLatest();
      if (ds.version() != versionBefore) {
        // fragments were rewritten (possibly as many as before, e.g. to materialize deletions): the key
        // index must cover the new ones, or lookups through it miss rows and NOT IN filters return
        // rows they exclude
        KeyIndex.ensure(ds, spec, config, true);
        ds.checkoutLatest();
      }
      if (ds.listIndexes().contains(FRAG_REUSE_INDEX)) {
        LanceErrors.run("drop the fragment-reuse index", () -> ds.dropIndex(FRAG_REUSE_INDEX));
        ds.checkoutLatest();
      }
      return new CompactionResult(true, before, ds.getFragments().size(), ds.version(),
          (System.nanoTime() - started) / 1_000_000);
    }
  }
}
