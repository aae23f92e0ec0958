package io.lancecontext.spark.read;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.read.ReadPlan;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.read.StoreSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
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
 * written otherwise), and anyway once the last one is half of {@code snapshot.retention} old. Every offset it
 * hands out is **tagged** ({@code stream-<hash of the checkpoint location>-<hash of the token>}), and
 * {@link #commit} drops the query's tags older than the committed offset: the offsets a restart may read from
 * are kept however long the query is stopped (a night, a week), and nothing else is. A query retired for good
 * leaves its last tag; drop it ({@code dropTag}, {@code CALL ... drop_tag}) so garbage collection can collect
 * what it keeps.
 */
final class SparkMicroBatchStream implements MicroBatchStream {
  private final StoreConfig config;
  private final ScanSpec template;
  private final StructType schema;
  private final int maxSplits;
  private final String since;
  /** The name prefix of this query's tags: {@code stream-} and a hash of its checkpoint location. */
  private final String tagPrefix;
  private StoreSnapshot latest;

  /**
   * @param template the columns and filters each batch reads (no snapshot)
   * @param since the snapshot (token or tag) a new query starts after; null for the whole store first
   */
  SparkMicroBatchStream(StoreConfig config, ScanSpec template, StructType schema, int maxSplits, String since,
      String checkpointLocation) {
    this.tagPrefix = "stream-" + hash(checkpointLocation) + "-";
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
        latest = keep(store, store.snapshot());
      } else {
        Optional<StoreSnapshot> changed = store.snapshotIfChanged(latest.token());
        if (changed.isPresent()) {
          latest = keep(store, changed.get());
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

  /** Tags {@code snapshot} as an offset of this query, so it is kept until a later offset is committed. */
  private StoreSnapshot keep(ContextStore store, StoreSnapshot snapshot) {
    String name = tagOf(snapshot.token());
    if (store.tags().stream().noneMatch(t -> name.equals(t.tag()))) {
      store.tag(name, snapshot.token());
    }
    return snapshot;
  }

  private String tagOf(String token) {
    return tagPrefix + hash(token);
  }

  /** Drops this query's tags older than {@code end}: a restart reads from {@code end} or a later offset. */
  @Override
  public void commit(Offset end) {
    SnapshotOffset committed = (SnapshotOffset) end;
    if (committed.earliest()) {
      return;
    }
    try (ContextStore store = ContextStore.open(config)) {
      List<StoreSnapshot> tags = store.tags().stream().filter(t -> t.tag().startsWith(tagPrefix)).toList();
      String endTag = tagOf(committed.token());
      Optional<Instant> endTaken = tags.stream().filter(t -> t.tag().equals(endTag)).map(StoreSnapshot::takenAt).findFirst();
      for (StoreSnapshot t : tags) {
        if (endTaken.isPresent() && t.takenAt().isBefore(endTaken.get())) {
          store.dropTag(t.tag());
        }
      }
    }
  }

  /** 16 hex digits of the SHA-256 of {@code text}. */
  static String hash(String text) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(String.valueOf(text).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void stop() {
  }
}
