package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A durable WAL entry above the shard's replay position, decoded in memory. An entry that cannot be read
 * completely (a writer killed while writing it, see {@link WalEntry#read}) was never acknowledged: it
 * stands in the view as an entry without rows ({@link #incomplete()}), so every reader skips it.
 */
public final class WalSource extends FreshSource {
  private static final Logger LOG = LoggerFactory.getLogger(WalSource.class);
  /** Incomplete entries already reported in this JVM (store, path and size): one WARN per file. */
  private static final Set<String> REPORTED = ConcurrentHashMap.newKeySet();

  private final WalEntry entry;
  private final boolean incomplete;

  WalSource(String shardId, WalEntry entry) {
    this(shardId, entry, false);
  }

  private WalSource(String shardId, WalEntry entry, boolean incomplete) {
    super(shardId);
    this.entry = entry;
    this.incomplete = incomplete;
  }

  /**
   * Loads the entry at {@code position}; an incomplete one becomes an empty source, reported once per JVM
   * with a WARN naming the file ({@code store} names the store in it).
   *
   * @throws io.lancecontext.core.internal.io.StoreFiles.NotFound if the entry does not exist
   */
  static WalSource load(String store, StoreFiles files, String shardId, long position, BufferAllocator allocator)
      throws IOException {
    try {
      return new WalSource(shardId, WalEntry.read(files, shardId, position, allocator));
    } catch (WalEntry.Incomplete e) {
      if (REPORTED.add(store + "/" + WalEntry.path(shardId, position) + "@" + e.size())) {
        LOG.warn("{}: skipping {}: no put acknowledged it (a writer stopped while writing it); the next writer "
            + "of the shard moves it aside", store, e.getMessage());
      }
      return new WalSource(shardId, WalEntry.empty(position), true);
    }
  }

  /**
   * Fails if acknowledged rows are lost: an incomplete entry followed by a complete one (lance-core writes
   * an entry only after the previous put's entry is whole, so the broken one was acknowledged and damaged
   * later). {@code wal} is a shard's WAL tail in position order.
   *
   * @throws StorageException naming the entry
   */
  static void requireNoneLost(String store, String shardId, List<WalSource> wal) {
    for (int i = 0; i < wal.size() - 1; i++) {
      if (wal.get(i).incomplete && wal.subList(i + 1, wal.size()).stream().anyMatch(w -> !w.incomplete)) {
        throw new StorageException(store + ": WAL entry " + WalEntry.path(shardId, wal.get(i).entry.position())
            + " cannot be read completely but later entries exist: acknowledged rows of that entry are lost "
            + "(restore the file from a copy, or move it aside to accept the loss)", null);
      }
    }
  }

  public WalEntry entry() {
    return entry;
  }

  /** Whether the entry could not be read completely and stands here without rows. */
  public boolean incomplete() {
    return incomplete;
  }

  /** The highest write sequence in the entry (0 if it carries none). */
  public long maxSequence() {
    long max = 0;
    for (var batch : entry.batches()) {
      var seq = (BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
      for (int i = 0; seq != null && i < batch.getRowCount(); i++) {
        if (!seq.isNull(i)) {
          max = Math.max(max, seq.get(i));
        }
      }
    }
    return max;
  }

  @Override
  public String id() {
    return "wal:" + entry.position();
  }

  @Override
  public int rows() {
    return entry.rows();
  }

  @Override
  public long bytes() {
    long n = 256;
    for (var batch : entry.batches()) {
      for (var v : batch.getFieldVectors()) {
        n += v.getBufferSize();
      }
    }
    return n;
  }

  @Override
  void collectKeys(Set<String> out, Set<String> among) {
    for (var batch : entry.batches()) {
      var key = FreshShard.keyVector(batch);
      for (int r = 0; r < batch.getRowCount(); r++) {
        String k = new String(key.get(r), java.nio.charset.StandardCharsets.UTF_8);
        if (among == null || among.contains(k)) {
          out.add(k);
        }
      }
    }
  }

  @Override
  protected void free() {
    entry.close();
  }
}
