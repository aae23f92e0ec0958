package io.lancecontext.core.internal.lance;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt8Vector;
import org.lance.MetadataColumns;

/**
 * lance-core's 64-bit metadata columns: {@value #ROW_ID} (a row's id, what {@code takeRows} and
 * {@code takeBlobs} take) and {@value #ROW_ADDRESS} (fragment id in the high 32 bits, the row's offset in
 * the fragment in the low 32).
 */
public final class RowIds {
  private RowIds() {}

  /** The row-id column a scan returns when asked ({@link ScanRequest#withRowId}). */
  public static final String ROW_ID = MetadataColumns.ROWID;
  /** The row-address column a scan returns when asked ({@link ScanRequest#withRowAddress}). */
  public static final String ROW_ADDRESS = MetadataColumns.ROWADDR;

  /** The value in slot {@code i}: unsigned or signed 64-bit, by lance-core version and scan. */
  public static long get(FieldVector v, int i) {
    if (v instanceof UInt8Vector u) {
      return u.get(i);
    }
    if (v instanceof BigIntVector b) {
      return b.get(i);
    }
    return ((Number) v.getObject(i)).longValue();
  }

  /** The fragment id of a row address. */
  public static int fragmentOf(long address) {
    return (int) (address >>> 32);
  }

  /** The row's offset in its fragment, of a row address. */
  public static int offsetOf(long address) {
    return (int) address;
  }
}
