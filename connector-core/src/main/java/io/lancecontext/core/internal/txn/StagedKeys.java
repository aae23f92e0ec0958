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
 * The keys of the transaction parts this JVM staged, kept until a reader in this JVM loads the part once it is
 * published: the reader then opens the part without scanning its key column, which was most of the time between
 * a Flink checkpoint's publish and its rows' visibility to a lookup in the same JVM (docs/performance.md,
 * "Freshness: staged keys kept for readers in the same JVM").
 *
 * <p>Kept only while this JVM reads the store's published parts (a reader loaded one in the last
 * {@value #DEMAND_SECONDS} s), so that a JVM that only writes pays nothing; at most {@value #MAX_BYTES_MIB} MiB,
 * oldest dropped first (a part never published is dropped so). Thread-safe.
 */
public final class StagedKeys {
  static final int DEMAND_SECONDS = 60;
  static final int MAX_BYTES_MIB = 32;
  private static final long MAX_BYTES = (long) MAX_BYTES_MIB << 20;

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

  private final Map<String, Keys> byPath = new LinkedHashMap<>();
  private long bytes;
  private volatile long demandNanos;
  private volatile boolean demanded;

  /** Whether a reader in this JVM loaded a published part lately: only then are staged keys worth keeping. */
  public boolean wanted() {
    return demanded && System.nanoTime() - demandNanos < DEMAND_SECONDS * 1_000_000_000L;
  }

  /** Keeps the keys of the part staged at {@code path} (relative to the store, as {@link PublishedPart#path()}). */
  public synchronized void offer(String path, Keys keys) {
    long b = keys.bytes();
    if (b > MAX_BYTES) {
      return;
    }
    Keys old = byPath.put(path, keys);
    bytes += b - (old == null ? 0 : old.bytes());
    Iterator<Keys> oldest = byPath.values().iterator();
    while (bytes > MAX_BYTES && oldest.hasNext()) {
      bytes -= oldest.next().bytes();
      oldest.remove();
    }
  }

  /** The keys kept for the part at {@code path}, handed over once (null if none); marks readers as present. */
  public synchronized Keys take(String path) {
    demandNanos = System.nanoTime();
    demanded = true;
    Keys k = byPath.remove(path);
    if (k != null) {
      bytes -= k.bytes();
    }
    return k;
  }

  /** Parts whose keys are kept (tests). */
  public synchronized int size() {
    return byPath.size();
  }
}
