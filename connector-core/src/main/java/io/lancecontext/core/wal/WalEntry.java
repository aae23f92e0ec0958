package io.lancecontext.core.wal;

import io.lancecontext.core.io.StoreFiles;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.util.TransferPair;

/**
 * One durable WAL entry ({@code _mem_wal/<shard>/wal/<position>.arrow}): an Arrow IPC stream in the
 * dataset schema, written atomically (put-if-not-exists) by the shard writer with epoch
 * {@link #epoch()} before its put returned. An entry may hold several batches (a writer's first entry
 * also re-logs what it replayed); rows later in the entry are newer. Owns its batches.
 */
public final class WalEntry implements AutoCloseable {
  static final String EPOCH_METADATA = "writer_epoch";

  private final long position;
  private final long epoch;
  private final List<VectorSchemaRoot> batches;
  private final long bytes;

  private WalEntry(long position, long epoch, List<VectorSchemaRoot> batches, long bytes) {
    this.position = position;
    this.epoch = epoch;
    this.batches = batches;
    this.bytes = bytes;
  }

  public static String path(String shardId, long position) {
    return ShardLayout.walDir(shardId) + "/" + LogNames.name(position, LogNames.WAL_SUFFIX);
  }

  /** WAL positions present for a shard, ascending. */
  public static List<Long> positions(StoreFiles files, String shardId) throws IOException {
    List<Long> out = new ArrayList<>();
    for (String n : files.list(ShardLayout.walDir(shardId))) {
      long p = LogNames.number(n, LogNames.WAL_SUFFIX);
      if (p >= 0) {
        out.add(p);
      }
    }
    out.sort(null);
    return out;
  }

  public static WalEntry read(StoreFiles files, String shardId, long position, BufferAllocator allocator)
      throws IOException {
    byte[] content = files.read(path(shardId, position));
    List<VectorSchemaRoot> batches = new ArrayList<>();
    try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(content), allocator)) {
      VectorSchemaRoot source = reader.getVectorSchemaRoot();
      Map<String, String> metadata = source.getSchema().getCustomMetadata();
      String e = metadata == null ? null : metadata.get(EPOCH_METADATA);
      long epoch = e == null ? 0 : Long.parseLong(e);
      while (reader.loadNextBatch()) {
        batches.add(take(source, allocator));
      }
      return new WalEntry(position, epoch, batches, content.length);
    } catch (IOException | RuntimeException ex) {
      batches.forEach(VectorSchemaRoot::close);
      throw ex;
    }
  }

  /** Moves the reader's current batch into a root of its own (the reader reuses its root). */
  private static VectorSchemaRoot take(VectorSchemaRoot source, BufferAllocator allocator) {
    List<FieldVector> vectors = new ArrayList<>();
    for (FieldVector v : source.getFieldVectors()) {
      TransferPair tp = v.getTransferPair(allocator);
      tp.transfer();
      vectors.add((FieldVector) tp.getTo());
    }
    return new VectorSchemaRoot(source.getSchema().getFields(), vectors, source.getRowCount());
  }

  public long position() {
    return position;
  }

  public long epoch() {
    return epoch;
  }

  public List<VectorSchemaRoot> batches() {
    return batches;
  }

  /** Size of the entry on disk. */
  public long bytes() {
    return bytes;
  }

  public int rows() {
    return batches.stream().mapToInt(VectorSchemaRoot::getRowCount).sum();
  }

  @Override
  public void close() {
    batches.forEach(VectorSchemaRoot::close);
  }
}
