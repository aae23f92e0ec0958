package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreReader;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.StoreStats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Split reads: a store with merged rows in several fragments and a fresh tier spread over every bucket
 * (unmerged generations and a WAL tail), planned into 1 fresh split (the old behaviour: the whole fresh tier
 * in one split, built as such from the same plan's snapshot) and into up to 8 splits per bucket (one fresh split
 * per bucket, one base split per fragment here), each split
 * read in this JVM one after the other and timed. What an engine running the splits in parallel waits for
 * is the slowest split, so the ratio printed is the one-split fresh read time over the slowest of the N
 * fresh splits; base splits are timed too (the first of a plan computes the fresh key set, the others
 * reuse it). Every read is checked: the splits together return each key once.
 *
 * <p>Usage: {@code SplitReadBenchmark [baseRows=200000] [freshRows=40000] [shards=8] [rounds=3]}. Last line:
 * {@code RESULT split-read fresh_ratio=.. base_first_ms=.. base_rest_ms=..}.
 */
public final class SplitReadBenchmark {
  private SplitReadBenchmark() {}

  public static void main(String[] args) throws Exception {
    int baseRows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int freshRows = args.length > 1 ? Integer.parseInt(args[1]) : 40_000;
    int shards = args.length > 2 ? Integer.parseInt(args[2]) : 8;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
    Path dir = Bench.scratch("split-read");
    Map<String, String> options = Map.of("path", dir.toString(), "schema", "context", "schema.embedding-dim", "8",
        "shards", String.valueOf(shards), "merge.trigger.generations", "1000000", "merge.trigger.interval", "1d");
    Bench.log("SplitReadBenchmark: %d base rows, %d fresh rows, %d shards (buckets), %d rounds", baseRows, freshRows,
        shards, rounds);
    Random random = new Random(7);
    try (ContextStore store = ContextStore.open(options)) {
      long t = System.nanoTime();
      int merges = 4;
      for (int m = 0; m < merges; m++) {
        for (int start = m * baseRows / merges; start < (m + 1) * baseRows / merges; start += 5_000) {
          store.add(rows(random, "b", start, Math.min(5_000, (m + 1) * baseRows / merges - start)));
        }
        store.seal();
        store.merge();
      }
      // the fresh tier: updates of base keys and new keys, half in generations, half in the WAL tail
      for (int start = 0; start < freshRows; start += 2_000) {
        String prefix = start % 4_000 == 0 ? "b" : "f";
        store.add(rows(random, prefix, start, Math.min(2_000, freshRows - start)));
        if (start == freshRows / 2 / 2_000 * 2_000) {
          store.seal();
        }
      }
      StoreStats stats = store.stats();
      Bench.log("filled in %.1f s: base %d rows in %d fragments, fresh %d keys, %d unmerged generations",
          (System.nanoTime() - t) / 1e9, stats.baseRows(), stats.fragments(), stats.freshRows(),
          stats.unmergedGenerations());

      ScanSpec scan = ScanSpec.all().withColumns(List.of("id", "token_count", "text_payload"));
      long expected = store.count();
      double[] planOne = new double[rounds];
      double[] planMany = new double[rounds];
      double[] freshOne = new double[rounds];
      double[] freshSlowest = new double[rounds];
      double[] freshSum = new double[rounds];
      double[] baseFirst = new double[rounds];
      double[] baseRest = new double[rounds];
      int freshSplits = 0;
      int baseSplits = 0;
      for (int round = 0; round < rounds; round++) {
        long p0 = System.nanoTime();
        ReadPlan small = store.planRead(scan, 2);
        planOne[round] = ms(p0);
        long p1 = System.nanoTime();
        ReadPlan plan = store.planRead(scan, 8 * shards);
        planMany[round] = ms(p1);

        // first pass, in plan order as an executor would: what the first base split pays (the fresh key set and
        // the superseded keys of the snapshot, computed once) and what the others pay
        long rows = 0;
        List<Double> base = new ArrayList<>();
        for (ReadSplit s : plan.splits()) {
          long s0 = System.nanoTime();
          rows += read(store, s);
          if (s.part() == ReadSplit.Part.BASE) {
            base.add(ms(s0));
          }
        }
        if (rows != expected) {
          throw new IllegalStateException("split reads returned " + rows + " rows (view: " + expected + ")");
        }
        // second pass, everything shared already computed: the fresh tier as one split, then as its parts
        ReadSplit any = plan.splits().get(0);
        ReadSplit wholeFresh = new ReadSplit(any.config(), any.snapshot(), any.scan(), ReadSplit.Part.FRESH, null, null);
        long f0 = System.nanoTime();
        long rowsOne = read(store, wholeFresh);
        freshOne[round] = ms(f0);
        List<Double> fresh = new ArrayList<>();
        for (ReadSplit s : plan.splits()) {
          if (s.part() == ReadSplit.Part.FRESH) {
            long s0 = System.nanoTime();
            rowsOne -= read(store, s);
            fresh.add(ms(s0));
          }
        }
        if (rowsOne != 0) {
          throw new IllegalStateException("the fresh parts differ from the one fresh split by " + rowsOne + " rows");
        }
        freshSplits = fresh.size();
        baseSplits = base.size();
        freshSlowest[round] = fresh.stream().mapToDouble(Double::doubleValue).max().orElse(0);
        freshSum[round] = fresh.stream().mapToDouble(Double::doubleValue).sum();
        baseFirst[round] = base.isEmpty() ? 0 : base.get(0);
        baseRest[round] = base.size() < 2 ? 0 : median(base.subList(1, base.size()).stream().mapToDouble(d -> d).toArray());
        Bench.log("round %d: plan %.1f ms (2 splits: %d parts) / %.1f ms (%d splits: %d base + %d fresh); fresh as one "
            + "split %.1f ms, as %d splits slowest %.1f ms (sum %.1f); base splits first %.1f ms, others median %.1f ms",
            round, planOne[round], small.splits().size(), planMany[round], plan.splits().size(), baseSplits, freshSplits,
            freshOne[round], freshSplits, freshSlowest[round], freshSum[round], baseFirst[round], baseRest[round]);
        store.add(rows(random, "r" + round, 0, 10));  // the next round plans a new snapshot
        expected = store.count();
      }
      StoreStats.FreshCache cache = store.stats().freshCache();
      Bench.log("fresh cache: %d KiB of %d KiB in %d entries, %d evictions", cache.bytes() >> 10, cache.boundBytes() >> 10,
          cache.entries(), cache.evictions());
      double ratio = median(freshOne) / Math.max(1e-9, median(freshSlowest));
      Bench.log("medians: plan %.1f ms (2 splits) vs %.1f ms (%d splits); fresh tier: one split %.1f ms, slowest of %d "
          + "splits %.1f ms (ratio %.2fx), sum of the %d %.1f ms (%.2fx the one split); base: first split %.1f ms, "
          + "others %.1f ms", median(planOne), median(planMany), 8 * shards, median(freshOne), freshSplits,
          median(freshSlowest), ratio, freshSplits, median(freshSum), median(freshSum) / Math.max(1e-9, median(freshOne)),
          median(baseFirst), median(baseRest));
      Bench.log("RESULT split-read fresh_ratio=%.2f fresh_splits=%d base_first_ms=%.1f base_rest_ms=%.1f", ratio,
          freshSplits, median(baseFirst), median(baseRest));
    } finally {
      ContextStore.closeAllResident();
      Bench.delete(dir);
    }
  }

  private static long read(ContextStore store, ReadSplit split) {
    long n = 0;
    try (StoreReader reader = store.read(split)) {
      while (reader.next()) {
        n += reader.batch().getRowCount();
      }
    }
    return n;
  }

  private static List<Map<String, Object>> rows(Random random, String prefix, int start, int count) {
    List<Map<String, Object>> out = new ArrayList<>(count);
    for (int i = start; i < start + count; i++) {
      Map<String, Object> r = new HashMap<>();
      r.put("id", prefix + i);
      r.put("token_count", random.nextInt(1000));
      r.put("text_payload", Bench.text(random, 120));
      out.add(r);
    }
    return out;
  }

  private static double ms(long since) {
    return (System.nanoTime() - since) / 1e6;
  }

  private static double median(double[] values) {
    double[] s = values.clone();
    Arrays.sort(s);
    return s.length == 0 ? 0 : s[s.length / 2];
  }
}
