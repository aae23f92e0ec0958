package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.internal.lance.LanceSql;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The write sequence of each key's newest row in a snapshot, tombstones included: a fresh winner's (a
 * transaction part's rows read as its publish sequence), else the base row's {@code _lc_seq}. What a
 * conflict check compares with the time a read was taken: a key whose newest row is stamped after it was
 * written after it.
 */
public final class NewestSequences {
  /** Keys per base filter ({@code key IN (...)}). */
  private static final int KEYS_PER_FILTER = 512;
  /** Above this many keys left for the base, one scan of its keys costs less than the filters. */
  private static final int FILTERED_MAX = 20_000;

  private NewestSequences() {}

  /**
   * key → its newest row's write sequence, for the keys with a row (or tombstone) in {@code snapshot}; the value
   * is null for a base row without a stamp (rows of a transaction part a merge appended whole).
   */
  public static Map<String, Long> of(SchemaSpec spec, LsmSnapshot snapshot, Collection<String> keys) {
    Map<String, Long> out = new HashMap<>();
    Set<String> inBase = new HashSet<>();
    for (String k : keys) {
      LsmSnapshot.Winner w = snapshot.winner(k);
      if (w != null) {
        out.put(k, w.ref().sequence());
      } else {
        inBase.add(k);
      }
    }
    if (inBase.isEmpty()) {
      return out;
    }
    if (inBase.size() > FILTERED_MAX) {
      scan(spec, snapshot, null, null, inBase, out);
      return out;
    }
    // as a point lookup's base step: only the fragments that may hold a key, and a filter Lance can take (a
    // superset for keys it cannot be sent, which the key check in scan narrows)
    List<Integer> fragments = snapshot.base().fragmentsHolding(spec, inBase);
    if (fragments != null && fragments.isEmpty()) {
      return out;
    }
    List<String> sorted = new ArrayList<>(inBase);
    java.util.Collections.sort(sorted);
    for (int from = 0; from < sorted.size(); from += KEYS_PER_FILTER) {
      List<String> chunk = sorted.subList(from, Math.min(sorted.size(), from + KEYS_PER_FILTER));
      String filter = LanceSql.renderSuperset(Predicate.in(spec.key(), new ArrayList<>(chunk))).sql();
      scan(spec, snapshot, filter, fragments, inBase, out);
    }
    return out;
  }

  private static void scan(SchemaSpec spec, LsmSnapshot snapshot, String filter, List<Integer> fragments,
      Set<String> wanted, Map<String, Long> out) {
    ScanRequest request = ScanRequest.of(List.of(spec.key(), SystemColumns.SEQUENCE));
    if (filter != null) {
      request.filter(filter);
    }
    if (fragments != null) {
      request.fragments(fragments);
    }
    try (ScanHandle scan = snapshot.base().dataset().scan(request)) {
      while (scan.reader().loadNextBatch()) {
        VectorSchemaRoot b = scan.reader().getVectorSchemaRoot();
        VarCharVector key = (VarCharVector) b.getVector(spec.key());
        BigIntVector seq = (BigIntVector) b.getVector(SystemColumns.SEQUENCE);
        for (int r = 0; r < b.getRowCount(); r++) {
          String k = new String(key.get(r), StandardCharsets.UTF_8);
          if (wanted.contains(k)) {
            out.put(k, seq.isNull(r) ? null : seq.get(r));
          }
        }
      }
    } catch (Exception e) {
      throw LanceErrors.translate("read the write sequences of " + wanted.size() + " keys in the base table", e);
    }
  }
}
