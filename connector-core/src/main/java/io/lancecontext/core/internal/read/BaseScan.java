package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceFragment;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.StructNulls;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SystemColumns;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The base-table part of a scan: the rows of the base table (or of some of its fragments) whose key the
 * fresh tier does not hold, matching the filter, not superseded. The filter, the visibility rules and (for
 * small fresh tiers) the exclusion of fresh keys are rendered into one Lance filter; where the filter
 * cannot be sent exactly (see {@link LanceSql}) Lance gets a superset and the filter is evaluated in Java
 * over it. The key exclusion is always re-checked in Java: a key the fresh tier holds never comes from the
 * base table, whatever Lance's index does. Needs only the fresh tier's key set, no fresh rows. A count-only
 * read ({@link ScanRules#countOnly}) counts the fragments whose key hashes this JVM holds and share none with the
 * fresh keys without reading them ({@link BaseKeyHashes#countable}), and reads the rest.
 */
final class BaseScan implements AutoCloseable {
  /** Above this many fresh keys, the base scan filters them out in Java instead of in its Lance filter. */
  static final int MAX_PUSHED_EXCLUSIONS = 1_000;

  private final ScanRules rules;
  private final ScanOutput output;
  private final LanceDataset dataset;
  private final List<Integer> fragments;
  private final Set<String> freshKeys;
  private final HashedKeys hashedFreshKeys;
  /** Whether rows are tested against the fresh keys' hashes first ({@link HashedKeys#worthHashing}). */
  private final boolean hashFreshKeys;
  /** A key's bytes, copied from the batch to hash it. */
  private byte[] scratch = new byte[64];
  private final boolean javaKeyCheck;
  private final boolean javaFilter;
  private final String lanceFilter;
  private final boolean pushLimit;
  /** Records of fragments a count-only read counted from their key hashes, not yet returned. */
  private long countedRows;
  private ScanHandle scan;

  /**
   * @param fragments fragments to read, or null for all
   * @param pushLimit whether Lance applies the scan's offset and limit (nothing is left for Java to decide)
   */
  BaseScan(ScanRules rules, ScanOutput output, LsmSnapshot snapshot, List<Integer> fragments, boolean pushLimit) {
    this.rules = rules;
    this.output = output;
    this.dataset = snapshot.base().dataset();
    // a read confined to a few keys excludes only those of them the fresh tier holds; an empty base none
    Set<String> confined = Predicates.keysReadByKey(rules.spec, rules.filter);
    this.hashedFreshKeys = dataset.fragments().isEmpty() ? new HashedKeys(Set.of())
        : confined != null ? snapshot.hashedFreshKeysAmong(confined) : snapshot.hashedFreshKeys();
    this.freshKeys = hashedFreshKeys.keys();
    List<Integer> read = holding(rules, snapshot.base(), fragments);
    long counted = 0;
    if (rules.countOnly) {
      Map<Integer, Long> countable = snapshot.base().countableFragments(rules.spec, read,
          freshKeys.isEmpty() ? null : hashedFreshKeys.hashes());
      if (!countable.isEmpty()) {
        counted = countable.values().stream().mapToLong(Long::longValue).sum();
        List<Integer> all = read != null ? read : snapshot.base().keyIndexCoverage(rules.spec).fragments().stream()
            .map(LanceFragment::id).toList();
        read = all.stream().filter(f -> !countable.containsKey(f)).toList();
      }
    }
    this.fragments = read;
    this.countedRows = counted;
    this.javaKeyCheck = !freshKeys.isEmpty();
    this.hashFreshKeys = javaKeyCheck && hashedFreshKeys.worthHashing(snapshot.base().keyIndexCoverage(rules.spec).rows());
    LanceSql.Rendered rendered = LanceSql.renderSuperset(rules.baseFilter);
    this.javaFilter = !rendered.exact();
    String sql = excluding(rendered.sql(), rules.spec.key(), freshKeys);
    this.lanceFilter = sql.equals("true") ? null : sql;
    this.pushLimit = pushLimit;
  }

  /**
   * {@code fragments} (null: all), less those that cannot hold any key of a read confined to a few keys
   * ({@code id = ..}, {@code id IN (..)}; {@link BaseTable#fragmentsHolding}).
   */
  private static List<Integer> holding(ScanRules rules, BaseTable base, List<Integer> fragments) {
    Set<String> keys = Predicates.keysReadByKey(rules.spec, rules.filter);
    List<Integer> holding = keys == null ? null : base.fragmentsHolding(rules.spec, keys);
    if (holding == null) {
      return fragments;
    }
    if (fragments == null) {
      return holding;
    }
    Set<Integer> mayHold = Set.copyOf(holding);
    return fragments.stream().filter(mayHold::contains).toList();
  }

  /**
   * Lance filter {@code sql} that also excludes rows whose {@code key} is one of {@code keys}, when there are at most
   * {@value #MAX_PUSHED_EXCLUSIONS}: those of them filter text can carry ({@link LanceSql#passable}). A superset
   * either way; callers re-check the keys in Java.
   */
  static String excluding(String sql, String key, Set<String> keys) {
    if (keys.isEmpty() || keys.size() > MAX_PUSHED_EXCLUSIONS) {
      return sql;
    }
    List<Object> sendable = keys.stream().filter(LanceSql::passable).map(k -> (Object) k).toList();
    return sendable.isEmpty() ? sql
        : "(" + sql + ") AND NOT (" + LanceSql.render(Predicate.in(key, sendable)).orElseThrow() + ")";
  }

  /** Whether Lance gets the whole filter (nothing is re-checked in Java but the fresh keys). */
  static boolean exact(ScanRules rules) {
    return LanceSql.renderSuperset(rules.baseFilter).exact();
  }

  /** The next non-null output batch (possibly empty), or null at the end. */
  VectorSchemaRoot next() {
    try {
      if (countedRows > 0) {
        int n = (int) Math.min(countedRows, Integer.MAX_VALUE);
        countedRows -= n;
        return output.emitCount(n);
      }
      if (fragments != null && fragments.isEmpty()) {
        return null;  // no fragment can hold any of the keys the read is confined to
      }
      if (scan == null) {
        open();
      }
      while (scan.reader().loadNextBatch()) {
        VectorSchemaRoot out = select(scan.reader().getVectorSchemaRoot());
        if (out != null) {
          return out;
        }
      }
      return null;
    } catch (Exception e) {
      throw LanceErrors.translate("scan the base table", e);
    }
  }

  private void open() {
    Set<String> cols = new LinkedHashSet<>(rules.columns);
    cols.add(rules.spec.key());
    if (javaFilter) {
      cols.addAll(Predicates.topLevelColumns(rules.freshFilter));
      if (rules.spec.has(Capability.TOMBSTONES)) {
        cols.add(SystemColumns.TOMBSTONE);
      }
    }
    ScanRequest b = ScanRequest.of(new ArrayList<>(cols)).withRowId(rules.hasBlobs());
    if (lanceFilter != null) {
      b.filter(lanceFilter);
    }
    if (fragments != null) {
      b.fragments(fragments);
    }
    if (pushLimit) {
      if (rules.scan.hasLimit() && rules.scan.limit() > 0) {
        b.limit(rules.scan.limit());
      }
      if (rules.scan.offset() > 0) {
        b.offset(rules.scan.offset());
      }
    }
    scan = dataset.scan(b);
  }

  private VectorSchemaRoot select(VectorSchemaRoot in) {
    StructNulls.repair(rules.spec, dataset, in);
    int n = in.getRowCount();
    int[] rows = new int[n];
    int count = 0;
    Set<String> superseded = rules.superseded;
    VarCharVector key = (javaKeyCheck || !superseded.isEmpty()) ? (VarCharVector) in.getVector(rules.spec.key()) : null;
    KeyHashSet freshHashes = javaKeyCheck && hashFreshKeys ? hashedFreshKeys.hashes() : null;
    PredicateEvaluator eval = javaFilter ? new PredicateEvaluator(rules.baseFilter, in) : null;
    for (int r = 0; r < n; r++) {
      if (key != null) {
        // a key the fresh tier holds is skipped; its hash, when worth it, is tested first without decoding the key
        int start = key.getStartOffset(r);
        int length = key.getEndOffset(r) - start;
        if (length > scratch.length) {
          scratch = new byte[Math.max(length, 2 * scratch.length)];
        }
        key.getDataBuffer().getBytes(start, scratch, 0, length);
        String k = null;
        if (javaKeyCheck && (freshHashes == null || freshHashes.contains(KeyHashSet.hash(scratch, length)))) {
          k = new String(scratch, 0, length, StandardCharsets.UTF_8);
          if (freshKeys.contains(k)) {
            continue;
          }
        }
        if (!superseded.isEmpty()) {
          if (k == null) {
            k = new String(scratch, 0, length, StandardCharsets.UTF_8);
          }
          if (superseded.contains(k)) {
            continue;
          }
        }
      }
      if (eval != null && !eval.matches(r)) {
        continue;
      }
      rows[count++] = r;
    }
    return output.emit(in, rows, count, dataset, true);
  }

  @Override
  public void close() {
    ScanHandle s = scan;
    scan = null;
    if (s != null) {
      s.close();
    }
  }
}
