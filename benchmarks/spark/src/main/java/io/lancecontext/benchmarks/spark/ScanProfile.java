package io.lancecontext.benchmarks.spark;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import java.util.Locale;
import java.util.Map;

/**
 * Where a lancecontext full scan spends its time without Spark: the store's tiers, the read plan's splits,
 * and each split read through core (batches, rows, seconds). Usage: {@code ScanProfile <store> [maxSplits]}.
 */
public final class ScanProfile {
  private ScanProfile() {}

  public static void main(String[] args) {
    int maxSplits = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    try (ContextStore store = ContextStore.open(Map.of("path", args[0]))) {
      System.out.println(store.stats());
      long t = System.nanoTime();
      ReadPlan plan = store.planRead(ScanSpec.all(), maxSplits);
      System.out.printf(Locale.ROOT, "plan: %d splits in %.3f s%n", plan.splits().size(), (System.nanoTime() - t) / 1e9);
      for (int i = 0; i < plan.splits().size(); i++) {
        ReadSplit split = plan.splits().get(i);
        long s = System.nanoTime();
        long rows = 0;
        int batches = 0;
        try (StoreReader reader = store.read(split)) {
          while (reader.next()) {
            rows += reader.batch().getRowCount();
            batches++;
          }
        }
        System.out.printf(Locale.ROOT, "split %d %s fragments=%s shards=%s: %d batches, %d rows, %.3f s (estimate %s)%n", i,
            split.part(), split.fragments(), split.shards(), batches, rows, (System.nanoTime() - s) / 1e9, plan.estimate(i));
      }
    }
  }
}
