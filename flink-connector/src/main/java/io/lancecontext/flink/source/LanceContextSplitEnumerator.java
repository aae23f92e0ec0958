package io.lancecontext.flink.source;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
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

  LanceContextSplitEnumerator(SplitEnumeratorContext<LanceContextSplit> context, List<LanceContextSplit> splits) {
    this.context = context;
    this.pending = new ArrayDeque<>(splits);
  }

  @Override
  public void start() {}

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
    return new PendingSplits(List.copyOf(pending));
  }

  @Override
  public void close() {}
}
