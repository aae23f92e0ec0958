package io.lancecontext.flink.source;

import io.lancecontext.core.read.ReadSplit;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * One split of a planned read (core's {@link ReadSplit}), plus how many of its rows a reader already
 * emitted: a split restored from a checkpoint is read again from its start and those rows are skipped
 * (a split reads one pinned snapshot, so it returns the same rows in the same order every time).
 */
public record LanceContextSplit(String id, ReadSplit split, long emitted) implements SourceSplit {
  @Override
  public String splitId() {
    return id;
  }

  LanceContextSplit withEmitted(long n) {
    return new LanceContextSplit(id, split, n);
  }
}
