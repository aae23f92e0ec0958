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
 * and each split read through core (batches, rows, seconds); first three count-only reads (no columns) split by split. Usage: {@code ScanProfile <store> [maxSplits]}.
 */
public final class ScanProfile {
  private ScanProfile() {}

  public static void main(String[] args) {
    int maxSplits = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    try (ContextStore store = ContextStore.open(Map.of("path", args[0]))) {
      System.out.println(store.stats());
      long t = System.nanoTime();
      for (int round = 1; round <= 3; round++) {
        long c = System.nanoTime();
        ReadPlan counting = store.planRead(ScanSpec.all().withColumns(java.util.List.of()), maxSplits);
        double planned = (System.nanoTime() - c) / 1e9;
        StringBuilder each = new StringBuilder();
        long counted = 0;
        for (ReadSplit split : counting.splits()) {
          long s = System.nanoTime();
          try (StoreReader reader = store.read(split)) {
            while (reader.next()) {
              counted += reader.batch().getRowCount();
            }
          }
          each.append(String.format(Locale.ROOT, " %s %.3f", split.part(), (System.nanoTime() - s) / 1e9));
        }
        System.out.printf(Locale.ROOT, "count-only read %d: %d rows, plan %.3f s, splits:%s; total %.3f s%n", round, counted,
            planned, each, (System.nanoTime() - c) / 1e9);
      }
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
