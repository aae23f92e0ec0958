package io.lancecontext.core.internal.read;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A 64-bit digest of a row's values (the first 8 bytes of their SHA-256), for telling two versions of a key
 * apart where neither carries a write sequence. Equal values give equal digests in every tier: values are
 * read by Arrow's own {@code getObject}, bytes as bytes, lists and maps element by element.
 */
final class RowDigest {
  private final MessageDigest sha;
  private final FieldVector[] vectors;

  /** Over {@code columns} of {@code batch} (a column the batch lacks counts as null). */
  RowDigest(VectorSchemaRoot batch, List<String> columns) {
    try {
      this.sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    this.vectors = new FieldVector[columns.size()];
    for (int i = 0; i < vectors.length; i++) {
      vectors[i] = batch.getVector(columns.get(i));
    }
  }

  long of(int row) {
    sha.reset();
    for (FieldVector v : vectors) {
      feed(v == null || v.isNull(row) ? null : v.getObject(row));
      sha.update((byte) 0x1e);
    }
    byte[] d = sha.digest();
    long out = 0;
    for (int i = 0; i < 8; i++) {
      out = (out << 8) | (d[i] & 0xff);
    }
    return out;
  }

  private void feed(Object o) {
    if (o == null) {
      sha.update((byte) 0);
    } else if (o instanceof byte[] b) {
      sha.update((byte) 1);
      sha.update(b);
    } else if (o instanceof List<?> l) {
      sha.update((byte) 2);
      for (Object e : l) {
        feed(e);
        sha.update((byte) 0x1f);
      }
    } else if (o instanceof Map<?, ?> m) {
      sha.update((byte) 3);
      for (Map.Entry<?, ?> e : m.entrySet()) {
        feed(e.getKey());
        feed(e.getValue());
        sha.update((byte) 0x1f);
      }
    } else {
      sha.update((byte) 4);
      sha.update(o.toString().getBytes(StandardCharsets.UTF_8));
    }
  }
}
