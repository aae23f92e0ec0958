package io.lancecontext.core.testing;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.session.LanceRuntime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Child JVM for the session-budget test: creates a store with the budget given on the command line,
 * makes {@code generations} unmerged generations, reads after each one (lookups through every shard and
 * a full scan every tenth), and prints {@code session max=<bytes> budget=<bytes> generations=<n>}.
 */
public final class SessionProbe {
  private SessionProbe() {}

  public static void main(String[] args) {
    String path = args[0];
    int generations = Integer.parseInt(args[1]);
    String budget = args[2];
    Map<String, String> options = Map.of("path", path, "schema", "context", "schema.embedding-dim", "16",
        "shards", "2", "cache.bytes", budget, "merge.trigger.generations", "100000", "merge.trigger.interval", "1h");
    long max = 0;
    try (ContextStore store = ContextStore.open(options)) {
      for (int g = 0; g < generations; g++) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          Map<String, Object> r = new HashMap<>();
          r.put("id", "g" + g + "-" + i);
          r.put("text_payload", "generation " + g + " row " + i);
          rows.add(r);
        }
        store.add(rows);
        store.seal();
        for (int k = 0; k < 4; k++) {
          store.get("g" + (g * 7 + k) % (g + 1) + "-" + k);
        }
        if (g % 10 == 9) {
          store.count();
        }
        max = Math.max(max, LanceRuntime.get().sessionSizeBytes());
      }
      int unmerged = store.stats().unmergedGenerations();
      System.out.println("session max=" + max + " budget=" + LanceRuntime.get().sharedBudget().bytes() + " generations="
          + Math.min(unmerged, generations));
    }
  }
}
