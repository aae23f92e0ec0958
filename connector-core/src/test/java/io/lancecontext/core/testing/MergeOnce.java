package io.lancecontext.core.testing;

import io.lancecontext.core.ContextStore;
import java.util.List;
import java.util.Map;

/** Child JVM: creates a store at {@code args[0]}, adds a row, merges it, prints {@code merged} and exits. */
public final class MergeOnce {
  private MergeOnce() {}

  public static void main(String[] args) {
    try (ContextStore store = ContextStore.open(Map.of("path", args[0], "schema", "rollout", "schema.embedding-dim", "4"))) {
      store.add(List.of(Map.of("id", "a", "reward", 1.0)));
      store.seal();
      System.out.println(store.merge().merged() ? "merged" : "not merged");
    }
    ContextStore.closeAllResident();
  }
}
