package io.lancecontext.core.read;

import java.io.Serializable;
import java.util.List;

/**
 * A read split into independent parts ({@link ReadSplit}s) of one snapshot, with a size estimate for
 * each: what a Spark {@code Batch.planInputPartitions} returns and {@code SupportsReportStatistics}
 * reports, or what a Flink split enumerator assigns.
 *
 * <p>Estimates are taken before filters, projection and the LSM resolution (a base row the fresh tier
 * replaces is still counted in its base split), so they are upper bounds of what a split returns, good for
 * a planner's statistics, not for exact counts:
 * <ul>
 *   <li>a base split: the rows of its fragments (fragment metadata, deletions subtracted) and the bytes of
 *       their data files (all columns);</li>
 *   <li>a fresh split: the keys whose newest row the snapshot's fresh tier holds in its buckets (deletions
 *       included), and those rows times the average row width of the fresh sources they come from.</li>
 * </ul>
 *
 * @param splits the parts; together they return exactly the LSM view of one snapshot
 * @param estimates one estimate per split, in the same order
 */
public record ReadPlan(List<ReadSplit> splits, List<Estimate> estimates) implements Serializable {

  /**
   * The size of one split (or of a whole plan), before filters.
   *
   * @param rows rows it may return at most
   * @param bytes bytes those rows take in storage
   */
  public record Estimate(long rows, long bytes) implements Serializable {
    public Estimate {
      if (rows < 0 || bytes < 0) {
        throw new IllegalArgumentException("negative estimate: " + rows + " rows, " + bytes + " bytes");
      }
    }
  }

  public ReadPlan {
    splits = List.copyOf(splits);
    estimates = List.copyOf(estimates);
    if (splits.size() != estimates.size()) {
      throw new IllegalArgumentException(splits.size() + " splits but " + estimates.size() + " estimates");
    }
  }

  /** When the plan was made: its earliest split's planning time (now for a plan without splits). */
  public java.time.Instant plannedAt() {
    return splits.stream().map(s -> s.snapshot().plannedAt()).min(java.time.Instant::compareTo)
        .orElseGet(java.time.Instant::now);
  }

  /** The estimate of split {@code i}. */
  public Estimate estimate(int i) {
    return estimates.get(i);
  }

  /** Rows the plan may return at most (sum over its splits). */
  public long estimatedRows() {
    return estimates.stream().mapToLong(Estimate::rows).sum();
  }

  /** Bytes of the rows the plan reads (sum over its splits). */
  public long estimatedBytes() {
    return estimates.stream().mapToLong(Estimate::bytes).sum();
  }
}
