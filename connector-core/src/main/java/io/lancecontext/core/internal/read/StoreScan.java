package io.lancecontext.core.internal.read;

import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Executes a read over an {@link LsmSnapshot} and returns exactly the LSM view: the newest row per key
 * across the base table and the fresh tier, tombstoned keys hidden, and, unless asked otherwise,
 * superseded and retired/expired records hidden. Filters are applied to the newest row of each key
 * only, so a filter on any column never returns a row that a newer version replaced.
 *
 * <p>Composed of the rules resolved once ({@link ScanRules}), the base-table part ({@link BaseScan}), the
 * fresh-tier part ({@link FreshScan}) and the output side ({@link ScanOutput}: projection, offset, limit).
 * Offset and limit go to Lance when nothing is left for Java to filter; a limit of 0 returns nothing.
 *
 * <p>Batches are produced lazily; each is valid until the next call to {@link #next()}. Not thread-safe.
 */
public final class StoreScan implements RowScan {
  private final ScanRules rules;
  private final ScanOutput output;
  private final BaseScan base;
  private final FreshScan fresh;
  private boolean baseDone;
  private long freshRowsRead;
  private VectorSchemaRoot current;

  /**
   * @param part which tiers to read: {@code BASE} reads only the base table, {@code FRESH} only the shard
   *     views {@code snapshot} holds, {@code ALL} both
   * @param fragments base fragments to read (null for all); only for {@link ReadSplit.Part#BASE}
   */
  public StoreScan(SchemaSpec spec, LsmSnapshot snapshot, ScanSpec scan, BufferAllocator allocator, ReadSplit.Part part,
      List<Integer> fragments) {
    this.rules = new ScanRules(spec, snapshot, scan, allocator);
    // (checked first: whether the scan has a limit or an offset to push; a snapshot's fresh rows by its views'
    // sources, not by the map of every fresh key's winner, which a read by key never needs)
    boolean pushLimit = (scan.hasLimit() || scan.offset() > 0) && part == ReadSplit.Part.ALL && fragments == null
        && !snapshot.holdsFreshRows() && rules.superseded.isEmpty() && BaseScan.exact(rules);
    this.output = new ScanOutput(rules, allocator, pushLimit ? 0 : scan.offset());
    this.base = part == ReadSplit.Part.FRESH ? null : new BaseScan(rules, output, snapshot, fragments, pushLimit);
    this.fresh = part == ReadSplit.Part.BASE ? null : new FreshScan(rules, output, snapshot, allocator);
    this.baseDone = base == null;
  }

  /** The columns a scan of {@code scan} returns (validates them). */
  public static List<String> resolveColumns(SchemaSpec spec, ScanSpec scan) {
    return ScanRules.resolveColumns(spec, scan);
  }

  @Override
  public List<String> columns() {
    return rules.columns;
  }

  @Override
  public boolean next() {
    closeCurrent();
    if (output.exhausted()) {
      return false;
    }
    while (true) {
      VectorSchemaRoot b;
      if (!baseDone) {
        b = base.next();
        if (b == null) {
          baseDone = true;
          base.close();
          continue;
        }
      } else {
        b = fresh == null ? null : fresh.next();
        if (b == null) {
          return false;
        }
      }
      if (b.getRowCount() == 0) {
        b.close();
        continue;
      }
      current = b;
      output.returned(b.getRowCount());
      if (baseDone) {
        freshRowsRead += b.getRowCount();
      }
      return true;
    }
  }

  @Override
  public VectorSchemaRoot batch() {
    return current;
  }

  @Override
  public long freshRowsRead() {
    return freshRowsRead;
  }

  private void closeCurrent() {
    if (current != null) {
      current.close();
      current = null;
    }
  }

  /** Closes the scan (not the snapshot). */
  @Override
  public void close() {
    closeCurrent();
    if (base != null) {
      base.close();
    }
    if (fresh != null) {
      fresh.close();
    }
  }
}
