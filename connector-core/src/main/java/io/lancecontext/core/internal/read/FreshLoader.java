package io.lancecontext.core.internal.read;

import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.ShardManifest;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.session.StoreDatasets;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.internal.txn.PublishedPart;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads the fresh tier's sources from disk for the {@link FreshCache}: a WAL entry's rows, a flushed
 * generation's or a published transaction part's keys, write sequences and tombstones. Each call reads
 * once and returns a new source holding one reference; failures leave as the taxonomy's exceptions.
 */
final class FreshLoader {
  private static final Logger LOG = LoggerFactory.getLogger(FreshLoader.class);
  private final StoreConfig config;
  private final SchemaSpec spec;
  private final StoreFiles files;
  private final BufferAllocator allocator;
  private final StagedKeys staged;
  private final BaseKeyHashes keyHashes;
  private final int appendMinRows;

  FreshLoader(StoreConfig config, SchemaSpec spec, StoreFiles files, BufferAllocator allocator, StagedKeys staged,
      BaseKeyHashes keyHashes) {
    this.config = config;
    this.spec = spec;
    this.files = files;
    this.allocator = allocator;
    this.staged = staged;
    this.keyHashes = keyHashes;
    this.appendMinRows = config.get(StoreOptions.MERGE_APPEND_MIN_ROWS);
  }


  /** The WAL entry at {@code position} of a shard. */
  WalSource wal(String shardId, long position) {
    try {
      return WalSource.load(config.uri(), files, shardId, position, allocator);
    } catch (StoreFiles.NotFound e) {
      throw new io.lancecontext.core.error.StorageException(config.uri() + ": WAL entry " + WalEntry.path(shardId, position)
          + " was removed while it was read (garbage collection of a read older than gc.grace, or by hand)", e);
    } catch (IOException e) {
      throw LanceErrors.translate("read WAL entry " + WalEntry.path(shardId, position), e);
    }
  }

  /** Rows spread over a generation whose keys are checked against the WAL entries it was sealed from. */
  private static final int SAMPLE = 8;
  /** Generations indexed from the WAL entries they were sealed from, without reading their key columns. */
  private final java.util.concurrent.atomic.AtomicLong fromWal = new java.util.concurrent.atomic.AtomicLong();

  long generationsFromWal() {
    return fromWal.get();
  }

  /**
   * A flushed generation of a shard; with {@code sealed} (the WAL entries it was sealed from, in position order,
   * or null) its key, sequence and tombstone columns are taken from those entries instead of being read, when they
   * hold as many rows as the generation and the generation's keys at the first and last row of each of their batches
   * and at rows spread over it are theirs, in the order a flush writes them ({@link Known#of}). Otherwise they are
   * read.
   */
  GenerationSource generation(String shardId, ShardManifest.FlushedGeneration g, List<WalSource> sealed) {
    Known known = null;
    try {
      known = sealed == null ? null : Known.of(sealed);
    } catch (RuntimeException e) {
      // an entry this build cannot index: the generation is read, as without the entries
      LOG.debug("{}: generation {} read instead of indexed from its WAL entries: {}", config.uri(), g.path(),
          e.toString());
    }
    return loadDataset(shardId, config.uri() + "/" + ShardLayout.generationDir(shardId, g.path()), g.generation(),
        g.path(), null, known);
  }

  /** Keys, write sequences and tombstones of a source's rows known without reading it. */
  private record Known(StagedKeys.Keys keys, long[] sequences, java.util.SortedSet<Long> checks) {
    /** What the rows of these WAL entries are in the generation they were sealed into; checked against it. */
    static Known of(List<WalSource> entries) {
      int n = 0;
      boolean tombstones = false;
      for (WalSource w : entries) {
        n += w.rows();
        for (var batch : w.entry().batches()) {
          tombstones |= batch.getVector(SystemColumns.TOMBSTONE) != null;
        }
      }
      String[] keys = new String[n];
      long[] q = new long[n];
      boolean[] t = tombstones ? new boolean[n] : null;
      // lance-core 7.0.0 writes a flushed generation's rows newest first: the reverse of its puts, row by row.
      // Checked at the first and last row of every batch and at rows spread over the generation
      java.util.SortedSet<Long> checks = new java.util.TreeSet<>();
      for (int c = 0; c < SAMPLE && n > 0; c++) {
        checks.add((long) ((n - 1) * (double) c / (SAMPLE - 1)));
      }
      int i = 0;
      for (int e = entries.size() - 1; e >= 0; e--) {
        List<VectorSchemaRoot> batches = entries.get(e).entry().batches();
        for (int b = batches.size() - 1; b >= 0; b--) {
          VectorSchemaRoot batch = batches.get(b);
          if (batch.getRowCount() > 0) {
            checks.add((long) i);
            checks.add((long) i + batch.getRowCount() - 1);
          }
          VarCharVector key = FreshShard.keyVector(batch);
          var seq = (org.apache.arrow.vector.BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
          BitVector tomb = t == null ? null : (BitVector) batch.getVector(SystemColumns.TOMBSTONE);
          for (int r = batch.getRowCount() - 1; r >= 0; r--, i++) {
            keys[i] = new String(key.get(r), StandardCharsets.UTF_8);
            q[i] = seq == null || seq.isNull(r) ? 0L : seq.get(r);
            if (t != null) {
              t[i] = tomb != null && !tomb.isNull(r) && tomb.get(r) != 0;
            }
          }
        }
      }
      return new Known(new StagedKeys.Keys(keys, t), q, checks);
    }
  }

  /** A published transaction part of a shard's bucket; its rows all read as its publish sequence. */
  GenerationSource part(String shardId, PublishedPart part) {
    StagedKeys.Part kept = staged.take(part.path());
    if (kept != null && kept.rows() != null && kept.rows().rows() == kept.keys().keys().length) {
      return kept(shardId, part, kept);
    }
    if (kept != null && kept.rows() != null) {
      kept.rows().close();
    }
    try {
      return loadDataset(shardId, config.uri() + "/" + part.path(), -1, part.path(), part,
          kept == null ? null : new Known(kept.keys(), sequences(kept.keys(), part), null));
    } catch (LanceContextException e) {
      throw unreadable(part, e);
    }
  }

  /**
   * A part this JVM staged, from what it kept: its keys and rows as written, so that neither its key column is read
   * nor its dataset opened until a read needs more than the kept rows (lookups of them never do).
   */
  private GenerationSource kept(String shardId, PublishedPart part, StagedKeys.Part kept) {
    String uri = config.uri() + "/" + part.path();
    long[] q = sequences(kept.keys(), part);
    GenerationSource source;
    try {
      source = new GenerationSource(shardId, -1, part.path(), () -> {
        try {
          return StoreDatasets.open(uri, config, allocator);
        } catch (LanceContextException e) {
          throw unreadable(part, e);
        }
      }, kept.keys().keys(), q, kept.keys().tombstones(), part);
    } catch (RuntimeException | Error e) {
      kept.rows().close();
      throw e;
    }
    source.keepRows(kept.rows());
    expectInBase(kept.fragments().size() == 1 ? kept.fragments().get(0) : null, part, kept.keys());
    return source;
  }

  /** Each row's write sequence: a part's rows all read as its publish sequence. */
  private static long[] sequences(StagedKeys.Keys keys, PublishedPart part) {
    long[] q = new long[keys.keys().length];
    java.util.Arrays.fill(q, part.sequence());
    return q;
  }

  private StorageException unreadable(PublishedPart part, LanceContextException e) {
    return new StorageException(config.uri() + ": staged part " + part.path() + " of published transaction "
        + part.txid() + " cannot be read (removed by hand, or garbage-collected under a read older than gc.grace)", e);
  }

  /**
   * A generation, or with {@code part} a transaction part whose rows all read as its publish sequence; with
   * {@code known} (a part's keys, kept by this JVM when it staged it, or a generation's, from the WAL entries it
   * was sealed from) its key and system columns are not read.
   */
  private GenerationSource loadDataset(String shardId, String uri, long generation, String path,
      PublishedPart part, Known known) {
    LanceDataset ds = StoreDatasets.open(uri, config, allocator);
    try {
      List<LanceFragment> fragments = ds.fragments();
      long physical = 0;
      for (LanceFragment f : fragments) {
        physical += f.physicalRows();
      }
      String single = fragments.size() == 1 ? fragments.get(0).identity() : null;
      boolean hasTombstones = ds.hasColumn(SystemColumns.TOMBSTONE);
      // keys that do not match the dataset (its rows, its tombstone column, its keys at the checked rows) are left:
      // it is read
      if (known != null && known.keys().keys().length == physical
          && hasTombstones == (known.keys().tombstones() != null)
          && (known.checks() == null || keysMatch(ds, known.keys().keys(), known.checks()))) {
        StagedKeys.Keys keys = known.keys();
        if (known.checks() != null) {
          fromWal.incrementAndGet();
        }
        expectInBase(single, part, keys);
        return new GenerationSource(shardId, generation, path, ds, keys.keys(), known.sequences(), keys.tombstones(),
            part);
      }
      List<String> columns = new ArrayList<>();
      columns.add(spec.key());
      if (hasTombstones) {
        columns.add(SystemColumns.TOMBSTONE);
      }
      if (part == null) {
        columns.add(SystemColumns.SEQUENCE);  // a part's rows all read as its publish sequence
      }
      int capacity = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(16, physical));
      String[] keys = new String[capacity];
      boolean[] t = hasTombstones ? new boolean[capacity] : null;
      long[] q = new long[capacity];
      int n = 0;
      try (ScanHandle scan = ds.scan(ScanRequest.of(columns))) {
        ArrowReader reader = scan.reader();
        while (reader.loadNextBatch()) {
          VectorSchemaRoot batch = reader.getVectorSchemaRoot();
          VarCharVector key = (VarCharVector) batch.getVector(spec.key());
          BitVector tomb = hasTombstones ? (BitVector) batch.getVector(SystemColumns.TOMBSTONE) : null;
          org.apache.arrow.vector.BigIntVector seq = part != null ? null
              : (org.apache.arrow.vector.BigIntVector) batch.getVector(SystemColumns.SEQUENCE);
          int rows = batch.getRowCount();
          if (n + rows > keys.length) {  // more rows than the fragments said (never expected): grow
            int grown = Math.max(n + rows, keys.length * 2);
            keys = java.util.Arrays.copyOf(keys, grown);
            q = java.util.Arrays.copyOf(q, grown);
            t = t == null ? null : java.util.Arrays.copyOf(t, grown);
          }
          for (int r = 0; r < rows; r++, n++) {
            keys[n] = new String(key.get(r), StandardCharsets.UTF_8);
            if (t != null) {
              t[n] = !tomb.isNull(r) && tomb.get(r) != 0;
            }
            q[n] = part != null ? part.sequence() : seq.isNull(r) ? 0L : seq.get(r);
          }
        }
      }
      if (n < keys.length) {
        keys = java.util.Arrays.copyOf(keys, n);
        q = java.util.Arrays.copyOf(q, n);
        t = t == null ? null : java.util.Arrays.copyOf(t, n);
      }
      expectInBase(single, part, new StagedKeys.Keys(keys, t));
      return new GenerationSource(shardId, generation, path, ds, keys, q, t, part);
    } catch (Exception e) {
      ds.close();
      throw LanceErrors.translate("read generation " + path + " of shard " + shardId, e);
    }
  }

  /** Whether the dataset's keys at the offsets {@code checks} are {@code keys}' at the same offsets. */
  private boolean keysMatch(LanceDataset ds, String[] keys, java.util.SortedSet<Long> checks) {
    if (checks.isEmpty()) {
      return true;
    }
    List<Long> at = new ArrayList<>(checks);
    int i = 0;
    try (ArrowReader reader = ds.take(at, List.of(spec.key()))) {
      while (reader.loadNextBatch()) {
        VarCharVector key = (VarCharVector) reader.getVectorSchemaRoot().getVector(spec.key());
        for (int r = 0; r < reader.getVectorSchemaRoot().getRowCount(); r++, i++) {
          if (i >= at.size() || !keys[at.get(i).intValue()].equals(new String(key.get(r), StandardCharsets.UTF_8))) {
            return false;
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("{}: checking a generation's keys against its WAL entries failed, it is read: {}", config.uri(),
          e.toString());
      return false;
    }
    return i == at.size();
  }

  /**
   * Tells the base's key hashes the keys of a published part large enough for a merge to append its one data file
   * to the base as it is ({@code merge.append-min-rows}), so that the new base fragment's hashes need no read;
   * {@code fragment} is the identity of the part's one fragment (null: it has several).
   */
  private void expectInBase(String fragment, PublishedPart part, StagedKeys.Keys keys) {
    if (part != null && keyHashes != null && keys.keys().length >= appendMinRows && fragment != null) {
      keyHashes.expect(fragment, keys);
    }
  }
}
