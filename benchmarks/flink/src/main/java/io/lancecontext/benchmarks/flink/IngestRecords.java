package io.lancecontext.benchmarks.flink;

import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.types.Row;

/**
 * The benchmark's {@code context} records (id, session_id, role, a 200-character text_payload, token_count;
 * the preset's other columns null), made from a sequence number, optionally at a fixed rate. Chained to the
 * source, so a record emitted before this subtask's snapshot of checkpoint {@code n} belongs to checkpoint
 * {@code n}: every {@link #sampleEvery}th record is sampled with its emission time and, at the snapshot, its
 * checkpoint; each snapshot also records how many rows the subtask had emitted (the checkpoint boundaries
 * a reader's count can legitimately show). State lives in statics: the MiniCluster shares this JVM.
 */
final class IngestRecords extends RichMapFunction<Long, Row> implements CheckpointedFunction {
  private static final long serialVersionUID = 1L;
  private static final String[] ROLES = {"system", "user", "assistant", "tool"};
  private static final String TEXT = text();

  static final TypeInformation<Row> TYPE = Types.ROW_NAMED(FragmentSink.COLUMNS.toArray(new String[0]),
      Types.STRING, Types.STRING, Types.STRING, Types.STRING, Types.INT);

  /** A sampled record: its key, when it was emitted (wall ms and nanos) and its checkpoint (-1 until known). */
  static final class Sample {
    final String key;
    final long emittedNanos;
    final long emittedMs;
    final int subtask;
    volatile long checkpoint = -1;
    volatile long visibleNanos = -1;
    volatile long visibleMs = -1;

    Sample(String key, long emittedNanos, long emittedMs, int subtask) {
      this.key = key;
      this.emittedNanos = emittedNanos;
      this.emittedMs = emittedMs;
      this.subtask = subtask;
    }
  }

  static final ConcurrentLinkedQueue<Sample> SAMPLES = new ConcurrentLinkedQueue<>();
  /** checkpoint id -> rows emitted before its snapshot, per subtask. */
  static final Map<Long, Map<Integer, Long>> EMITTED_AT_SNAPSHOT = new ConcurrentHashMap<>();

  static void reset() {
    SAMPLES.clear();
    EMITTED_AT_SNAPSHOT.clear();
  }

  private final double ratePerSubtask;
  private final int sampleEvery;
  private transient int subtask;
  private transient long emitted;
  private transient long startNanos;
  private transient ConcurrentLinkedQueue<Sample> unassigned;

  /**
   * @param ratePerSubtask rows per second per subtask, 0 for as fast as possible
   * @param sampleEvery sample one record in this many, 0 for none
   */
  IngestRecords(double ratePerSubtask, int sampleEvery) {
    this.ratePerSubtask = ratePerSubtask;
    this.sampleEvery = sampleEvery;
  }

  @Override
  public void open(OpenContext context) {
    subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    unassigned = new ConcurrentLinkedQueue<>();
  }

  @Override
  public Row map(Long n) throws InterruptedException {
    if (ratePerSubtask > 0) {
      if (emitted == 0) {
        startNanos = System.nanoTime();
      }
      long ahead = startNanos + (long) (emitted * 1e9 / ratePerSubtask) - System.nanoTime();
      if (ahead > 1_000_000L) {
        Thread.sleep(ahead / 1_000_000L);
      }
    }
    emitted++;
    String key = key(n);
    if (sampleEvery > 0 && n % sampleEvery == 0) {
      Sample s = new Sample(key, System.nanoTime(), System.currentTimeMillis(), subtask);
      unassigned.add(s);
      SAMPLES.add(s);
    }
    int off = (int) Math.floorMod(mix(n + 7), (long) (TEXT.length() - 200));
    return Row.of(key, "sess-" + (n / 40), ROLES[(int) (n % 4)], TEXT.substring(off, off + 200), 40 + (int) (n % 23));
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) {
    long cp = context.getCheckpointId();
    EMITTED_AT_SNAPSHOT.computeIfAbsent(cp, k -> new ConcurrentHashMap<>()).put(subtask, emitted);
    for (Sample s; (s = unassigned.poll()) != null; ) {
      s.checkpoint = cp;
    }
  }

  @Override
  public void initializeState(FunctionInitializationContext context) {}

  /** The record's key: a UUID-shaped string spread over all buckets. */
  static String key(long n) {
    return new UUID(mix(n), mix(~n)).toString();
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  private static String text() {
    String[] words = ("the model returns a token for each step of the rollout and the reward is computed after the "
        + "episode ends policy gradient advantage value baseline sample batch prompt completion answer reasoning "
        + "chain tool call function result observation environment agent critic actor update").split(" ");
    Random random = new Random(42);
    StringBuilder sb = new StringBuilder(1 << 20);
    while (sb.length() < (1 << 20)) {
      sb.append(words[random.nextInt(words.length)]).append(random.nextInt(10) == 0 ? ". " : " ");
    }
    return sb.toString();
  }
}
