package io.lancecontext.core.internal.maintenance;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.read.KeyHashSet;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which of a merge's keys the base table may hold, so that the merge looks up through the key index
 * ({@code KeyIndex.rowOffsets}) only those: the new keys, most of what an ingest merges, cost it nothing there.
 * Without it, merges of 95,000–280,000 new keys into a base of up to 1 M rows spent 0.2–2.1 s each looking them
 * up (docs/performance.md, "Merges look up only the keys the base may hold").
 *
 * <p>A Bloom filter of the keys of every base fragment it has read ({@value #BITS_PER_KEY} bits per key,
 * {@value #HASHES} hashes: at most about 0.05% of absent keys are still looked up; with 10 bits and 7 hashes a
 * Flink run's merges of 250,000 new keys still looked up 1,083–1,428 of them, 0.2–0.5 s each), kept per store by
 * the JVM that merges it, with the fragments read, by their first data file. A data file never gains rows (merges, compactions and
 * other processes add fragments of new files; they only delete rows from existing ones), so a fragment read once
 * stays covered, and a key the filter does not hold is in no fragment it covers. Before answering, a merge reads
 * the keys of the fragments not covered yet (every fragment the first time, then those added since), at most
 * {@value #READ_ROWS_PER_KEY} rows per key it merges: until every fragment is covered (a large base merged for
 * the first time in this JVM by small merges), it looks every key up, as before. A filter that would pass its
 * capacity is made again, twice as large; above {@value #MAX_KEYS} base rows none is kept. Any failure to read
 * keys also falls back to looking every key up.
 *
 * <p>Thread-safe; merges of one store run one at a time anyway.
 */
final class BaseKeys {
  private static final Logger LOG = LoggerFactory.getLogger(BaseKeys.class);
  static final int BITS_PER_KEY = 16;
  static final int HASHES = 11;
  /** Most base rows a filter is kept for: 32 M keys take 64 MB. */
  static final long MAX_KEYS = 32_000_000L;
  /**
   * Fewest keys a merge must have for the filter to answer: fewer are looked up in one or two filters of the key
   * index, which costs less than the scan of the fragments added since the last merge.
   */
  static final int MIN_MERGED_KEYS = 1_024;
  /** Fewest keys a filter is made for. */
  static final long MIN_CAPACITY = 1 << 20;
  /**
   * Most base rows whose keys a merge reads into the filter, per key it merges. Reading a base key cost about what
   * looking a merged key up did (0.2-1.6 against 0.8-7.5 microseconds in docs/performance.md's runs), and a
   * fragment read stays covered: filling the filter costs a few merges a few times their look-ups, once.
   */
  static final long READ_ROWS_PER_KEY = 16;

  private final long minCapacity;
  private final long maxKeys;

  private long[] bits;
  private long bitCount;
  private long capacity;
  private long added;
  /** First data files of the fragments whose keys are in the filter. */
  private final Set<String> covered = new HashSet<>();

  BaseKeys() {
    this(MIN_CAPACITY, MAX_KEYS);
  }

  /** A filter for at least {@code minCapacity} keys, and none above {@code maxKeys} base rows (tests). */
  BaseKeys(long minCapacity, long maxKeys) {
    if (Math.max(minCapacity, maxKeys) > (1L << 32) / BITS_PER_KEY) {
      throw new IllegalArgumentException("a base-key filter holds at most " + (1L << 32) / BITS_PER_KEY + " keys");
    }
    this.minCapacity = minCapacity;
    this.maxKeys = maxKeys;
  }

  /**
   * The keys of {@code keys} that the base table {@code base} may hold: all of them when they are fewer than
   * {@value #MIN_MERGED_KEYS} or the filter does not cover every fragment yet. Reads the keys of fragments not
   * covered yet first, within the merge's budget.
   */
  synchronized Set<String> mayHold(LanceDataset base, SchemaSpec spec, Set<String> keys) {
    if (keys.size() < MIN_MERGED_KEYS) {
      return keys;
    }
    List<LanceFragment> fragments = base.fragments();
    long rows = 0;
    List<LanceFragment> missing = new ArrayList<>();
    Set<String> present = new HashSet<>();
    long missingRows = 0;
    for (LanceFragment f : fragments) {
      rows += f.physicalRows();
      present.add(f.dataFile());
      if (!covered.contains(f.dataFile())) {
        missing.add(f);
        missingRows += f.physicalRows();
      }
    }
    if (rows > maxKeys) {
      clear();
      return keys;
    }
    if (bits == null || added + missingRows > capacity) {
      reset(Math.min(maxKeys, Math.max(minCapacity, 2 * rows)));
      missing = fragments;
    }
    covered.retainAll(present);  // fragments no longer in the base: their keys stay, harmlessly
    List<LanceFragment> now = new ArrayList<>();
    long budget = READ_ROWS_PER_KEY * keys.size();
    long taken = 0;
    for (LanceFragment f : missing) {
      if (taken + f.physicalRows() <= budget) {
        now.add(f);
        taken += f.physicalRows();
      }
    }
    if (!now.isEmpty() && !read(base, spec, now)) {
      return keys;
    }
    if (now.size() < missing.size()) {
      return keys;  // later merges read the rest
    }
    Set<String> out = new HashSet<>();
    for (String k : keys) {
      if (mightContain(KeyHashSet.hash(k))) {
        out.add(k);
      }
    }
    return out;
  }

  /** Adds the keys of {@code fragments} and covers them; false (and no filter kept) if they cannot be read. */
  private boolean read(LanceDataset base, SchemaSpec spec, List<LanceFragment> fragments) {
    List<Integer> ids = fragments.stream().map(LanceFragment::id).toList();
    long started = System.nanoTime();
    try (ScanHandle scan = base.scan(ScanRequest.of(List.of(spec.key())).fragments(ids))) {
      ArrowReader reader = scan.reader();
      while (reader.loadNextBatch()) {
        VarCharVector key = (VarCharVector) reader.getVectorSchemaRoot().getVector(spec.key());
        for (int r = 0; r < key.getValueCount(); r++) {
          if (!key.isNull(r)) {
            put(KeyHashSet.hash(key, r));
          }
        }
      }
    } catch (Exception e) {
      LOG.debug("could not read the keys of {} base fragments; this merge looks every key up", ids.size(), e);
      clear();
      return false;
    }
    fragments.forEach(f -> covered.add(f.dataFile()));
    LOG.debug("read the keys of {} base fragments into the merge's filter in {} ms ({} keys held)", ids.size(),
        (System.nanoTime() - started) / 1_000_000, added);
    return true;
  }

  void reset(long keys) {
    capacity = keys;
    bitCount = Math.max(64, keys * BITS_PER_KEY);
    bits = new long[(int) ((bitCount + 63) / 64)];
    added = 0;
    covered.clear();
  }

  private void clear() {
    bits = null;
    capacity = 0;
    added = 0;
    covered.clear();
  }

  void put(long hash) {
    for (int i = 0; i < HASHES; i++) {
      long bit = bit(hash, i);
      bits[(int) (bit >>> 6)] |= 1L << bit;
    }
    added++;
  }

  boolean mightContain(long hash) {
    for (int i = 0; i < HASHES; i++) {
      long bit = bit(hash, i);
      if ((bits[(int) (bit >>> 6)] & (1L << bit)) == 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * The {@code i}th of a key's {@value #HASHES} bits: its hash's low and high halves combined (double hashing, modulo
   * 2^32), scaled onto the filter by a multiplication and a shift instead of a division ({@code bitCount} is below
   * 2^32).
   */
  private long bit(long hash, int i) {
    long spot = ((int) hash + i * (int) (hash >>> 32)) & 0xFFFF_FFFFL;
    return (spot * bitCount) >>> 32;
  }
}
