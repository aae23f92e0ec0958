package io.lancecontext.core.internal.store;

import io.lancecontext.core.internal.io.ReadLeases;
import io.lancecontext.core.internal.read.HybridSearch;
import io.lancecontext.core.internal.read.LsmSnapshot;
import io.lancecontext.core.internal.read.ReadPlanner;
import io.lancecontext.core.internal.read.RowScan;
import io.lancecontext.core.internal.read.StoreScan;
import io.lancecontext.core.internal.read.TextSearch;
import io.lancecontext.core.internal.read.VectorSearch;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.read.ReadLease;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import io.lancecontext.core.read.TextQuery;
import io.lancecontext.core.read.VectorQuery;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The reads of one store handle from its resident store: scans now or at a snapshot, incremental reads, split
 * planning and reading, vector search, snapshots and tags, read leases, with the handle's own options. The
 * handle checks that it is open first and wraps what these return in its public types.
 */
public final class HandleReads {
  private final ResidentStore store;
  /** The options the handle was opened with. */
  private final StoreConfig config;

  public HandleReads(ResidentStore store, StoreConfig config) {
    this.store = store;
    this.config = config;
  }

  /** What a reader reads: the pinned view it closes when done, and (made once) the scan over it. */
  public record Read(LsmSnapshot snapshot, Supplier<? extends RowScan> scan) {}

  /** A scan of the view now, or at the snapshot or between the snapshots {@code spec} names. */
  public Read scan(ScanSpec spec) {
    ReadSplit.Snapshot at = resolve(spec.snapshot());
    if (spec.incremental()) {
      IncrementalReads.Opened read = IncrementalReads.open(store, snapshots(), spec, at);
      return new Read(read.to(), read::scan);
    }
    LsmSnapshot snapshot = openSnapshot(at);
    ScanSpec scan = at != null && spec.now() == null ? spec.withNow(at.plannedAt()) : spec;
    return new Read(snapshot,
        () -> new StoreScan(store.spec(), snapshot, scan, store.allocator(), ReadSplit.Part.ALL, null));
  }

  /** A read of one planned split. */
  public Read read(ReadSplit split) {
    if (split.scan().incremental()) {
      IncrementalReads.Opened read = IncrementalReads.open(store, snapshots(), split.scan(), split.snapshot());
      return new Read(read.to(), read::scan);
    }
    LsmSnapshot snapshot = store.pinnedSnapshot(split);
    return new Read(snapshot, () -> new StoreScan(store.spec(), snapshot, split.scan(), store.allocator(),
        split.part(), split.fragments()));
  }

  /** Splits a read of the view now or at its snapshot into about {@code maxSplits} parts. */
  public ReadPlan planRead(ScanSpec scan, int maxSplits) {
    ReadSplit.Snapshot at = resolve(scan.snapshot());
    if (scan.incremental()) {
      return IncrementalReads.plan(store, snapshots(), scan, at);
    }
    return store.planRead(ReadPlanner.scanToPlan(store.spec(), scan, at == null ? null : at.plannedAt()), maxSplits,
        at);
  }

  /** The {@code k} nearest rows of the view (now or at the query's snapshot), nearest first; the caller closes it. */
  public VectorSchemaRoot search(VectorQuery query) {
    ReadSplit.Snapshot at = resolve(query.snapshot());
    try (LsmSnapshot snapshot = openSnapshot(at)) {
      return VectorSearch.run(store.spec(), snapshot, query, at == null ? Instant.now() : at.plannedAt(), tuning(),
          store.allocator());
    }
  }

  /** The {@code k} best matching rows of the view (now or at the query's snapshot), best first; the caller closes it. */
  public VectorSchemaRoot search(TextQuery query) {
    ReadSplit.Snapshot at = resolve(query.snapshot());
    try (LsmSnapshot snapshot = openSnapshot(at)) {
      return TextSearch.run(store.spec(), snapshot, query, at == null ? Instant.now() : at.plannedAt(), store.allocator());
    }
  }

  /**
   * The {@code k} rows of the view (now or at the queries' snapshot) most relevant to both searches, most relevant
   * first; the caller closes it.
   */
  public VectorSchemaRoot search(VectorQuery vector, TextQuery text, int k) {
    ReadSplit.Snapshot at = resolve(vector.snapshot());
    try (LsmSnapshot snapshot = openSnapshot(at)) {
      return HybridSearch.run(store.spec(), snapshot, vector, text, k, at == null ? Instant.now() : at.plannedAt(),
          tuning(), store.allocator());
    }
  }

  private VectorSearch.Tuning tuning() {
    return new VectorSearch.Tuning(config.get(StoreOptions.SEARCH_NPROBES), config.get(StoreOptions.SEARCH_REFINE_FACTOR));
  }

  /** Takes a snapshot of the view now, kept for {@code snapshot.retention}. */
  public StoreSnapshot snapshot() {
    try (LsmSnapshot now = store.snapshot(null)) {
      return snapshots().retain(now.pin(), config.get(StoreOptions.SNAPSHOT_RETENTION));
    }
  }

  /** A snapshot of the view now if it changed since the snapshot {@code tokenOrTag} names; empty if not. */
  public Optional<StoreSnapshot> snapshotIfChanged(String tokenOrTag) {
    ReadSplit.Snapshot then = snapshots().resolve(tokenOrTag);
    try (LsmSnapshot now = store.snapshot(null)) {
      return snapshots().retainIfChanged(then, now.pin(), config.get(StoreOptions.SNAPSHOT_RETENTION));
    }
  }

  /** Tags the view now as {@code name}. */
  public StoreSnapshot tag(String name) {
    try (LsmSnapshot now = store.snapshot(null)) {
      return snapshots().tag(name, now.pin());
    }
  }

  /** Tags the snapshot {@code snapshot} names as {@code name}. */
  public StoreSnapshot tag(String name, String snapshot) {
    return snapshots().tag(name, snapshots().resolve(snapshot));
  }

  public boolean dropTag(String name) {
    return snapshots().dropTag(name);
  }

  public List<StoreSnapshot> tags() {
    return snapshots().tags();
  }

  /** Keeps every split planned at {@code plannedAt} or later readable until the lease is closed. */
  public ReadLease holdRead(Instant plannedAt) {
    return ReadLeases.holdForHandle(store.files(), plannedAt.toEpochMilli(), config.get(StoreOptions.READ_LEASE_TIMEOUT));
  }

  private ReadSplit.Snapshot resolve(String tokenOrTag) {
    return tokenOrTag == null ? null : snapshots().resolve(tokenOrTag);
  }

  /** The view as it is now ({@code at} null) or at the snapshot {@code at}; the caller closes it. */
  private LsmSnapshot openSnapshot(ReadSplit.Snapshot at) {
    return at == null ? store.snapshot(null)
        : store.pinnedSnapshot(new ReadSplit(config, at, ScanSpec.all(), ReadSplit.Part.ALL, null));
  }

  private StoreSnapshots snapshots() {
    return store.snapshots();
  }
}
