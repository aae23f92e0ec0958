package io.lancecontext.core.testing;

import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.SchemaSpec;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Seeded random records for any {@link SchemaSpec}: every declared column, nested structs and lists,
 * with a configurable share of nulls (nullable slots only) and empty lists/strings. Values use the
 * canonical Java types the codec decodes to, so decoded records compare equal to generated ones.
 */
public final class RandomRecords {
  private final SchemaSpec spec;
  private final Random random;
  private final double nullShare;

  public RandomRecords(SchemaSpec spec, long seed, double nullShare) {
    this.spec = spec;
    this.random = new Random(seed);
    this.nullShare = nullShare;
  }

  public List<Map<String, Object>> next(int n) {
    List<Map<String, Object>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(next());
    }
    return out;
  }

  public Map<String, Object> next() {
    Map<String, Object> r = new LinkedHashMap<>();
    for (ColumnSpec c : spec.columns()) {
      r.put(c.name(), c.name().equals(spec.key()) ? "k-" + Long.toHexString(random.nextLong()) : value(c, 0));
    }
    return r;
  }

  private Object value(ColumnSpec c, int depth) {
    if (c.nullable() && random.nextDouble() < nullShare) {
      return null;
    }
    return switch (c.type()) {
      case BOOL -> random.nextBoolean();
      case INT8 -> (byte) random.nextInt();
      case INT16 -> (short) random.nextInt();
      case INT32 -> random.nextInt();
      case INT64 -> random.nextLong();
      case FLOAT32 -> random.nextFloat() * 1000f - 500f;
      case FLOAT64 -> random.nextGaussian() * 1e6;
      case STRING, LARGE_STRING -> text(random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(c.type().isString() && c.name().contains("payload") ? 400 : 24));
      // a nullable blob column stores no empty values (they read back as null)
      case BINARY, LARGE_BINARY -> bytes((random.nextInt(5) == 0 && !(c.blob() && c.nullable())) ? 0 : 1 + random.nextInt(c.blob() ? 2048 : 64));
      case DATE -> LocalDate.ofEpochDay(random.nextInt(40_000) - 10_000);
      case TIMESTAMP -> Instant.ofEpochSecond(1_500_000_000L + random.nextInt(500_000_000), random.nextInt(1_000_000) * 1_000L);
      case LIST -> {
        int n = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(depth > 0 ? 3 : 6);
        List<Object> items = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          items.add(value(c.item(), depth + 1));
        }
        yield items;
      }
      case STRUCT -> {
        Map<String, Object> m = new LinkedHashMap<>();
        for (ColumnSpec f : c.fields()) {
          m.put(f.name(), value(f, depth + 1));
        }
        yield m;
      }
      case VECTOR -> {
        float[] v = new float[c.dim()];
        for (int i = 0; i < v.length; i++) {
          v[i] = (float) random.nextGaussian();
        }
        yield v;
      }
    };
  }

  private String text(int length) {
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      int k = random.nextInt(40);
      if (k == 39) {
        sb.append("\uD83D\uDE00"); // a supplementary character (surrogate pair)
      } else {
        sb.append(k < 26 ? (char) ('a' + k) : k < 36 ? (char) ('0' + k - 26) : k == 36 ? ' ' : k == 37 ? '\u00e9' : '\'');
      }
    }
    return sb.toString();
  }

  private byte[] bytes(int length) {
    byte[] b = new byte[length];
    random.nextBytes(b);
    return b;
  }
}
