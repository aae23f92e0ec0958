package io.lancecontext.flink.source;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.ReadLease;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;

/**
 * Hands the splits of one read plan to readers as they ask for them (readers that ask first get more, so
 * a slow split does not hold a whole subtask's share back); when none is left, the asking reader is told
 * there are no more.
 */
final class LanceContextSplitEnumerator implements SplitEnumerator<LanceContextSplit, PendingSplits> {
  private final SplitEnumeratorContext<LanceContextSplit> context;
  private final Deque<LanceContextSplit> pending;
  private final Map<String, String> options;
  private final long plannedAtMillis;
  private ContextStore store;
  private ReadLease lease;

  /**
   * {@code plannedAtMillis}: when the splits were planned. From {@link #start()} to {@link #close()} the
   * enumerator holds the plan readable (core's read lease), so readers, restored ones included, read their
   * splits however long the job runs; a job restored later than {@code read.lease-timeout} after the
   * enumerator stopped may find the plan's files collected.
   */
  LanceContextSplitEnumerator(SplitEnumeratorContext<LanceContextSplit> context, List<LanceContextSplit> splits,
      Map<String, String> options, long plannedAtMillis) {
    this.context = context;
    this.pending = new ArrayDeque<>(splits);
    this.options = options;
    this.plannedAtMillis = plannedAtMillis;
  }

  @Override
  public void start() {
    store = ContextStore.open(options);
    lease = store.holdRead(Instant.ofEpochMilli(plannedAtMillis));
  }

  @Override
  public void handleSplitRequest(int subtask, String host) {
    LanceContextSplit next = pending.poll();
    if (next != null) {
      context.assignSplit(next, subtask);
    } else {
      context.signalNoMoreSplits(subtask);
    }
  }

  @Override
  public void addSplitsBack(List<LanceContextSplit> splits, int subtask) {
    splits.forEach(pending::addFirst);
  }

  @Override
  public void addReader(int subtask) {}

  @Override
  public PendingSplits snapshotState(long checkpointId) {
    return new PendingSplits(List.copyOf(pending), plannedAtMillis);
  }

  @Override
  public void close() {
    if (lease != null) {
      lease.close();
      store.close();
      lease = null;
    }
  }
}
