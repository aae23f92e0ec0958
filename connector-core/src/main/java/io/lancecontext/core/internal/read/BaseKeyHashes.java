package io.lancecontext.core.internal.read;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.lancecontext.core.internal.lance.KeyIndexCoverage;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.txn.StagedKeys;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hashes of the keys of each base fragment, with which a lookup by key reads only the fragments that may
 * hold one of its keys. A filtered query costs Lance about the rows of every fragment it reads: the key
 * index's pages it searches (all of them for keys spread over the key space: 200 absent keys took 31–50 ms
 * in a 250,000–400,000-row base) and every row of the fragments the index does not cover yet (merges append
 * them until the index is rebuilt at a tenth of the table). A reader polling for keys the store does not
 * hold yet now reads no fragment at all, and a lookup of keys that exist reads the fragments holding them.
 *
 * <p>Each fragment's keys are read once per JVM, on a background thread (a lookup never waits for them:
 * until they are there, the fragment is read as before), and kept as a sorted array of 64-bit hashes
 * with each row's offset ({@link KeyHashSet}, up to 14 bytes per row) in a cache bounded by bytes. Every fragment is hashed while the whole table fits the
 * bound, else only those the index does not cover while they fit, else none. A hash collision costs a
 * read of the fragment, never a row.
 *
 * <p>A fragment's entry is named by its first data file and its deletion file ({@link LanceFragment#identity}):
 * the hashes are those of the rows live when they were read, and a fragment with more deletions (a merge
 * replaced some of its rows) is read again, so that a lookup of an older version never misses a row deleted
 * later. Thread-safe.
 */
final class BaseKeyHashes implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BaseKeyHashes.class);
  /** How long {@link #close()} waits for a fragment read in flight. */
  private static final long CLOSE_WAIT_SECONDS = 30;
  /**
   * A count-only read asks for the hashes of fragments of at least this many rows only: reading a smaller one
   * costs about what hashing it does, and a store that changes between counts would keep the reader thread busy.
   */
  static final long MIN_ROWS_HASHED_FOR_COUNTS = 8_192;
  /** What a row's hash and offset cost, for deciding which fragments fit the bound. */
  private static final long BYTES_PER_ROW = 14;

  /**
   * The one thread of the JVM that reads fragments' keys, for every store, in the order asked (idle, it
   * ends after 30 s). It carries this library's class loader as context, never that of the caller that
   * happened to start it.
   */
  private static final ExecutorService READERS = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS,
      new LinkedBlockingQueue<>(), r -> {
        Thread t = new Thread(r, "lancecontext-key-hashes");
        t.setDaemon(true);
        t.setContextClassLoader(BaseKeyHashes.class.getClassLoader());
        return t;
      });

  static {
    ((ThreadPoolExecutor) READERS).allowCoreThreadTimeOut(true);
  }

  private final long maxBytes;
  private final Cache<String, FragmentKeys> byFragment;
  /**
   * The keys of published parts a merge may append to the base as they are (their one data file becomes a base
   * fragment, Merger's whole parts), by the identity that fragment will have: its hashes are made from them when a
   * lookup first needs them instead of read on the background thread, until when every lookup searches the base
   * through Lance (44-250 ms each after a merge in docs/performance.md, "Freshness: staged keys...").
   */
  private final Cache<String, Expected> expected;

  /** Keys {@link #expect}ed for a fragment, and their hashes: made on the background thread, or by who needs them. */
  private record Expected(StagedKeys.Keys keys, java.util.concurrent.FutureTask<FragmentKeys> hashes) {
    FragmentKeys get() {
      hashes.run();  // no-op once made or while the background thread makes them (then wait for it)
      try {
        return hashes.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      } catch (ExecutionException e) {
        return null;
      }
    }
  }
  /** Fragments (by identity) whose keys are being read or queued. */
  private final Set<String> reading = ConcurrentHashMap.newKeySet();
  private final Set<Future<?>> inFlight = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** @param maxBytes bound of the hashes kept (up to 14 bytes per row) */
  BaseKeyHashes(long maxBytes) {
    this.maxBytes = maxBytes;
    this.byFragment = Caffeine.newBuilder()
        .maximumWeight(maxBytes)
        .weigher((String k, FragmentKeys v) -> (int) Math.min(Integer.MAX_VALUE, v.hashes().bytes() + k.length() + 72))
        .executor(Runnable::run)
        .build();
    this.expected = Caffeine.newBuilder()
        .maximumWeight(maxBytes)
        .weigher((String k, Expected v) -> (int) Math.min(Integer.MAX_VALUE,
            v.keys().bytes() + 12L * v.keys().keys().length + k.length() + 72))
        .executor(Runnable::run)
        .build();
  }

  /**
   * Keeps the keys (in row order, with their tombstone flags) of a published part whose one data file a merge may
   * append to the base as the fragment {@code identity} ({@link LanceFragment#identity}).
   */
  void expect(String identity, StagedKeys.Keys keys) {
    Expected e = new Expected(keys, new java.util.concurrent.FutureTask<>(() -> hash(keys)));
    expected.put(identity, e);
    if (!closed) {
      // made before the merge that appends the part, so that the first lookup after it does not hash
      // (100,000 keys after a merge of 8 parts: 13-66 ms of a lookup)
      READERS.execute(e.hashes());
    }
  }

  private static FragmentKeys hash(StagedKeys.Keys keys) {
    long[] hashes = KeyHashSet.hashes(Arrays.asList(keys.keys()));
    int[] offsets = new int[hashes.length];
    long tombstones = 0;
    for (int r = 0; r < hashes.length; r++) {
      offsets[r] = r;
      tombstones += keys.tombstones() != null && keys.tombstones()[r] ? 1 : 0;
    }
    return new FragmentKeys(new KeyHashSet(hashes, offsets), tombstones);
  }

  /** The hashes of {@code f}: read before, or made from keys {@link #expect}ed for it; null if neither. */
  private FragmentKeys known(LanceFragment f) {
    String id = f.identity();
    FragmentKeys known = byFragment.getIfPresent(id);
    if (known != null) {
      return known;
    }
    Expected e = expected.getIfPresent(id);
    if (e == null || e.keys().keys().length != f.physicalRows() || f.deletedRows() != 0) {
      return null;
    }
    FragmentKeys made = e.get();
    if (made != null) {
      expected.invalidate(id);
      byFragment.put(id, made);
    }
    return made;
  }

  /**
   * What a fragment's hashes were read from: the hashes of its live rows' keys and how many of those rows are
   * tombstones (a count-only read counts the others without reading the fragment).
   */
  record FragmentKeys(KeyHashSet hashes, long tombstones) {
    /** Live rows that are not tombstones. */
    long records() {
      return hashes.size() - tombstones;
    }
  }

  /**
   * The fragments of {@code base} a filtered query for {@code keys} must read: those whose hashes hold a
   * hash of one of the keys and those not hashed (yet); null when that is every fragment. Empty when no
   * fragment can hold any of the keys. Asks for the hashes of fragments that lack them.
   */
  List<Integer> fragmentsFor(BaseTable base, SchemaSpec spec, Collection<String> keys) {
    KeyIndexCoverage coverage = base.keyIndexCoverage(spec);
    boolean every = BYTES_PER_ROW * coverage.rows() <= maxBytes;
    if (coverage.fragments().isEmpty() || (!every && BYTES_PER_ROW * coverage.uncoveredRows() > maxBytes)) {
      return null;
    }
    long[] wanted = KeyHashSet.hashes(keys);
    List<Integer> read = new ArrayList<>();
    Map<Integer, String> missing = new HashMap<>();
    for (LanceFragment f : coverage.fragments()) {
      if (!every && coverage.coveredIds().contains(f.id())) {
        read.add(f.id());
        continue;
      }
      FragmentKeys known = known(f);
      if (known == null) {
        read.add(f.id());
        missing.put(f.id(), f.identity());
      } else if (known.hashes().containsAny(wanted)) {
        read.add(f.id());
      }
    }
    if (!missing.isEmpty()) {
      readLater(base, spec, missing);
    }
    return read.size() == coverage.fragments().size() ? null : read;
  }

  /**
   * The row addresses of the base rows whose key hash is one of {@code keys}' (their live rows, plus a row for each
   * hash collision), ascending: a lookup takes them without searching. Null unless every fragment of {@code base}
   * is hashed (asking for the hashes of those that are not): then the lookup searches ({@link #fragmentsFor}).
   */
  long[] addressesFor(BaseTable base, SchemaSpec spec, Collection<String> keys) {
    KeyIndexCoverage coverage = base.keyIndexCoverage(spec);
    if (coverage.fragments().isEmpty() || BYTES_PER_ROW * coverage.rows() > maxBytes) {
      return null;
    }
    long[] wanted = KeyHashSet.hashes(keys);
    long[][] found = {new long[Math.max(4, wanted.length)]};
    int[] count = {0};
    Map<Integer, String> missing = new HashMap<>();
    for (LanceFragment f : coverage.fragments()) {
      if (f.stableRowIds()) {
        return null;  // takeRows takes ids, which are then not addresses
      }
      FragmentKeys known = known(f);
      if (known == null) {
        missing.put(f.id(), f.identity());
        continue;
      }
      long fragment = (long) f.id() << 32;
      for (long w : wanted) {
        known.hashes().offsetsOf(w, offset -> {
          if (count[0] == found[0].length) {
            found[0] = Arrays.copyOf(found[0], 2 * count[0]);
          }
          found[0][count[0]++] = fragment | (offset & 0xffffffffL);
        });
      }
    }
    if (!missing.isEmpty()) {
      readLater(base, spec, missing);
      return null;
    }
    long[] out = Arrays.copyOf(found[0], count[0]);
    Arrays.sort(out);
    return out;
  }

  /**
   * The records (live rows, tombstones excluded) of each of {@code fragmentIds} (null: every fragment of
   * {@code base}) whose hashes are known and hold no hash of {@code freshKeys}: a count-only read counts them
   * without reading them. A fragment whose hashes share one with the fresh keys (a key the fresh tier may hold,
   * or a collision) is left out and read; so is one not hashed yet, whose hashes are asked for when it holds at
   * least {@value #MIN_ROWS_HASHED_FOR_COUNTS} rows.
   */
  Map<Integer, Long> countable(BaseTable base, SchemaSpec spec, List<Integer> fragmentIds, KeyHashSet freshKeys) {
    KeyIndexCoverage coverage = base.keyIndexCoverage(spec);
    boolean every = BYTES_PER_ROW * coverage.rows() <= maxBytes;
    if (coverage.fragments().isEmpty() || (!every && BYTES_PER_ROW * coverage.uncoveredRows() > maxBytes)) {
      return Map.of();
    }
    Set<Integer> wanted = fragmentIds == null ? null : Set.copyOf(fragmentIds);
    Map<Integer, Long> out = new HashMap<>();
    Map<Integer, String> missing = new HashMap<>();
    for (LanceFragment f : coverage.fragments()) {
      if ((wanted != null && !wanted.contains(f.id())) || (!every && coverage.coveredIds().contains(f.id()))) {
        continue;
      }
      FragmentKeys known = known(f);
      if (known == null) {
        if (f.rows() >= MIN_ROWS_HASHED_FOR_COUNTS) {
          missing.put(f.id(), f.identity());
        }
      } else if (freshKeys == null || !known.hashes().intersects(freshKeys)) {
        out.put(f.id(), known.records());
      }
    }
    if (!missing.isEmpty()) {
      readLater(base, spec, missing);
    }
    return out;
  }

  /** Queues a read of the keys of {@code fragments} (id → identity) not already queued. */
  private void readLater(BaseTable base, SchemaSpec spec, Map<Integer, String> fragments) {
    Map<Integer, String> mine = new HashMap<>();
    fragments.forEach((f, id) -> {
      if (reading.add(id)) {
        mine.put(f, id);
      }
    });
    if (mine.isEmpty() || closed || !base.retain()) {
      mine.values().forEach(reading::remove);
      return;
    }
    Future<?>[] self = new Future<?>[1];
    Runnable task = () -> {
      try {
        if (!closed) {
          load(base.dataset(), spec, mine.keySet()).forEach((f, hashes) -> byFragment.put(mine.get(f), hashes));
        }
      } catch (RuntimeException e) {
        LOG.debug("could not read the keys of base fragments {} of {}: {}", mine.keySet(), base.dataset().uri(), e.toString());
      } finally {
        base.release();
        mine.values().forEach(reading::remove);
        synchronized (self) {
          if (self[0] != null) {
            inFlight.remove(self[0]);
          }
        }
      }
    };
    synchronized (self) {
      try {
        self[0] = READERS.submit(task);
        inFlight.add(self[0]);
      } catch (RuntimeException e) {  // rejected: the JVM is shutting down
        base.release();
        mine.values().forEach(reading::remove);
      }
    }
  }

  /** What the cache holds, for stats. */
  io.lancecontext.core.result.StoreStats.KeyHashes footprint() {
    long bytes = byFragment.policy().eviction().map(e -> e.weightedSize().orElse(0L)).orElse(0L);
    return new io.lancecontext.core.result.StoreStats.KeyHashes(bytes, maxBytes, byFragment.estimatedSize());
  }

  /** Waits until every read asked for so far has ended (tests). */
  static void awaitReads() throws Exception {
    READERS.submit(() -> { }).get(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /**
   * Stops asking for reads and waits (at most {@value #CLOSE_WAIT_SECONDS} s) for those of this store in
   * flight, which use the store's allocator.
   */
  @Override
  public void close() {
    closed = true;
    for (Future<?> f : List.copyOf(inFlight)) {
      try {
        f.get(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (ExecutionException | TimeoutException | java.util.concurrent.CancellationException e) {
        LOG.debug("a read of base fragment keys did not end: {}", e.toString());
      }
    }
    byFragment.invalidateAll();
    expected.invalidateAll();
  }

  /**
   * The sorted key hashes of each of {@code fragments} (every one, empty ones included) and its tombstone rows,
   * in one scan.
   */
  private static Map<Integer, FragmentKeys> load(LanceDataset ds, SchemaSpec spec, Collection<Integer> fragments) {
    Map<Integer, Collected> collected = new HashMap<>();
    for (int f : fragments) {
      collected.put(f, new Collected());
    }
    boolean flagged = spec.has(Capability.TOMBSTONES);
    List<String> columns = flagged ? List.of(spec.key(), SystemColumns.TOMBSTONE) : List.of(spec.key());
    ScanRequest request = ScanRequest.of(columns).fragments(new ArrayList<>(fragments)).withRowAddress(true);
    try (ScanHandle scan = ds.scan(request)) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        VectorSchemaRoot in = reader.getVectorSchemaRoot();
        FieldVector addresses = in.getVector(RowIds.ROW_ADDRESS);
        VarCharVector key = (VarCharVector) in.getVector(spec.key());
        BitVector tombstone = flagged ? (BitVector) in.getVector(SystemColumns.TOMBSTONE) : null;
        Collected into = null;
        int intoFragment = -1;
        for (int r = 0; r < in.getRowCount(); r++) {
          long address = RowIds.get(addresses, r);
          int f = RowIds.fragmentOf(address);
          if (f != intoFragment) {  // a scan's rows come fragment by fragment: one map lookup per run of them
            into = collected.get(f);
            intoFragment = f;
          }
          into.add(KeyHashSet.hash(key, r), RowIds.offsetOf(address),
              tombstone != null && !tombstone.isNull(r) && tombstone.get(r) != 0);
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("read the keys of " + fragments.size() + " base fragments", e);
    }
    Map<Integer, FragmentKeys> out = new HashMap<>();
    collected.forEach((f, c) -> out.put(f, c.keys()));
    return out;
  }

  /** One fragment's key hashes and row offsets as a scan reads them, and its tombstone rows. */
  private static final class Collected {
    private long[] hashes = new long[1024];
    private int[] offsets = new int[1024];
    private int count;
    private long tombstones;

    void add(long hash, int offset, boolean tombstone) {
      if (count == hashes.length) {
        hashes = Arrays.copyOf(hashes, 2 * count);
        offsets = Arrays.copyOf(offsets, 2 * count);
      }
      hashes[count] = hash;
      offsets[count++] = offset;
      tombstones += tombstone ? 1 : 0;
    }

    FragmentKeys keys() {
      return new FragmentKeys(new KeyHashSet(Arrays.copyOf(hashes, count), Arrays.copyOf(offsets, count)), tombstones);
    }
  }
}
