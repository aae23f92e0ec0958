package io.lancecontext.core.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** Deep equality for decoded records ({@code byte[]} and {@code float[]} compared by content). */
public final class RecordAssertions {
  private RecordAssertions() {}

  public static void assertRecordsEqual(List<? extends Map<String, ?>> expected, List<? extends Map<String, ?>> actual) {
    if (expected.size() != actual.size()) {
      fail("expected " + expected.size() + " records, got " + actual.size());
    }
    for (int i = 0; i < expected.size(); i++) {
      String diff = difference(expected.get(i), actual.get(i), "");
      if (diff != null) {
        fail("record " + i + " differs at " + diff + "\nexpected: " + render(expected.get(i)) + "\nactual:   " + render(actual.get(i)));
      }
    }
  }

  public static void assertRecordEqual(Map<String, ?> expected, Map<String, ?> actual) {
    String diff = difference(expected, actual, "");
    if (diff != null) {
      fail("record differs at " + diff + "\nexpected: " + render(expected) + "\nactual:   " + render(actual));
    }
  }

  public static boolean deepEquals(Object a, Object b) {
    return difference(a, b, "") == null;
  }

  /** Path of the first difference, or null when equal. */
  public static String difference(Object a, Object b, String path) {
    if (a == b) {
      return null;
    }
    if (a == null || b == null) {
      return path + " (" + render(a) + " vs " + render(b) + ")";
    }
    if (a instanceof byte[] x && b instanceof byte[] y) {
      return Arrays.equals(x, y) ? null : path + " (bytes)";
    }
    if (a instanceof float[] x && b instanceof float[] y) {
      return Arrays.equals(x, y) ? null : path + " (" + Arrays.toString(x) + " vs " + Arrays.toString(y) + ")";
    }
    if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
      if (!x.keySet().equals(y.keySet())) {
        return path + " (keys " + x.keySet() + " vs " + y.keySet() + ")";
      }
      for (Object k : x.keySet()) {
        String d = difference(x.get(k), y.get(k), path + "." + k);
        if (d != null) {
          return d;
        }
      }
      return null;
    }
    if (a instanceof List<?> x && b instanceof List<?> y) {
      if (x.size() != y.size()) {
        return path + " (list sizes " + x.size() + " vs " + y.size() + ")";
      }
      Iterator<?> i = x.iterator();
      Iterator<?> j = y.iterator();
      int n = 0;
      while (i.hasNext()) {
        String d = difference(i.next(), j.next(), path + "[" + n++ + "]");
        if (d != null) {
          return d;
        }
      }
      return null;
    }
    return Objects.equals(a, b) ? null : path + " (" + render(a) + " vs " + render(b) + ")";
  }

  public static String render(Object o) {
    if (o instanceof byte[] b) {
      return "bytes[" + b.length + "]";
    }
    if (o instanceof float[] f) {
      return "float[" + f.length + "]";
    }
    if (o instanceof Map<?, ?> m) {
      StringBuilder sb = new StringBuilder("{");
      m.forEach((k, v) -> sb.append(sb.length() > 1 ? ", " : "").append(k).append('=').append(render(v)));
      return sb.append('}').toString();
    }
    if (o instanceof List<?> l) {
      return l.stream().map(RecordAssertions::render).toList().toString();
    }
    return String.valueOf(o);
  }
}
