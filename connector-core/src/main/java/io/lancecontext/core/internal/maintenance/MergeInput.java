package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.ShardLayout;

/**
 * One input of a merge, open for reading: a flushed generation ({@code sequence} -1), or a published
 * transaction part ({@code sequence} >= 0: every row reads as it). The merge that opened it closes it.
 */
record MergeInput(String shardId, long generation, String path, LanceDataset dataset, long sequence) {
  MergeInput(String shardId, long generation, String path, LanceDataset dataset) {
    this(shardId, generation, path, dataset, -1);
  }

  /** Whether this is a published transaction part (not a flushed generation). */
  boolean isPart() {
    return sequence >= 0;
  }

  /** The dataset's directory relative to the store root. */
  String dir() {
    return isPart() ? path : ShardLayout.generationDir(shardId, path);
  }
}
