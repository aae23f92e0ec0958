package io.lancecontext.core.testing;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.error.WriteNotAcknowledgedException;
import io.lancecontext.core.result.StoreStats;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Main class of the child JVMs in cross-process tests. Stores use the {@code rollout} preset; records
 * carry their add number in {@code sequence_order}.
 *
 * <ul>
 *   <li>{@code reader <path>}: answers stdin commands {@code get <key>} (the record's sequence_order or
 *       {@code missing}), {@code count}, {@code exit}.</li>
 *   <li>{@code writer <path> <adds> <rowsPerAdd> <prefix>}: adds, printing {@code ack <n>} after each,
 *       then halts without closing anything (a crash).</li>
 *   <li>{@code contender <path> <adds> <prefix> <pauseMillis> [option=value ...]}: adds of the row
 *       {@code <prefix>-<n>}, printing {@code ack|unacked|error <key> <millis> <detail>} for each, then
 *       {@code done}. Two options steer the contender rather than the store: {@code test.shared=<k>} adds
 *       the rows {@code shared-<n>-0 .. shared-<n>-<k-1>} (keys the other contender writes too) to every
 *       add; {@code test.reopen-at=<n>} closes every resident store before add {@code n} and opens the
 *       store again; {@code test.start-at=<epoch millis>} waits until then after opening, {@code test.start-at=go}
 *       prints {@code ready} after opening and waits for a line on stdin (so that contenders started together
 *       add at the same time). Before {@code done} it prints
 *       {@code abandoned <n>}: the shard writers this JVM lost to the other writer (or to timeouts).</li>
 *   <li>{@code claimer <path> <shardId> <seconds>}: claims the MemWAL shard again and again with raw
 *       lance-core writers (as a competing process would), printing {@code claiming} after the first
 *       claim, then halts.</li>
 * </ul>
 */
public final class StoreProcess {
  private StoreProcess() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    switch (args[0]) {
      case "reader" -> reader(args[1], out);
      case "writer" -> writer(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), args[4], out);
      case "contender" -> contender(args, out);
      case "claimer" -> claimer(args[1], args[2], Long.parseLong(args[3]), out);
      default -> throw new IllegalArgumentException(args[0]);
    }
  }

  /**
   * Options opening the store at {@code path}: for an {@code s3://} path also the {@code storage.*} keys, taken
   * from the {@code AWS_*} environment the child was started with (lance-core 7.0.0's MemWAL needs that
   * environment anyway, see {@link S3ServerExtension#memWalEnvironment()}).
   */
  public static Map<String, String> options(String path) {
    Map<String, String> o = new HashMap<>();
    o.put("path", path);
    if (path.startsWith("s3://")) {
      o.put("storage.aws_endpoint", System.getenv("AWS_ENDPOINT"));
      o.put("storage.aws_region", System.getenv("AWS_REGION"));
      o.put("storage.aws_access_key_id", System.getenv("AWS_ACCESS_KEY_ID"));
      o.put("storage.aws_secret_access_key", System.getenv("AWS_SECRET_ACCESS_KEY"));
      o.put("storage.allow_http", System.getenv().getOrDefault("AWS_ALLOW_HTTP", "false"));
    }
    return o;
  }

  static Map<String, Object> record(String key, int seq) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("sequence_order", seq);
    r.put("rollout_id", "r-" + seq);
    return r;
  }

  private static void reader(String path, PrintStream out) throws Exception {
    try (ContextStore store = ContextStore.open(options(path));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      out.println("ready");
      String line;
      while ((line = in.readLine()) != null) {
        String[] p = line.split(" ");
        switch (p[0]) {
          case "get" -> {
            Optional<Map<String, Object>> r = store.get(p[1]);
            out.println(r.map(m -> String.valueOf(m.get("sequence_order"))).orElse("missing"));
          }
          case "count" -> out.println(store.count());
          case "exit" -> {
            return;
          }
          default -> out.println("unknown " + p[0]);
        }
      }
    }
  }

  private static void writer(String path, int adds, int rowsPerAdd, String prefix, PrintStream out) {
    ContextStore store = ContextStore.open(options(path));
    for (int i = 0; i < adds; i++) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (int j = 0; j < rowsPerAdd; j++) {
        rows.add(record(prefix + "-" + i + "-" + j, i));
      }
      store.add(rows);
      out.println("ack " + i);
    }
    out.println("done");
    out.flush();
    Runtime.getRuntime().halt(0);
  }

  private static void claimer(String path, String shardId, long seconds, PrintStream out) {
    io.lancecontext.core.options.StoreConfig config = io.lancecontext.core.options.StoreConfig.of(Map.of("path", path));
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    int claims = 0;
    while (System.nanoTime() < end) {
      long t = System.nanoTime();
      try {
        // a dataset handle per claim (lance-core reuses a handle's writer); neither is closed: closing a
        // writer that was fenced blocks in lance-core 7.0.0
        org.lance.Dataset ds = io.lancecontext.core.internal.session.StoreDatasets.open(path, config,
            io.lancecontext.core.internal.session.LanceRuntime.get().allocator()).lance();
        ds.memWalWriter(shardId, new org.lance.memwal.ShardWriterConfig().withDurableWrite(true));
        System.err.println("claim " + claims + " took " + (System.nanoTime() - t) / 1_000_000 + " ms");
      } catch (RuntimeException e) {
        System.err.println("claim " + claims + " failed after " + (System.nanoTime() - t) / 1_000_000 + " ms: " + e);
      }
      if (claims++ == 0) {
        out.println("claiming");
      }
    }
    Runtime.getRuntime().halt(0);
  }

  private static void contender(String[] args, PrintStream out) {
    Map<String, String> options = options(args[1]);
    long pause = Long.parseLong(args[4]);
    int shared = 0;
    int reopenAt = -1;
    long startAt = 0;
    boolean startOnGo = false;
    for (int i = 5; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      switch (kv[0]) {
        case "test.shared" -> shared = Integer.parseInt(kv[1]);
        case "test.reopen-at" -> reopenAt = Integer.parseInt(kv[1]);
        case "test.start-at" -> {
          if (kv[1].equals("go")) {
            startOnGo = true;
          } else {
            startAt = Long.parseLong(kv[1]);
          }
        }
        default -> options.put(kv[0], kv[1]);
      }
    }
    int adds = Integer.parseInt(args[2]);
    String prefix = args[3];
    ContextStore store = ContextStore.open(options);
    try {
      if (startOnGo) {
        awaitGo(out);
      }
      long wait = startAt - System.currentTimeMillis();
      if (wait > 0) {
        try {
          Thread.sleep(wait);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      for (int i = 0; i < adds; i++) {
        if (i == reopenAt) {
          store.close();
          ContextStore.closeAllResident();
          store = ContextStore.open(options);
        }
        String key = prefix + "-" + i;
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(record(key, i));
        for (int j = 0; j < shared; j++) {
          rows.add(record("shared-" + i + "-" + j, i));
        }
        long t = System.nanoTime();
        String outcome;
        String detail = "";
        try {
          store.add(rows);
          outcome = "ack";
        } catch (WriteNotAcknowledgedException e) {
          outcome = "unacked";
          detail = e.getClass().getSimpleName();
        } catch (RuntimeException e) {
          outcome = "error";
          detail = e.getClass().getName() + ":" + String.valueOf(e.getMessage()).replace('\n', ' ');
        }
        out.println(outcome + " " + key + " " + (System.nanoTime() - t) / 1_000_000 + " " + detail);
        if (pause > 0) {
          try {
            Thread.sleep(pause);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
      out.println("abandoned " + store.stats().shards().stream().mapToLong(StoreStats.Shard::abandonedWriters).sum());
    } finally {
      store.close();
    }
    out.println("done");
  }

  /**
   * Prints {@code ready} and waits for a line on stdin: a start barrier for processes that must run at the same
   * time however long each took to start (a loaded machine can take longer than any fixed delay).
   */
  public static void awaitGo(PrintStream out) {
    out.println("ready");
    try {
      new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
