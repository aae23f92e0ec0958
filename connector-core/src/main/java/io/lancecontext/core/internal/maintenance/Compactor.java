package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceCompaction;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.result.CompactionResult;
import io.lancecontext.core.schema.SchemaSpec;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Rewrites the base table's small fragments into fewer large ones ({@link LanceCompaction}, which says how
 * lance-core 7.0.0 is worked around): the fragments that hold zero-length blobs are left as they are and
 * named in the result ({@link CompactionResult#skippedFragments()}). Callers hold the
 * {@link MaintenanceLock}.
 */
final class Compactor {
  private Compactor() {}

  static CompactionResult compact(StoreConfig config, SchemaSpec spec, BufferAllocator allocator,
      MaintenanceLock lease) {
    long started = System.nanoTime();
    try (LanceDataset ds = StoreDatasets.open(config.uri(), config, allocator)) {
      LanceCompaction.Outcome o = LanceCompaction.compact(ds, spec, config, lease::ensureHeld);
      return new CompactionResult(true, o.fragmentsBefore(), o.fragmentsAfter(), o.version(),
          (System.nanoTime() - started) / 1_000_000, o.skipped(), o.reason());
    }
  }
}
