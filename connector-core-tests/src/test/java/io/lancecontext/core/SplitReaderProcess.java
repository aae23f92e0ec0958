package io.lancecontext.core;

import io.lancecontext.core.read.ReadSplit;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.ObjectInputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Child JVM that reads read splits planned in another process: {@code <path> <column>} opens the store,
 * prints {@code ready}, then for each stdin line (a Base64 Java-serialized {@code List<ReadSplit>})
 * reads every split and prints {@code ok <key>=<column value>,...} (keys sorted; a key returned twice is
 * an error) or {@code error <exception class> <message>}. With a third argument {@code openForSplit}, it
 * opens no store up front and reads each split through {@link ContextStore#openForSplit} with this
 * process's own options ({@link #OWN_OPTIONS}), checking that the handle got exactly its storage options.
 */
public final class SplitReaderProcess {
  private SplitReaderProcess() {}

  /** The reading side's options in {@code openForSplit} mode: a Flink-like table option map. */
  static final Map<String, String> OWN_OPTIONS = Map.of("connector", "lancecontext",
      "storage.aws_secret_access_key", "reader-side-secret");

  @SuppressWarnings("unchecked")
  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    String column = args[1];
    boolean openForSplit = args.length > 2 && args[2].equals("openForSplit");
    try (ContextStore store = openForSplit ? null : ContextStore.open(Map.of("path", args[0]));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      out.println("ready");
      String line;
      while ((line = in.readLine()) != null && !line.equals("exit")) {
        try {
          List<ReadSplit> splits;
          try (ObjectInputStream ois = new ObjectInputStream(new ByteArrayInputStream(Base64.getDecoder().decode(line)))) {
            splits = (List<ReadSplit>) ois.readObject();
          }
          Map<String, Object> view = new TreeMap<>();
          for (ReadSplit split : splits) {
            ContextStore handle = openForSplit ? ContextStore.openForSplit(split, OWN_OPTIONS) : store;
            try (StoreReader reader = handle.read(split)) {
              if (openForSplit && !handle.config().storageOptions().equals(Map.of("aws_secret_access_key",
                  "reader-side-secret"))) {
                throw new IllegalStateException("the handle has other storage options: "
                    + handle.config().storageOptions().keySet());
              }
              for (Map<String, Object> r : reader.records()) {
                if (view.put((String) r.get(handle.spec().key()), r.get(column)) != null) {
                  throw new IllegalStateException("key " + r.get(handle.spec().key()) + " returned twice");
                }
              }
            } finally {
              if (openForSplit) {
                handle.close();
              }
            }
          }
          out.println("ok " + render(view));
        } catch (Exception e) {
          out.println("error " + e.getClass().getName() + " " + String.valueOf(e.getMessage()).replace('\n', ' '));
        }
      }
    }
  }

  static String render(Map<String, Object> view) {
    StringBuilder sb = new StringBuilder();
    view.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ",").append(k).append('=').append(v));
    return sb.toString();
  }
}
