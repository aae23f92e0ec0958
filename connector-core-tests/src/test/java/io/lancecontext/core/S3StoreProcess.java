package io.lancecontext.core;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.FlushResult;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Child JVM of {@code S3StoreTest}, started with the {@code AWS_*} environment lance-core 7.0.0's MemWAL
 * needs: uses a store on S3 through every tier and prints what it saw, one {@code name value} per line.
 * Args: {@code key=value} store options.
 */
public final class S3StoreProcess {
  private S3StoreProcess() {}

  public static void main(String[] args) {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Map<String, String> options = new LinkedHashMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      options.put(a.substring(0, eq), a.substring(eq + 1));
    }
    try (ContextStore store = ContextStore.open(options)) {
      add(store, 0, 200, 1.0);
      store.merge();                       // base table
      add(store, 0, 50, 2.0);
      store.seal();                        // a flushed generation
      add(store, 150, 250, 3.0);           // the WAL tail (100 new keys, 50 replacements)
      out.println("count " + store.count());
      out.println("get-k0010 " + store.get(key(10)).map(r -> r.get("reward")).orElse(null));
      out.println("get-k0160 " + store.get(key(160)).map(r -> r.get("reward")).orElse(null));
      out.println("above2 " + store.count(Predicate.compare("reward", Predicate.Op.GT, 2.5)));
      long split = 0;
      for (var s : store.planRead(ScanSpec.all().withColumns(List.of("id")), 4).splits()) {
        try (StoreReader r = store.read(s)) {
          while (r.next()) {
            split += r.batch().getRowCount();
          }
        }
      }
      out.println("splits " + split);
      FlushResult flushed = store.flush();
      out.println("flushed " + flushed.complete());
      out.println("fresh " + store.stats().freshRows());
      out.println("base " + store.stats().baseRows());
      int fragments = store.stats().fragments();
      long version = store.stats().baseVersion();
      var compacted = store.compact();
      out.println("compacted " + compacted.ran() + " " + fragments + " " + compacted.fragmentsBefore() + " "
          + compacted.fragmentsAfter() + " " + store.stats().fragments() + " " + version + " " + compacted.baseVersion());
      out.println("count-compacted " + store.count());
      out.println("get-k0160-compacted " + store.get(key(160)).map(r -> r.get("reward")).orElse(null));
      out.println("gc " + store.gc().ran());
      out.println("done");
    } catch (RuntimeException e) {
      out.println("error " + e.getClass().getName() + " " + String.valueOf(e.getMessage()).replace('\n', ' '));
    }
    ContextStore.closeAllResident();
  }

  static String key(int i) {
    return String.format("k%04d", i);
  }

  private static void add(ContextStore store, int from, int to, double reward) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      rows.add(Map.of("id", key(i), "reward", reward));
    }
    store.add(rows);
  }
}
