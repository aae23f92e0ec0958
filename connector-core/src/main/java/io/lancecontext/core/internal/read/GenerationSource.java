package io.lancecontext.core.internal.read;

import org.lance.Dataset;

/**
 * A flushed, not yet merged generation: a small Lance dataset. Its keys are loaded once (in scan order)
 * so that lookups never scan it; rows are fetched by offset.
 */
public final class GenerationSource extends FreshSource {
  private final long generation;
  private final String path;
  private final Dataset dataset;
  private final String[] keys;
  private final long[] sequences;
  private final boolean[] tombstones;

  GenerationSource(String shardId, long generation, String path, Dataset dataset, String[] keys, long[] sequences,
      boolean[] tombstones) {
    super(shardId);
    this.generation = generation;
    this.path = path;
    this.dataset = dataset;
    this.keys = keys;
    this.sequences = sequences;
    this.tombstones = tombstones;
  }

  /** Write sequence of a row. */
  public long sequence(int row) {
    return sequences[row];
  }

  public long generation() {
    return generation;
  }

  public String path() {
    return path;
  }

  public Dataset dataset() {
    return dataset;
  }

  /** Keys in row-offset order. */
  public String[] keys() {
    return keys;
  }

  public boolean tombstone(int row) {
    return tombstones != null && tombstones[row];
  }

  @Override
  public String id() {
    return "gen:" + path;
  }

  @Override
  public int rows() {
    return keys.length;
  }

  /** Keys (strings and array slots), sequences and flags, plus an allowance for the open dataset handle. */
  @Override
  public long bytes() {
    long n = 16 * 1024;
    for (String k : keys) {
      n += 56 + 2L * k.length();
    }
    return n + 9L * keys.length;
  }

  @Override
  void collectKeys(java.util.Set<String> out) {
    java.util.Collections.addAll(out, keys);
  }

  @Override
  protected void free() {
    dataset.close();
  }
}
