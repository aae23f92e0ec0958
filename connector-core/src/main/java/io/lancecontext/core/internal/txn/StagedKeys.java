package io.lancecontext.core.internal.txn;

import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The keys of the transaction parts this JVM staged, and their rows ({@link StagedRows}), kept until a reader in this
 * JVM loads the part once it is published: the reader then opens the part without scanning its key column, which was
 * most of the time between a Flink checkpoint's publish and its rows' visibility to a lookup in the same JVM, and
 * copies the rows a lookup asks for instead of reading them (docs/performance.md, "Freshness: staged keys kept for
 * readers in the same JVM").
 *
 * <p>Kept only while this JVM reads the store (a reader took a live snapshot or loaded a published part in the last
 * {@value #DEMAND_SECONDS} s: a reader that started before the first publish finds that publish's parts kept too),
 * so that a JVM that only writes pays nothing; at most {@value #MAX_BYTES_MIB} MiB of keys
 * and {@value #MAX_ROW_BYTES_MIB} MiB of rows, oldest dropped first (a part never published is dropped so).
 * Thread-safe.
 */
public final class StagedKeys implements AutoCloseable {
  static final int DEMAND_SECONDS = 60;
  static final int MAX_BYTES_MIB = 32;
  static final int MAX_ROW_BYTES_MIB = 64;
  private static final long MAX_BYTES = (long) MAX_BYTES_MIB << 20;
  private static final long MAX_ROW_BYTES = (long) MAX_ROW_BYTES_MIB << 20;

  /**
   * What is kept of one staged part: its keys, its rows when they fit (else null) and the identities of its
   * fragments as written ({@code LanceFragment.identity}). The taker owns the rows.
   */
  public record Part(Keys keys, StagedRows rows, List<String> fragments) {
    long keyBytes() {
      return keys.bytes();
    }

    long rowBytes() {
      return rows == null ? 0 : rows.bytes();
    }

    void close() {
      if (rows != null) {
        rows.close();
      }
    }
  }

  /** One part's keys and tombstone flags (null: no tombstones), in row order. */
  public record Keys(String[] keys, boolean[] tombstones) {
    /** About what the keys take on the heap (as if no one else held them). */
    public long bytes() {
      long b = 16L * keys.length + (tombstones == null ? 0 : tombstones.length);
      for (String k : keys) {
        b += 40 + k.length();
      }
      return b;
    }

    /**
     * The keys of {@code batches} (one part's rows, in order) from {@code keyColumn}, with the tombstone flags of
     * {@code tombstoneColumn} when the batches have it.
     */
    public static Keys of(List<VectorSchemaRoot> batches, String keyColumn, String tombstoneColumn) {
      int rows = 0;
      boolean hasTombstones = !batches.isEmpty() && batches.get(0).getSchema().getFields().stream()
          .anyMatch(f -> f.getName().equals(tombstoneColumn));
      for (VectorSchemaRoot b : batches) {
        rows += b.getRowCount();
      }
      String[] keys = new String[rows];
      boolean[] tombstones = hasTombstones ? new boolean[rows] : null;
      int n = 0;
      for (VectorSchemaRoot b : batches) {
        VarCharVector key = (VarCharVector) b.getVector(keyColumn);
        BitVector tomb = hasTombstones ? (BitVector) b.getVector(tombstoneColumn) : null;
        for (int r = 0; r < b.getRowCount(); r++, n++) {
          keys[n] = new String(key.get(r), StandardCharsets.UTF_8);
          if (tombstones != null) {
            tombstones[n] = !tomb.isNull(r) && tomb.get(r) != 0;
          }
        }
      }
      return new Keys(keys, tombstones);
    }
  }

  private final Map<String, Part> byPath = new LinkedHashMap<>();
  private long bytes;
  private long rowBytes;
  private volatile long demandNanos;
  private volatile boolean demanded;
  private boolean closed;

  /** Whether a reader in this JVM read the store lately: only then are staged keys worth keeping. */
  public boolean wanted() {
    return demanded && System.nanoTime() - demandNanos < DEMAND_SECONDS * 1_000_000_000L;
  }

  /** Notes that a reader in this JVM reads the store (a lookup, a snapshot, a planned read): staged parts are kept. */
  public void readerPresent() {
    demandNanos = System.nanoTime();
    demanded = true;
  }

  /**
   * Keeps the keys, rows and fragments' identities of the part staged at {@code path} (relative to the store, as
   * {@link PublishedPart#path()}); takes the rows over, closing them when they are not kept (rows above the bound
   * alone: the keys are still kept).
   */
  public synchronized void offer(String path, Keys keys, StagedRows rows, List<String> fragments) {
    if (rows.bytes() > MAX_ROW_BYTES) {
      rows.close();
      rows = null;
    }
    Part part = new Part(keys, rows, fragments);
    if (closed || part.keyBytes() > MAX_BYTES) {
      part.close();
      return;
    }
    Part old = byPath.put(path, part);
    add(part, 1);
    if (old != null) {
      add(old, -1);
      old.close();
    }
    Iterator<Part> oldest = byPath.values().iterator();
    while ((bytes > MAX_BYTES || rowBytes > MAX_ROW_BYTES) && oldest.hasNext()) {
      Part p = oldest.next();
      oldest.remove();
      add(p, -1);
      p.close();
    }
  }

  private void add(Part p, int sign) {
    bytes += sign * p.keyBytes();
    rowBytes += sign * p.rowBytes();
  }

  /**
   * What is kept for the part at {@code path}, handed over once (null if nothing); marks readers as present. The
   * caller owns the rows.
   */
  public synchronized Part take(String path) {
    readerPresent();
    Part p = byPath.remove(path);
    if (p != null) {
      add(p, -1);
    }
    return p;
  }

  /** Parts whose keys are kept (tests). */
  public synchronized int size() {
    return byPath.size();
  }

  /** Drops everything kept, and keeps nothing from now on (the store closes). */
  @Override
  public synchronized void close() {
    closed = true;
    byPath.values().forEach(Part::close);
    byPath.clear();
    bytes = 0;
    rowBytes = 0;
  }
}
