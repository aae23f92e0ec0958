package io.lancecontext.core.internal.lance;

import io.lancecontext.core.internal.io.StoreFiles;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel;
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

  /**
   * Reads and decodes one entry.
   *
   * @throws Incomplete if the file cannot be read completely (empty, truncated, or not an Arrow IPC
   *     stream ending with its end-of-stream marker): lance-core writes an entry whole before a durable
   *     put returns, so such an entry was never acknowledged
   * @throws io.lancecontext.core.internal.io.StoreFiles.NotFound if the entry does not exist
   */
  public static WalEntry read(StoreFiles files, String shardId, long position, BufferAllocator allocator)
      throws IOException {
    return decode(shardId, position, files.read(path(shardId, position)), allocator);
  }

  /** Decodes the content of an entry; see {@link #read}. */
  static WalEntry decode(String shardId, long position, byte[] content, BufferAllocator allocator) throws Incomplete {
    if (!endsWithEndOfStream(content)) {
      throw new Incomplete(shardId, position, content.length, content.length == 0 ? "the file is empty"
          : "the Arrow IPC stream has no end-of-stream marker (truncated)", null);
    }
    List<VectorSchemaRoot> batches = new ArrayList<>();
    // a channel over the bytes, not Channels.newChannel(InputStream): that one is interruptible, so an interrupted
    // thread (a cancelled task) would fail to decode a whole entry and judge it incomplete (its rows skipped by a
    // read, the entry moved aside by WalRepair)
    try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayReadableSeekableByteChannel(content), allocator)) {
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
      throw new Incomplete(shardId, position, content.length, "the Arrow IPC stream cannot be decoded: " + ex, ex);
    }
  }

  /** Whether {@code content} decodes completely (see {@link #read}); decoded batches are freed at once. */
  static boolean isComplete(String shardId, long position, byte[] content, BufferAllocator allocator) {
    try (WalEntry ignored = decode(shardId, position, content, allocator)) {
      return true;
    } catch (Incomplete e) {
      return false;
    }
  }

  /** An Arrow IPC stream ends with the continuation marker {@code 0xFFFFFFFF} and a zero length. */
  private static boolean endsWithEndOfStream(byte[] c) {
    int n = c.length;
    if (n < 8) {
      return false;
    }
    for (int i = n - 8; i < n - 4; i++) {
      if (c[i] != (byte) 0xFF) {
        return false;
      }
    }
    for (int i = n - 4; i < n; i++) {
      if (c[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /** An entry with no rows, standing for one that cannot be read completely (see {@link #read}). */
  public static WalEntry empty(long position) {
    return new WalEntry(position, 0, List.of(), 0);
  }

  /** A WAL entry that cannot be read completely, so was never acknowledged (see {@link #read}). */
  public static final class Incomplete extends IOException {
    private static final long serialVersionUID = 1L;
    private final long size;

    Incomplete(String shardId, long position, long size, String why, Throwable cause) {
      super("WAL entry " + path(shardId, position) + " (" + size + " bytes) cannot be read completely: " + why, cause);
      this.size = size;
    }

    /** Size of the file when it was read. */
    public long size() {
      return size;
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
