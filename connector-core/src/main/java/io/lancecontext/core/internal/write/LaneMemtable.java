package io.lancecontext.core.internal.write;

import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What a lane's open generation (the shard writer's memtable) holds: its keys, entries, rows and pinned
 * bytes, which decide when it is sealed. Not thread-safe: its {@link LaneWriter} uses it under the bucket's
 * lock.
 */
final class LaneMemtable {
  /** The 64-bit hashes of its keys ({@link KeyRoute}); a collision only seals a generation sooner. */
  private final LongSet keys = new LongSet(1024);
  private long entries;
  private long bytes;
  private long rows;
  private long firstPutNanos;

  long entries() {
    return entries;
  }

  long bytes() {
    return bytes;
  }

  long rows() {
    return rows;
  }

  long firstPutNanos() {
    return firstPutNanos;
  }

  /** Whether any key of those hashes ({@code keyHashes}) is in the generation. */
  boolean holdsAny(long[] keyHashes) {
    return keys.containsAny(keyHashes);
  }

  /** Counts an acknowledged put of {@code rowCount} rows pinning {@code putBytes}. */
  void add(long[] keyHashes, int rowCount, long putBytes) {
    if (entries == 0) {
      firstPutNanos = System.nanoTime();
    }
    keys.addAll(keyHashes);
    entries++;
    rows += rowCount;
    bytes += putBytes;
  }

  void reset() {
    keys.clear();
    entries = 0;
    bytes = 0;
    rows = 0;
  }

  /**
   * The memory a put of {@code batch} pins until its generation is sealed: lance-core 7.0.0 keeps the
   * imported Arrow buffers of every put in its memtable, at their allocated capacity, not their used
   * size (a one-row batch encoded at Arrow's default capacity of about 4,000 rows pins about 1.6 MB for
   * the 36-column rollout schema).
   */
  static long bytes(VectorSchemaRoot batch) {
    long b = 0;
    for (var v : batch.getFieldVectors()) {
      for (org.apache.arrow.memory.ArrowBuf buf : v.getBuffers(false)) {
        b += buf.capacity();
      }
    }
    return b;
  }
}
