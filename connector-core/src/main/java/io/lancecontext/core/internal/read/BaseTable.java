package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.KeyIndexCoverage;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.MergedWatermarks;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * One version of the base table, opened, with the merged watermark of every shard at that version.
 * Shared by the reads that use it; closed when the last of them releases it.
 */
public final class BaseTable extends RefCounted {
  private final LanceDataset dataset;
  private final long version;
  private final Map<String, Long> watermarks;
  private final BaseKeyHashes keyHashes;
  private volatile KeyIndexCoverage coverage;
  private volatile List<String[]> superseding;

  private BaseTable(LanceDataset dataset, Map<String, Long> watermarks, BaseKeyHashes keyHashes) {
    this.dataset = dataset;
    this.keyHashes = keyHashes;
    this.version = dataset.version();
    this.watermarks = Map.copyOf(watermarks);
  }

  /** Takes ownership of {@code dataset} (closed if its watermarks cannot be read); no key hashes. */
  public static BaseTable of(LanceDataset dataset) {
    return of(dataset, null);
  }

  /**
   * Takes ownership of {@code dataset} (closed if its watermarks cannot be read); {@code keyHashes} (the
   * store's, or null) prune the fragments lookups by key read.
   */
  static BaseTable of(LanceDataset dataset, BaseKeyHashes keyHashes) {
    try {
      return new BaseTable(dataset, MergedWatermarks.read(dataset), keyHashes);
    } catch (RuntimeException e) {
      dataset.close();
      throw e;
    }
  }

  public LanceDataset dataset() {
    return dataset;
  }

  public long version() {
    return version;
  }

  /** The highest generation of {@code shardId} merged into this version (0 if none). */
  public long watermark(String shardId) {
    return watermarks.getOrDefault(shardId, 0L);
  }

  public Map<String, Long> watermarks() {
    return watermarks;
  }

  /** Which fragments of this version the key index covers, read once (a version never changes). */
  public KeyIndexCoverage keyIndexCoverage(SchemaSpec spec) {
    KeyIndexCoverage c = coverage;
    if (c == null) {
      c = KeyIndexCoverage.of(dataset, spec);
      coverage = c;
    }
    return c;
  }

  /**
   * The key and the {@code supersedes} value of every live row of this version that names one, read once (a
   * version never changes): every read of a store with capability supersession needs them, and reading them is
   * a scan of a column of the whole base.
   */
  List<String[]> superseding(SchemaSpec spec) {
    List<String[]> s = superseding;
    if (s == null) {
      s = SupersededKeys.readBase(spec, dataset);
      superseding = s;
    }
    return s;
  }

  /**
   * The fragments a filtered query for {@code keys} must read ({@link BaseKeyHashes#fragmentsFor}): null for
   * all of them, empty when none can hold any of the keys.
   */
  List<Integer> fragmentsHolding(SchemaSpec spec, Collection<String> keys) {
    return keyHashes == null ? null : keyHashes.fragmentsFor(this, spec, keys);
  }

  /**
   * The addresses of the rows that may hold {@code keys} ({@link BaseKeyHashes#addressesFor}): a superset of their
   * live rows, ascending; null when not known (then a filtered query finds them).
   */
  long[] addressesHolding(SchemaSpec spec, Collection<String> keys) {
    return keyHashes == null ? null : keyHashes.addressesFor(this, spec, keys);
  }

  /**
   * The records of the fragments among {@code fragmentIds} (null: all) a count-only read may count without
   * reading them ({@link BaseKeyHashes#countable}); empty without key hashes.
   */
  Map<Integer, Long> countableFragments(SchemaSpec spec, List<Integer> fragmentIds, KeyHashSet freshKeys) {
    return keyHashes == null ? Map.of() : keyHashes.countable(this, spec, fragmentIds, freshKeys);
  }

  @Override
  protected void free() {
    dataset.close();
  }
}
