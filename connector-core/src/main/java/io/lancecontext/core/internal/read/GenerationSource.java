package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.RowCopier;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.txn.StagedRows;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A flushed, not yet merged generation, or a published, not yet merged part of a transaction
 * ({@link #transactionPart()}): a small Lance dataset. Its keys are loaded once (in scan order)
 * so that lookups never scan it; rows are fetched by offset.
 */
public final class GenerationSource extends FreshSource {
  private final long generation;
  private final String path;
  /** Opens the dataset on first use (null once open, or when it was given open). */
  private java.util.function.Supplier<LanceDataset> opener;
  private LanceDataset dataset;
  private final Object datasetLock = new Object();
  private final String[] keys;
  private final long[] sequences;
  private final boolean[] tombstones;
  private final io.lancecontext.core.internal.txn.PublishedPart part;
  /** Each key's first row in offset order (its newest: see {@link FreshShard}). */
  private final java.util.Map<String, Integer> firstRows;
  private final long maxSequence;
  /** The rows naming a {@code supersedes} key (offset → value), read once; null until then. */
  private volatile Map<Integer, String> superseding;

  GenerationSource(String shardId, long generation, String path, LanceDataset dataset, String[] keys, long[] sequences,
      boolean[] tombstones) {
    this(shardId, generation, path, dataset, keys, sequences, tombstones, null);
  }

  GenerationSource(String shardId, long generation, String path, LanceDataset dataset, String[] keys, long[] sequences,
      boolean[] tombstones, io.lancecontext.core.internal.txn.PublishedPart part) {
    this(shardId, generation, path, (java.util.function.Supplier<LanceDataset>) null, keys, sequences, tombstones,
        part);
    this.dataset = dataset;
  }

  /**
   * A part whose keys (and rows: {@link #keepRows}) this JVM kept when it staged it: its dataset is opened by
   * {@code opener} when a read first needs it (a lookup of kept rows never does; an open took 10–57 ms of the
   * first lookup after a Flink checkpoint's publish).
   */
  GenerationSource(String shardId, long generation, String path, java.util.function.Supplier<LanceDataset> opener,
      String[] keys, long[] sequences, boolean[] tombstones, io.lancecontext.core.internal.txn.PublishedPart part) {
    super(shardId);
    this.opener = opener;
    this.part = part;
    this.generation = generation;
    this.path = path;
    this.keys = keys;
    this.sequences = sequences;
    this.tombstones = tombstones;
    this.firstRows = new java.util.HashMap<>(keys.length * 4 / 3 + 1);
    long max = 0;
    for (int r = 0; r < keys.length; r++) {
      firstRows.putIfAbsent(keys[r], r);
      max = Math.max(max, sequences[r]);
    }
    this.maxSequence = max;
  }

  /**
   * The first row of {@code key} in offset order, or -1. Inside one generation that is the key's newest row
   * (lance-core writes a memtable out newest-first); lancecontext never writes a key twice into one
   * generation or part, so this only matters for foreign writers.
   */
  int firstRow(String key) {
    Integer r = firstRows.get(key);
    return r == null ? -1 : r;
  }

  /** Each key with its {@link #firstRow}. */
  java.util.Map<String, Integer> firstRows() {
    return firstRows;
  }

  /**
   * The rows of this generation that name a key they supersede (row offset → that key), read by {@code read}
   * the first time only: a generation never changes, and every read of a store with supersession needs them.
   */
  Map<Integer, String> superseding(Function<GenerationSource, Map<Integer, String>> read) {
    Map<Integer, String> s = superseding;
    if (s == null) {
      s = read.apply(this);
      superseding = s;
    }
    return s;
  }

  /** Bytes of staged rows all parts of this JVM hold ({@link #keepRows}), at most. */
  static final long STAGED_BYTES_MAX = 128L << 20;
  private static final AtomicLong STAGED_BYTES = new AtomicLong();
  private volatile StagedRows staged;

  /**
   * Holds {@code rows}, this part's rows as this JVM staged them (in row order), until this source is freed, so that
   * lookups copy them instead of reading the part; closes them instead when the JVM's parts hold
   * {@link #STAGED_BYTES_MAX} already. Takes them over either way.
   */
  synchronized void keepRows(StagedRows rows) {
    if (staged != null || STAGED_BYTES.addAndGet(rows.bytes()) > STAGED_BYTES_MAX) {
      if (staged == null) {
        STAGED_BYTES.addAndGet(-rows.bytes());
      }
      rows.close();
      return;
    }
    staged = rows;
  }

  /** This part's rows in memory ({@link #keepRows}), or null: read them from the dataset. */
  StagedRows stagedRows() {
    return staged;
  }

  /** Column lists of {@link #kept} batches, at most {@value #MAX_KEPT}. */
  static final int MAX_KEPT = 4;
  /** Bytes all generations of this JVM keep for searches ({@link #kept}), at most; beyond it they are read each time. */
  static final long KEPT_BYTES_MAX = 256L << 20;
  private static final AtomicLong KEPT_BYTES = new AtomicLong();
  private long keptBytes;
  private final Map<List<String>, VectorSchemaRoot> kept = new HashMap<>();

  /**
   * Every row of {@code columns} (and the row ids), read the first time and kept until this source is freed, for
   * reads that repeat (searches); null when {@value #MAX_KEPT} other column lists are kept already, or when keeping
   * it would take the JVM's kept bytes over {@link #KEPT_BYTES_MAX} (the caller reads the generation itself).
   * Shared: callers read it, never change or close it.
   */
  synchronized VectorSchemaRoot kept(List<String> columns,
      BufferAllocator allocator) {
    if (kept.containsKey(columns) || kept.size() >= MAX_KEPT) {
      return kept.get(columns);  // null when refused before: read each time
    }
    VectorSchemaRoot root = readAll(columns, allocator);
    if (root == null) {
      return null;
    }
    long bytes = 0;
    for (FieldVector v : root.getFieldVectors()) {
      bytes += v.getBufferSize();
    }
    if (KEPT_BYTES.addAndGet(bytes) > KEPT_BYTES_MAX) {
      KEPT_BYTES.addAndGet(-bytes);
      root.close();
      kept.put(List.copyOf(columns), null);
      return null;
    }
    keptBytes += bytes;
    kept.put(List.copyOf(columns), root);
    return root;
  }

  private VectorSchemaRoot readAll(List<String> columns,
      BufferAllocator allocator) {
    List<VectorSchemaRoot> parts = new ArrayList<>();
    List<String> read = new ArrayList<>(columns);
    read.add(RowIds.ROW_ID);
    try (ScanHandle scan = dataset().scan(
        ScanRequest.of(columns).withRowId(true))) {
      while (scan.reader().loadNextBatch()) {
        parts.add(RowCopier.transfer(scan.reader().getVectorSchemaRoot(), read, allocator));
      }
      if (parts.size() == 1) {
        return parts.remove(0);
      }
      if (parts.isEmpty()) {
        return null;
      }
      return RowCopier.concat(parts, allocator);
    } catch (Exception e) {
      throw LanceErrors.translate("read generation " + generation, e);
    } finally {
      parts.forEach(VectorSchemaRoot::close);
    }
  }

  /** The highest write sequence of any row (0 if none). */
  long maxSequence() {
    return maxSequence;
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

  /** The dataset, opened now if it is not yet (failures as the taxonomy's exceptions). */
  public LanceDataset dataset() {
    synchronized (datasetLock) {
      if (dataset == null) {
        dataset = opener.get();
        opener = null;
      }
      return dataset;
    }
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

  /**
   * Keys (strings and array slots), sequences and flags, the key index, plus an allowance for the open
   * dataset handle.
   */
  @Override
  public long bytes() {
    long n = 16 * 1024;
    for (String k : keys) {
      n += 56 + 2L * k.length();
    }
    return n + (9L + 64L) * keys.length;
  }

  @Override
  void collectKeys(java.util.Set<String> out, java.util.Set<String> among) {
    if (among == null) {
      java.util.Collections.addAll(out, keys);
      return;
    }
    for (String k : among) {
      if (firstRows.containsKey(k)) {
        out.add(k);
      }
    }
  }

  @Override
  protected void free() {
    synchronized (this) {
      kept.values().forEach(r -> {
        if (r != null) {
          r.close();
        }
      });
      kept.clear();
      KEPT_BYTES.addAndGet(-keptBytes);
      keptBytes = 0;
      if (staged != null) {
        STAGED_BYTES.addAndGet(-staged.bytes());
        staged.close();
        staged = null;
      }
    }
    synchronized (datasetLock) {
      if (dataset != null) {
        dataset.close();
      }
    }
  }
}
