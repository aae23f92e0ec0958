package io.lancecontext.core.internal.write;

import io.lancecontext.core.internal.txn.TxnIds;
import io.lancecontext.core.result.WriteSummary;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The rows one atomic write handle staged and has not yet written as parts, by bucket. Each added batch is
 * validated, deduplicated by key and split by bucket at once (bad input is refused whole, before anything
 * of it is kept); a bucket's rows are written as one part (one Lance dataset, one create and one commit)
 * only when the buffer holds more than {@code maxBytes} (the largest bucket goes first), when the bucket
 * holds {@code maxPartBytes} (a part must fit in one merge: {@code merge.max-bytes}), when a key comes again
 * in a bucket (a part holds one row per key), or on {@link #flush()}. So a handle writes parts of
 * about {@code maxBytes / buckets} or more instead of one per bucket and flush, and its memory stays
 * bounded by {@code maxBytes} (plus one batch) however many rows stream through it.
 *
 * <p>Order: a handle's parts of one bucket are numbered in the order they are written (the part
 * {@code index}), and each holds rows added after those of the parts before it, so the tie order of a
 * transaction ({@link io.lancecontext.core.internal.txn.TxnRecord#ORDER}) still makes the last row of a key
 * win. Not thread-safe (one handle, one thread); {@link #close()} drops what was not written.
 */
public final class StagingBuffer implements AutoCloseable {
  private final StoreWrites writes;
  private final String txid;
  private final String partId;
  private final long maxBytes;
  private final long maxPartBytes;
  /** Each written part renews the transaction by this (null: not renewed, the bulk path publishes at once). */
  private final java.time.Duration timeout;
  private final Map<Integer, Pending> pending = new TreeMap<>();
  private long bytes;
  private int nextIndex;

  private static final class Pending {
    final List<VectorSchemaRoot> batches = new ArrayList<>();
    /** The 64-bit hashes of the keys (see {@link KeyRoute}): equal ones mean a repeated key or a rare collision. */
    final LongSet keys;
    int rows;
    int deletes;
    long bytes;

    /** Presized for a few batches of {@code keys} keys. */
    Pending(int keys) {
      this.keys = new LongSet(keys * 4);
    }
  }

  StagingBuffer(StoreWrites writes, String txid, String partId, int firstIndex, long maxBytes, long maxPartBytes,
      java.time.Duration timeout) {
    this.writes = writes;
    this.timeout = timeout;
    this.txid = txid;
    this.partId = partId;
    this.nextIndex = firstIndex;
    this.maxBytes = maxBytes;
    this.maxPartBytes = maxPartBytes;
  }

  /**
   * Adds a batch in the dataset schema (validated here); does not close {@code batch}.
   *
   * @return the rows and deletes the batch holds after dedupe, and the parts written by this call
   */
  public StoreWrites.Staged add(VectorSchemaRoot batch, boolean owned) {
    List<StoreWrites.BucketRows> split = writes.splitForStaging(batch, owned);
    List<WriteSummary.StagedPart> written = new ArrayList<>();
    int rows = 0;
    int deletes = 0;
    int taken = 0;
    try {
      for (int i = 0; i < split.size(); i++) {
        StoreWrites.BucketRows b = split.get(i);
        rows += b.rows().getRowCount() - b.deletes();
        deletes += b.deletes();
        Pending p = pending.get(b.bucket());
        boolean keysAdded = false;
        if (p != null) {
          // one pass: the keys are added while looking for a repeated one; on a repeat the part is written
          // and its key set dropped with it (a hash collision only writes it sooner)
          boolean repeated = false;
          for (long k : b.keyHashes()) {
            repeated |= !p.keys.add(k);
          }
          keysAdded = !repeated;
          if (repeated) {
            written.add(write(b.bucket()));
            p = null;
          }
        }
        if (p == null) {
          p = new Pending(b.keyHashes().length);
          pending.put(b.bucket(), p);
        }
        long size = sizeOf(b.rows());
        p.batches.add(b.rows());
        if (!keysAdded) {
          p.keys.addAll(b.keyHashes());
        }
        p.rows += b.rows().getRowCount();
        p.deletes += b.deletes();
        p.bytes += size;
        bytes += size;
        taken++;
        if (p.bytes >= maxPartBytes) {
          written.add(write(b.bucket()));
        }
      }
      while (!pending.isEmpty() && bytes > maxBytes) {
        int largest = pending.entrySet().stream().max(java.util.Comparator.comparingLong(e -> e.getValue().bytes))
            .orElseThrow().getKey();
        written.add(write(largest));
      }
    } finally {
      for (int i = taken; i < split.size(); i++) {
        split.get(i).rows().close();  // only after a failed write
      }
    }
    return new StoreWrites.Staged(rows, deletes, written);
  }

  /** Writes every bucket's buffered rows as a part. */
  public StoreWrites.Staged flush() {
    List<WriteSummary.StagedPart> written = new ArrayList<>();
    for (int bucket : new ArrayList<>(pending.keySet())) {
      written.add(write(bucket));
    }
    return new StoreWrites.Staged(0, 0, written);
  }

  /** Bytes buffered and not yet written. */
  public long bytes() {
    return bytes;
  }

  private WriteSummary.StagedPart write(int bucket) {
    Pending p = pending.remove(bucket);
    bytes -= p.bytes;
    int index = nextIndex++;
    String name = TxnIds.newPartName(partId, index, System.currentTimeMillis());
    try {
      writes.writePart(txid, bucket, name, p.batches);
    } finally {
      p.batches.forEach(VectorSchemaRoot::close);
    }
    if (timeout != null) {
      writes.transactions().liveness().renew(txid, timeout);
    }
    return new WriteSummary.StagedPart(bucket, name, partId, index, p.rows - p.deletes, p.deletes);
  }

  private static long sizeOf(VectorSchemaRoot root) {
    long size = 0;
    for (FieldVector v : root.getFieldVectors()) {
      size += v.getBufferSize();
    }
    return size;
  }

  /** Drops what was not written. */
  @Override
  public void close() {
    pending.values().forEach(p -> p.batches.forEach(VectorSchemaRoot::close));
    pending.clear();
    bytes = 0;
  }
}
