package io.lancecontext.core.internal.lance;

import java.util.ArrayList;
import java.util.List;

/**
 * A minimal protobuf wire-format reader for the two lance-core messages lancecontext must read and
 * lance-core's Java API does not expose: shard manifests and the MemWAL index details. Field numbers
 * were established by running lance-core 7.0.0 (shared/reference/memwal-spike, Explore.java).
 */
final class Protobuf {
  private Protobuf() {}

  /** One field occurrence: a varint ({@link Long}) or a length-delimited value ({@code byte[]}). */
  record Field(int number, Object value) {
    long varint() {
      return (Long) value;
    }

    byte[] bytes() {
      return (byte[]) value;
    }
  }

  static List<Field> parse(byte[] b) {
    List<Field> out = new ArrayList<>();
    int[] pos = {0};
    while (pos[0] < b.length) {
      long key = varint(b, pos);
      int number = (int) (key >>> 3);
      int wireType = (int) (key & 7);
      if (number <= 0) {
        throw new IllegalArgumentException("bad protobuf field number " + number);
      }
      switch (wireType) {
        case 0 -> out.add(new Field(number, varint(b, pos)));
        case 1 -> out.add(new Field(number, fixed(b, pos, 8)));
        case 5 -> out.add(new Field(number, fixed(b, pos, 4)));
        case 2 -> {
          int len = (int) varint(b, pos);
          if (len < 0 || pos[0] + len > b.length) {
            throw new IllegalArgumentException("bad protobuf length " + len);
          }
          byte[] v = new byte[len];
          System.arraycopy(b, pos[0], v, 0, len);
          pos[0] += len;
          out.add(new Field(number, v));
        }
        default -> throw new IllegalArgumentException("unsupported protobuf wire type " + wireType);
      }
    }
    return out;
  }

  private static long fixed(byte[] b, int[] pos, int n) {
    if (pos[0] + n > b.length) {
      throw new IllegalArgumentException("truncated protobuf");
    }
    long v = 0;
    for (int i = 0; i < n; i++) {
      v |= (long) (b[pos[0] + i] & 0xff) << (8 * i);
    }
    pos[0] += n;
    return v;
  }

  private static long varint(byte[] b, int[] pos) {
    long r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos[0] >= b.length) {
        throw new IllegalArgumentException("truncated protobuf varint");
      }
      int x = b[pos[0]++] & 0xff;
      r |= (long) (x & 0x7f) << shift;
      if ((x & 0x80) == 0) {
        return r;
      }
    }
    throw new IllegalArgumentException("protobuf varint too long");
  }
}
