package io.lancecontext.flink.source;

import io.lancecontext.core.read.ReadSplit;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * One split of a planned read (core's {@link ReadSplit}), plus how many of its rows a reader already
 * emitted: a split restored from a checkpoint is read again from its start and those rows are skipped
 * (a split reads pinned snapshots, so it returns the same rows in the same order every time).
 *
 * @param generation for a continuous source, the oldest of the source's positions the split reads (0: the first
 *     position, the snapshot read whole or the one {@code since} named; {@code g}: the changes from position
 *     {@code g} to {@code g + 1}); 0 for a bounded scan
 */
public record LanceContextSplit(String id, ReadSplit split, long emitted, long generation) implements SourceSplit {
  public LanceContextSplit(String id, ReadSplit split, long emitted) {
    this(id, split, emitted, 0);
  }

  @Override
  public String splitId() {
    return id;
  }

  LanceContextSplit withEmitted(long n) {
    return new LanceContextSplit(id, split, n, generation);
  }
}
