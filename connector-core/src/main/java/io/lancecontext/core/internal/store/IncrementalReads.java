package io.lancecontext.core.internal.store;

import io.lancecontext.core.internal.read.IncrementalScan;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.ReadPlanner;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import java.time.Instant;
import java.util.List;

/**
 * Incremental reads ({@link ScanSpec#between}): their two snapshots resolved (both must be kept), checked to be in
 * order, and opened. A plan of one is a single split of the whole read: what changed is decided over both views
 * whole (a key's version in one tier of {@code from} is compared with its version in another tier of {@code to}).
 */
public final class IncrementalReads {
  private IncrementalReads() {}

  /** An incremental read: the later snapshot (the reader closes it) and the scan over both (it owns the earlier). */
  public record Opened(LsmSnapshot to, IncrementalScan scan) {}

  /**
   * Opens the incremental read {@code scan} ending at {@code to} (null: the store as it is now).
   *
   * @throws io.lancecontext.core.error.SnapshotNotFoundException if either snapshot is no longer kept
   * @throws IllegalArgumentException if {@code since} was taken after {@code to}
   */
  public static Opened open(ResidentStore store, StoreSnapshots snapshots, ScanSpec scan, ReadSplit.Snapshot to) {
    ReadSplit.Snapshot from = snapshots.resolve(scan.since());
    if (to != null) {
      checkOrder(from, to, scan);
    }
    LsmSnapshot later = to == null ? store.snapshot(null)
        : store.pinnedSnapshot(new ReadSplit(store.config(), to, scan, ReadSplit.Part.ALL, null));
    try {
      Instant at = to == null ? later.takenAt() : to.plannedAt();
      if (from.plannedAt().isAfter(at)) {
        checkOrder(from, later.pin(), scan);
      }
      ScanSpec read = scan.now() != null ? scan : scan.withNow(to == null ? Instant.now() : to.plannedAt());
      LsmSnapshot earlier = store.pinnedSnapshot(new ReadSplit(store.config(), from, scan, ReadSplit.Part.ALL, null));
      return new Opened(later, new IncrementalScan(store.spec(), earlier, later, read, store.allocator()));
    } catch (RuntimeException e) {
      later.close();
      throw e;
    }
  }

  /**
   * A plan of one split reading {@code scan} between its {@code since} and {@code to}, pinned now when null (so
   * every reader of the plan reads up to the same moment). Estimate: the later snapshot's fresh keys.
   */
  public static ReadPlan plan(ResidentStore store, StoreSnapshots snapshots, ScanSpec scan, ReadSplit.Snapshot to) {
    ReadSplit.Snapshot from = snapshots.resolve(scan.since());
    ReadSplit.Snapshot at = to;
    long rows;
    if (at == null) {
      try (LsmSnapshot now = store.snapshot(null)) {
        at = now.pin();
        rows = now.freshRows();
      }
    } else {
      try (LsmSnapshot later = store.pinnedSnapshot(new ReadSplit(store.config(), at, scan, ReadSplit.Part.ALL, null))) {
        rows = later.freshRows();
      }
    }
    checkOrder(from, at, scan);
    ScanSpec planned = ReadPlanner.scanToPlan(store.spec(), scan, at.plannedAt());
    return new ReadPlan(List.of(new ReadSplit(store.config(), at, planned, ReadSplit.Part.ALL, null)),
        List.of(new ReadPlan.Estimate(rows, 0)));
  }

  private static void checkOrder(ReadSplit.Snapshot from, ReadSplit.Snapshot to, ScanSpec scan) {
    if (from.plannedAt().isAfter(to.plannedAt()) || from.baseVersion() > to.baseVersion()) {
      throw new IllegalArgumentException("an incremental read from '" + scan.since() + "' (taken at " + from.plannedAt()
          + ") to " + (scan.snapshot() == null ? "now" : "'" + scan.snapshot() + "'") + " (taken at " + to.plannedAt()
          + "): the first snapshot must not be later than the second");
    }
  }
}
