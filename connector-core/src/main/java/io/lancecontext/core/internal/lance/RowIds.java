package io.lancecontext.core.internal.lance;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt8Vector;

/** Reads lance-core's 64-bit metadata columns ({@code _rowid}, {@code _rowaddr}). */
public final class RowIds {
  private RowIds() {}

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
}
