package io.lancecontext.core.internal.read;

import org.lance.Dataset;

/**
 * A flushed, not yet merged generation, or a published, not yet merged part of a transaction
 * ({@link #transactionPart()}): a small Lance dataset. Its keys are loaded once (in scan order)
 * so that lookups never scan it; rows are fetched by offset.
 */
public final class GenerationSource extends FreshSource {
  private final long generation;
  private final String path;
  private final Dataset dataset;
  private final String[] keys;
  private final long[] sequences;
  private final boolean[] tombstones;
  private final io.lancecontext.core.internal.txn.PublishedPart part;

  GenerationSource(String shardId, long generation, String path, Dataset dataset, String[] keys, long[] sequences,
      boolean[] tombstones) {
    this(shardId, generation, path, dataset, keys, sequences, tombstones, null);
  }

  GenerationSource(String shardId, long generation, String path, Dataset dataset, String[] keys, long[] sequences,
      boolean[] tombstones, io.lancecontext.core.internal.txn.PublishedPart part) {
    super(shardId);
    this.part = part;
    this.generation = generation;
    this.path = path;
    this.dataset = dataset;
    this.keys = keys;
    this.sequences = sequences;
    this.tombstones = tombstones;
  }

  /** The transaction part this source is (its rows read as its publish sequence), or null for a generation. */
  public io.lancecontext.core.internal.txn.PublishedPart transactionPart() {
    return part;
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
    return part != null ? part.id() : "gen:" + path;
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
