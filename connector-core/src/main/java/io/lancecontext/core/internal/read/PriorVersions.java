package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.internal.lance.RowIds;
import io.lancecontext.core.internal.lance.ScanHandle;
import io.lancecontext.core.internal.lance.ScanRequest;
import io.lancecontext.core.internal.lance.StructNulls;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.schema.SystemColumns;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What an incremental read compares the newest rows of its later snapshot ({@code to}) with: the version each
 * key had in the earlier one ({@code from}), where the later snapshot may hold that key outside its fresh tier.
 * Three places, read once:
 * <ul>
 *   <li>{@link #fresh}: {@code from}'s fresh winners (the index its views already hold);</li>
 *   <li>{@link #moved}: those of them {@code to}'s fresh tier no longer holds (merged since, or merged and then
 *       deleted): their sequences, and for rows of transaction parts, which a merge may append whole without
 *       their sequence, a digest of their values;</li>
 *   <li>{@link #base}: the base rows of {@code from} in the fragments {@code to} no longer holds (by data file:
 *       compacted away), of keys {@code from}'s fresh tier does not hold.</li>
 * </ul>
 * A fragment both hold (same data file; {@code to} may have deleted rows of it) is not read: its rows live in
 * {@code to} are the same rows, and those deleted were replaced by rows {@code IncrementalScan} reads in
 * {@code to}. An incremental read over an unchanged base reads no base fragment.
 */
final class PriorVersions {
  /**
   * A key's version in {@code from}.
   *
   * @param sequence its write sequence; null for a base row without one (a whole-appended transaction part's)
   * @param digest its values' {@link RowDigest} (blob columns left out) where a later copy may not carry the same
   *     sequence: a fresh transaction part's row, a base row without a sequence
   * @param hasDigest whether {@code digest} is set
   * @param tombstone whether it deletes the key
   * @param address its base row address; -1 in the fresh tier
   */
  record Version(Long sequence, long digest, boolean hasDigest, boolean tombstone, long address) {}

  final Map<String, LsmSnapshot.Winner> fresh;
  final Map<String, Version> moved = new HashMap<>();
  final Map<String, Version> base = new HashMap<>();
  /** Base fragments of {@code from} read. */
  long fragmentsRead;
  /** Whether any version here carries a digest: only then does a row of {@code to} need one to be compared. */
  boolean digests;

  private PriorVersions(Map<String, LsmSnapshot.Winner> fresh) {
    this.fresh = fresh;
  }

  /** The declared columns a digest covers: all but blobs (a base read holds their descriptors, not their bytes). */
  static List<String> digestColumns(SchemaSpec spec) {
    return spec.columns().stream().filter(c -> !c.blob()).map(c -> c.name()).toList();
  }

  /**
   * @param laterFresh the keys {@code to}'s fresh tier holds
   * @param changedFragments {@code from}'s fragments {@code to} does not share unchanged
   */
  static PriorVersions read(SchemaSpec spec, LsmSnapshot from, Set<String> laterFresh, List<Integer> changedFragments,
      BufferAllocator allocator) throws Exception {
    PriorVersions p = new PriorVersions(from.winners());
    List<LsmSnapshot.Winner> parts = new ArrayList<>();
    for (Map.Entry<String, LsmSnapshot.Winner> e : p.fresh.entrySet()) {
      if (laterFresh.contains(e.getKey())) {
        continue;
      }
      FreshShard.RowRef ref = e.getValue().ref();
      FreshSource source = e.getValue().shard().sources().get(ref.source());
      if (!ref.tombstone() && source instanceof GenerationSource g && g.transactionPart() != null) {
        parts.add(e.getValue());
      } else {
        p.moved.put(e.getKey(), new Version(ref.sequence(), 0, false, ref.tombstone(), -1));
      }
    }
    if (!parts.isEmpty()) {
      p.digestParts(spec, parts, allocator);
    }
    if (!changedFragments.isEmpty()) {
      p.readBase(spec, from.base().dataset(), changedFragments);
    }
    return p;
  }

  private void digestParts(SchemaSpec spec, List<LsmSnapshot.Winner> parts, BufferAllocator allocator) throws Exception {
    List<String> cols = digestColumns(spec);
    List<VectorSchemaRoot> batches = PointLookup.fresh(spec, parts, cols, Predicate.alwaysTrue(), allocator);
    try {
      for (VectorSchemaRoot b : batches) {
        VarCharVector key = (VarCharVector) b.getVector(spec.key());
        RowDigest digest = new RowDigest(b, cols);
        for (int r = 0; r < b.getRowCount(); r++) {
          String k = new String(key.get(r), StandardCharsets.UTF_8);
          moved.put(k, new Version(fresh.get(k).ref().sequence(), digest.of(r), true, false, -1));
          digests = true;
        }
      }
    } finally {
      batches.forEach(VectorSchemaRoot::close);
    }
  }

  private void readBase(SchemaSpec spec, LanceDataset dataset, List<Integer> fragments) throws Exception {
    List<String> digestCols = digestColumns(spec);
    List<String> cols = new ArrayList<>(digestCols);
    cols.add(SystemColumns.SEQUENCE);
    boolean tombstones = dataset.hasColumn(SystemColumns.TOMBSTONE);
    if (tombstones) {
      cols.add(SystemColumns.TOMBSTONE);
    }
    fragmentsRead += fragments.size();
    try (ScanHandle scan = dataset.scan(ScanRequest.of(cols).fragments(fragments).withRowAddress(true))) {
      while (scan.reader().loadNextBatch()) {
        VectorSchemaRoot in = scan.reader().getVectorSchemaRoot();
        StructNulls.repair(spec, dataset, in);
        VarCharVector key = (VarCharVector) in.getVector(spec.key());
        BigIntVector seq = (BigIntVector) in.getVector(SystemColumns.SEQUENCE);
        BitVector tomb = tombstones ? (BitVector) in.getVector(SystemColumns.TOMBSTONE) : null;
        FieldVector address = in.getVector(RowIds.ROW_ADDRESS);
        RowDigest digest = new RowDigest(in, digestCols);
        for (int r = 0; r < in.getRowCount(); r++) {
          String k = new String(key.get(r), StandardCharsets.UTF_8);
          if (fresh.containsKey(k)) {
            continue;  // its version in from is the fresh one
          }
          boolean noSeq = seq.isNull(r);
          digests |= noSeq;
          base.put(k, new Version(noSeq ? null : seq.get(r), noSeq ? digest.of(r) : 0, noSeq,
              tomb != null && !tomb.isNull(r) && tomb.get(r) != 0, RowIds.get(address, r)));
        }
      }
    }
  }

  /** Whether {@code from} held any key outside {@code to}'s fresh tier (else {@link #outsideLaterFresh} is always null). */
  boolean knowsBaseKeys() {
    return !moved.isEmpty() || !base.isEmpty();
  }

  /** The version {@code from} held of a key {@code to} holds in its base only (null: none in either place). */
  Version outsideLaterFresh(String key) {
    Version v = moved.get(key);
    return v != null ? v : base.get(key);
  }

  /**
   * Whether a base row of {@code to} is the version {@code prior}: the same base row, or the same write sequence,
   * or, where either lacks a sequence, the same values.
   *
   * @param digest the row's digest, computed on demand
   */
  static boolean same(Version prior, Long sequence, long address, java.util.function.LongSupplier digest) {
    if (prior == null || prior.tombstone()) {
      return false;
    }
    if (prior.address() >= 0 && prior.address() == address) {
      return true;
    }
    if (sequence != null && prior.sequence() != null && prior.sequence().longValue() == sequence.longValue()) {
      return true;
    }
    // a transaction part's row appended to the base whole keeps no publish sequence (none, or its staging stamp):
    // where the earlier version is such a row, or a part's row still fresh, the same values are the same version
    return prior.hasDigest() && prior.digest() == digest.getAsLong();
  }
}
