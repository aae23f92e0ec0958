package io.lancecontext.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The logs of the child JVMs (drivers, executors) that cluster tests start, for failure messages. */
final class ChildLogs {
  private ChildLogs() {}

  /** The last {@code lines} lines of {@code log}, or why there are none. */
  static String tail(Path log, int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }
}
