package io.lancecontext.spark.read;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.types.StructType;

/**
 * A Structured Streaming source over a store ({@code spark.readStream.format("lancecontext")}): offsets are
 * snapshot tokens ({@link SnapshotOffset}). The first micro-batch of a new query reads the whole store at its end
 * snapshot (or, with option {@code since}, what changed after that snapshot); every later one reads what changed
 * between its two snapshots (core's {@code ScanSpec.between}): each key whose newest version changed, once, as it
 * is at the batch's end, and the keys deleted in between ({@code _lc_deleted}). A batch replayed after a restart
 * reads the same two pinned snapshots, so it returns the same rows, whatever merges, compactions and garbage
 * collections ran meanwhile.
 *
 * <p>{@link #latestOffset()} takes a new snapshot only when the view changed since the last one (nothing is
 * written otherwise), and anyway once the last one is half of {@code snapshot.retention} old, so the snapshot a
 * running query will read from next is always kept. A query stopped for longer than {@code snapshot.retention}
 * fails on restart with {@code SnapshotNotFoundException}: its checkpoint's last offset is no longer kept.
 */
final class SparkMicroBatchStream implements MicroBatchStream {
  private final StoreConfig config;
  private final ScanSpec template;
  private final StructType schema;
  private final int maxSplits;
  private final String since;
  private StoreSnapshot latest;

  /**
   * @param template the columns and filters each batch reads (no snapshot)
   * @param since the snapshot (token or tag) a new query starts after; null for the whole store first
   */
  SparkMicroBatchStream(StoreConfig config, ScanSpec template, StructType schema, int maxSplits, String since) {
    this.config = config;
    this.template = template;
    this.schema = schema;
    this.maxSplits = maxSplits;
    this.since = since;
  }

  @Override
  public Offset initialOffset() {
    return since == null ? SnapshotOffset.EARLIEST : new SnapshotOffset(since);
  }

  @Override
  public Offset deserializeOffset(String json) {
    return SnapshotOffset.fromJson(json);
  }

  @Override
  public synchronized Offset latestOffset() {
    try (ContextStore store = ContextStore.open(config)) {
      Duration refresh = config.get(StoreOptions.SNAPSHOT_RETENTION).dividedBy(2);
      if (latest == null || latest.takenAt().plus(refresh).isBefore(Instant.now())) {
        latest = store.snapshot();
      } else {
        Optional<StoreSnapshot> changed = store.snapshotIfChanged(latest.token());
        if (changed.isPresent()) {
          latest = changed.get();
        }
      }
      return new SnapshotOffset(latest.token());
    }
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    SnapshotOffset from = (SnapshotOffset) start;
    String to = ((SnapshotOffset) end).token();
    ScanSpec scan = from.earliest() ? template.atSnapshot(to) : template.between(from.token(), to);
    ReadPlan plan;
    try (ContextStore store = ContextStore.open(config)) {
      plan = store.planRead(scan, maxSplits > 0 ? maxSplits
          : Math.max(2, 3 * SparkSession.active().sparkContext().defaultParallelism()));
    }
    return plan.splits().stream().map(SparkInputPartition::new).toArray(InputPartition[]::new);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new SparkPartitionReaderFactory(config.asMap(), schema);
  }

  @Override
  public void commit(Offset end) {
    // nothing to release: each snapshot is kept by its own lease until snapshot.retention runs out
  }

  @Override
  public void stop() {
  }
}
