package io.lancecontext.core;

import io.lancecontext.core.read.ScanSpec;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Child JVM that reads a store at snapshots taken in another process: {@code <path>} opens the store, prints
 * {@code ready}, then for each stdin line (a token or tag) prints {@code ok <per-key checksums>} of the whole
 * view at it ({@link #checksums}) or {@code error <exception class> <message>}; a line of two tokens or tags
 * separated by a space asks for the incremental read between them ({@code ScanSpec.between}).
 */
public final class SnapshotReaderProcess {
  private SnapshotReaderProcess() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    try (ContextStore store = ContextStore.open(Map.of("path", args[0]));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      out.println("ready");
      String line;
      while ((line = in.readLine()) != null && !line.equals("exit")) {
        try {
          String[] two = line.split(" ");
          ScanSpec scan = two.length == 2 ? ScanSpec.all().between(two[0], two[1]) : ScanSpec.all().atSnapshot(line);
          out.println("ok " + checksums(store, scan));
        } catch (Exception e) {
          out.println("error " + e.getClass().getName() + " " + String.valueOf(e.getMessage()).replace('\n', ' '));
        }
      }
    }
  }

  /** key → hash of every column of its row, for every row {@code scan} returns, as one line. */
  static String checksums(ContextStore store, ScanSpec scan) {
    Map<String, Integer> sums = new TreeMap<>();
    String key = store.spec().key();
    for (Map<String, Object> r : store.scanRecords(scan)) {
      int h = 0;
      for (var e : new TreeMap<>(r).entrySet()) {
        h = 31 * h + (e.getKey() + "=" + render(e.getValue())).hashCode();
      }
      if (sums.put((String) r.get(key), h) != null) {
        throw new IllegalStateException("key " + r.get(key) + " returned twice");
      }
    }
    StringBuilder sb = new StringBuilder();
    sums.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ",").append(k).append(':').append(Integer.toHexString(v)));
    return sb.toString();
  }

  private static String render(Object v) {
    if (v instanceof float[] f) {
      return Arrays.toString(f);
    } else if (v instanceof byte[] b) {
      return Arrays.toString(b);
    } else if (v instanceof List<?> l) {
      return l.stream().map(SnapshotReaderProcess::render).toList().toString();
    } else if (v instanceof Map<?, ?> m) {
      Map<String, String> sorted = new TreeMap<>();
      m.forEach((k, x) -> sorted.put(String.valueOf(k), render(x)));
      return sorted.toString();
    }
    return String.valueOf(v);
  }
}
