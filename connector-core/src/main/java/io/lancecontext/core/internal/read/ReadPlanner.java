package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Splits a read of one live snapshot into a {@link ReadPlan}: groups of base fragments of about equal
 * rows, and groups of whole buckets of the fresh tier (both lanes of a bucket go together: a key's newest
 * fresh row is decided across them), each with its estimate. The split budget is shared in proportion to
 * the estimated rows of the two tiers, each tier getting at least one split when it holds anything (a budget
 * of one split: one of the whole view). A read confined to a few keys is one split instead ({@link #planByKey}).
 */
public final class ReadPlanner {
  private ReadPlanner() {}

  /**
   * The scan a plan is made for: one without an offset (a split read cannot skip rows), expiry judged at
   * planning time (a snapshot's: when it was taken, {@code snapshotTakenAt}) unless the scan says when, its
   * columns resolved (unknown ones refused).
   */
  public static ScanSpec scanToPlan(SchemaSpec spec, ScanSpec scan, Instant snapshotTakenAt) {
    if (scan.offset() > 0) {
      throw new IllegalArgumentException("a split read cannot skip rows (offset " + scan.offset() + ")");
    }
    ScanSpec pinnedScan = scan.now() != null ? scan
        : scan.withNow(snapshotTakenAt == null ? Instant.now() : snapshotTakenAt);
    StoreScan.resolveColumns(spec, pinnedScan);
    return pinnedScan;
  }

  /**
   * @param buckets the shard ids of each bucket (its lanes)
   */
  public static ReadPlan plan(StoreConfig config, LsmSnapshot snapshot, ScanSpec scan, int maxSplits,
      List<List<String>> buckets) {
    if (maxSplits < 1) {
      throw new IllegalArgumentException("maxSplits must be positive: " + maxSplits);
    }
    ReadSplit.Snapshot pinned = snapshot.pin();
    List<LanceFragment> fragments = snapshot.base().dataset().fragments();
    long baseRows = fragments.stream().mapToLong(LanceFragment::rows).sum();

    List<BucketSize> fresh = freshSizes(snapshot, buckets);
    long freshRows = fresh.stream().mapToLong(BucketSize::rows).sum();
    if (maxSplits == 1) {
      // a budget of one split: the whole view in one (a split per tier would be two)
      long bytes = fragments.stream().mapToLong(ReadPlanner::dataBytes).sum()
          + fresh.stream().mapToLong(BucketSize::bytes).sum();
      return new ReadPlan(List.of(new ReadSplit(config, pinned, scan, ReadSplit.Part.ALL, null, null)),
          List.of(new ReadPlan.Estimate(baseRows + freshRows, bytes)));
    }

    int freshGroups = 0;
    if (!fresh.isEmpty()) {
      long share = Math.round((double) maxSplits * freshRows / Math.max(1, freshRows + baseRows));
      int cap = fragments.isEmpty() ? maxSplits : Math.max(1, maxSplits - 1);
      freshGroups = (int) Math.max(1, Math.min(Math.min(share, cap), fresh.size()));
    }
    int baseGroups = fragments.isEmpty() ? 0 : Math.max(1, Math.min(maxSplits - freshGroups, fragments.size()));

    List<ReadSplit> splits = new ArrayList<>();
    List<ReadPlan.Estimate> estimates = new ArrayList<>();
    planBase(config, pinned, scan, fragments, baseRows, baseGroups, splits, estimates);
    planFresh(config, pinned, scan, fresh, freshGroups, splits, estimates);
    return new ReadPlan(splits, estimates);
  }

  /**
   * A read confined to {@code keys} ({@code id = ..}, {@code id IN (..)}; {@link Predicates#keysReadByKey}): one
   * split of the whole view, its fresh tier narrowed to the buckets the keys live in ({@code lanes}, their
   * shards). It reads by key, the base through its key hashes and the fresh tier through its index, so more
   * splits would add only tasks an engine schedules (five of six finding nothing) to a read of a few
   * milliseconds. Its estimate: a row per key, at the average width of the snapshot's rows.
   */
  public static ReadPlan planByKey(StoreConfig config, LsmSnapshot snapshot, ScanSpec scan, int keys,
      List<String> lanes) {
    ReadSplit.Snapshot pinned = snapshot.pin();
    long rows = 0;
    long bytes = 0;
    for (LanceFragment f : snapshot.base().dataset().fragments()) {
      rows += f.rows();
      bytes += dataBytes(f);
    }
    for (FreshShard view : snapshot.shards().values()) {
      for (FreshSource s : view.sources()) {
        rows += s.rows();
        bytes += rowBytes(s);
      }
    }
    long width = rows == 0 ? 0 : bytes / rows;
    return new ReadPlan(List.of(new ReadSplit(config, pinned, scan, ReadSplit.Part.ALL, null, lanes)),
        List.of(new ReadPlan.Estimate(keys, keys * width)));
  }

  private static void planBase(StoreConfig config, ReadSplit.Snapshot pinned, ScanSpec scan, List<LanceFragment> fragments,
      long total, int groups, List<ReadSplit> splits, List<ReadPlan.Estimate> estimates) {
    if (groups == 0) {
      return;
    }
    long perGroup = Math.max(1, (total + groups - 1) / groups);
    List<Integer> group = new ArrayList<>();
    long rows = 0;
    long bytes = 0;
    for (int i = 0; i < fragments.size(); i++) {
      LanceFragment f = fragments.get(i);
      group.add(f.id());
      rows += f.rows();
      bytes += dataBytes(f);
      if (rows >= perGroup || i == fragments.size() - 1) {
        splits.add(new ReadSplit(config, pinned, scan, ReadSplit.Part.BASE, group, null));
        estimates.add(new ReadPlan.Estimate(rows, bytes));
        group = new ArrayList<>();
        rows = 0;
        bytes = 0;
      }
    }
  }

  /** Bytes of a fragment's data files as its metadata records them, deletions pro rata. */
  static long dataBytes(LanceFragment f) {
    long bytes = f.fileBytes();
    long physical = f.physicalRows();
    return physical <= 0 ? bytes : Math.round((double) bytes * f.rows() / physical);
  }

  private record BucketSize(List<String> shards, long rows, long bytes) {}

  /** Per bucket holding fresh keys: its newest rows, and their bytes at the average width of its sources. */
  private static List<BucketSize> freshSizes(LsmSnapshot snapshot, List<List<String>> buckets) {
    List<BucketSize> out = new ArrayList<>();
    for (List<String> lanes : buckets) {
      long rows = 0;
      long sourceRows = 0;
      long sourceBytes = 0;
      List<FreshShard> seen = new ArrayList<>();
      for (String id : lanes) {
        FreshShard view = snapshot.shard(id);
        if (view == null) {
          continue;
        }
        // a key lives in one bucket: its keys are those of its lanes' views, each counted once (each view's
        // map is built once and kept with the view, unlike a map of the whole snapshot's winners)
        rows += newKeys(view, seen);
        seen.add(view);
        for (FreshSource s : view.sources()) {
          sourceRows += s.rows();
          sourceBytes += rowBytes(s);
        }
      }
      if (rows > 0) {
        long bytes = sourceRows == 0 ? 0 : Math.round((double) sourceBytes * rows / sourceRows);
        out.add(new BucketSize(lanes, rows, bytes));
      }
    }
    return out;
  }

  /** How many keys of {@code view} none of {@code seen} holds; against one view, counted from the smaller side. */
  private static long newKeys(FreshShard view, List<FreshShard> seen) {
    java.util.Map<String, FreshShard.RowRef> keys = view.newest();
    if (seen.isEmpty()) {
      return keys.size();
    }
    if (seen.size() == 1 && seen.get(0).newest().size() < keys.size()) {
      long both = 0;
      for (String k : seen.get(0).newest().keySet()) {
        if (keys.containsKey(k)) {
          both++;
        }
      }
      return keys.size() - both;
    }
    long fresh = 0;
    for (String k : keys.keySet()) {
      boolean held = false;
      for (FreshShard v : seen) {
        if (v.ref(k) != null) {
          held = true;
          break;
        }
      }
      if (!held) {
        fresh++;
      }
    }
    return fresh;
  }

  /** Bytes of a source's rows: a WAL entry's decoded batches, a generation's data files. */
  private static long rowBytes(FreshSource s) {
    if (s instanceof GenerationSource g) {
      long bytes = 0;
      for (LanceFragment f : g.dataset().fragments()) {
        bytes += dataBytes(f);
      }
      return bytes;
    }
    return s.bytes();
  }

  /** Largest bucket first into the group with the fewest rows so far. */
  private static void planFresh(StoreConfig config, ReadSplit.Snapshot pinned, ScanSpec scan, List<BucketSize> buckets,
      int groups, List<ReadSplit> splits, List<ReadPlan.Estimate> estimates) {
    if (groups == 0) {
      return;
    }
    List<List<String>> shards = new ArrayList<>();
    long[] rows = new long[groups];
    long[] bytes = new long[groups];
    for (int g = 0; g < groups; g++) {
      shards.add(new ArrayList<>());
    }
    List<BucketSize> sorted = new ArrayList<>(buckets);
    sorted.sort(Comparator.comparingLong(BucketSize::rows).reversed());
    for (BucketSize b : sorted) {
      int least = 0;
      for (int g = 1; g < groups; g++) {
        if (rows[g] < rows[least]) {
          least = g;
        }
      }
      shards.get(least).addAll(b.shards());
      rows[least] += b.rows();
      bytes[least] += b.bytes();
    }
    for (int g = 0; g < groups; g++) {
      splits.add(new ReadSplit(config, pinned, scan, ReadSplit.Part.FRESH, null, shards.get(g)));
      estimates.add(new ReadPlan.Estimate(rows[g], bytes[g]));
    }
  }
}
