package io.lancecontext.core;

import io.lancecontext.core.result.WriteSummary;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Main class of the child JVMs of {@link TransactionProcessTest}. Rows are {@code k<n>} with their value in
 * {@code token_count}.
 *
 * <ul>
 *   <li>{@code stager <path> <txid> <proc> <threads> <from> <stride> <rows> <value> <outDir>}: thread
 *       {@code t} stages keys {@code k<from + (proc*threads + t)*stride> ..} ({@code rows} of them) as part
 *       {@code <proc>/<t>}, in flushes of 100 rows, commits and writes the summary's bytes to
 *       {@code <outDir>/<proc>-<t>.bin}; prints {@code staged <file>} per thread, then {@code done}.</li>
 *   <li>{@code endless-stager <path> <txid>}: stages 100-row flushes until killed (a 16 KiB
 *       staging bound, {@code txn.timeout} 1 s), printing {@code staging} once a part of it is on disk.</li>
 *   <li>{@code publisher <path> <txid> <summary files...>}: prints {@code publishing}, publishes, prints
 *       {@code published <alreadyPublished>}.</li>
 *   <li>{@code publish-merge <path> <txid> <key> <value>}: publishes transaction {@code txid} holding row
 *       {@code k<key>}, then merges once and prints {@code merged <merged> <rows> <reason>}.</li>
 *   <li>{@code poller <path>}: prints {@code ready}, then, until stdin says anything, reads the whole view
 *       over and over and prints {@code state <rows> <rows of value 2>} whenever that changes.</li>
 *   <li>{@code mixer <path> <proc> <ops> <keys> [option=value ...]}: opens the store, prints {@code ready}
 *       and waits for a line on stdin; then {@code ops} random operations on keys {@code k0 .. k<keys-1>}, each writing values of its own
 *       ({@code proc * 1,000,000 + op * 10 + part}): an immediate add of 1–6 keys, a transaction of two
 *       handles (parts {@code a} and {@code b}, overlapping keys) published, or one aborted. Prints one line
 *       per operation: {@code op <kind> <startMicros> <endMicros> <key>=<value>,...} where the interval is
 *       the add's call or the publish's (a transaction's linearization point lies in its publish), and for a
 *       transaction the value it gives each key (part {@code b}'s where both wrote it: the greater part id
 *       wins); kinds {@code add}, {@code unacked} (an add that was not acknowledged: it may or may not be
 *       applied), {@code txn}, {@code aborted}. Then {@code done}.</li>
 * </ul>
 */
public final class TransactionProcess {
  private TransactionProcess() {}

  static Map<String, Object> row(int key, int value) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", "k" + key);
    r.put("token_count", value);
    return r;
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Map<String, String> options = Map.of("path", args[1], "write.batch-rows", "100");
    switch (args[0]) {
      case "stager" -> {
        ContextStore store = ContextStore.open(options);
        int proc = Integer.parseInt(args[3]);
        int threads = Integer.parseInt(args[4]);
        int from = Integer.parseInt(args[5]);
        int stride = Integer.parseInt(args[6]);
        int rows = Integer.parseInt(args[7]);
        int value = Integer.parseInt(args[8]);
        List<Thread> started = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int writer = proc * threads + t;
          String part = proc + "/" + t;
          Path file = Path.of(args[9], proc + "-" + t + ".bin");
          Thread th = new Thread(() -> {
            try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(args[2], part).build())) {
              for (int i = 0; i < rows; i++) {
                w.write(row(from + writer * stride + i, value));
              }
              Files.write(file, w.commit().toBytes());
              out.println("staged " + file);
            } catch (Exception e) {
              e.printStackTrace();
              out.println("failed " + e);
            }
          });
          th.start();
          started.add(th);
        }
        for (Thread th : started) {
          th.join();
        }
        out.println("done");
        Runtime.getRuntime().halt(0);
      }
      case "endless-stager" -> {
        // a small staging bound: parts reach the disk while the handle streams, not only at commit
        // a short txn.timeout: the test collects the transaction soon after killing this process
        ContextStore store = ContextStore.open(Map.of("path", args[1], "write.batch-rows", "100",
            "write.batch-bytes", "16KiB", "txn.timeout", "1s"));
        StoreWriter w = store.newWriter(WriterOptions.builder().transaction(args[2], "0").build());
        boolean said = false;
        for (int i = 0; ; i++) {
          w.write(row(100_000 + i, 2));
          if (!said && i >= 150 && Files.isDirectory(Path.of(args[1], "_lc", "txn", args[2]))) {
            out.println("staging");
            said = true;
          }
        }
      }
      case "publisher" -> {
        ContextStore store = ContextStore.open(options);
        List<WriteSummary> summaries = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
          summaries.add(WriteSummary.fromBytes(Files.readAllBytes(Path.of(args[i]))));
        }
        out.println("publishing");
        boolean already = store.publish(args[2], summaries).alreadyPublished();
        out.println("published " + already);
        Runtime.getRuntime().halt(0);
      }
      case "publish-merge" -> {
        ContextStore store = ContextStore.open(options);
        WriteSummary staged;
        try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(args[2], "0").build())) {
          w.write(row(Integer.parseInt(args[3]), Integer.parseInt(args[4])));
          staged = w.commit();
        }
        store.publish(args[2], List.of(staged));
        var merge = store.merge();
        out.println("merged " + merge.merged() + " " + merge.rows() + " " + merge.reason());
        Runtime.getRuntime().halt(0);
      }
      case "poller" -> {
        try (ContextStore store = ContextStore.open(Map.of("path", args[1]))) {
          AtomicBoolean stop = new AtomicBoolean();
          Thread stdin = new Thread(() -> {
            try {
              new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            } catch (Exception e) {
              // stop either way
            }
            stop.set(true);
          });
          stdin.setDaemon(true);
          stdin.start();
          out.println("ready");
          String last = "";
          while (!stop.get()) {
            int rows = 0;
            int twos = 0;
            for (Map<String, Object> r : store.scanRecords(io.lancecontext.core.read.ScanSpec.all())) {
              rows++;
              if (Integer.valueOf(2).equals(r.get("token_count"))) {
                twos++;
              }
            }
            String state = "state " + rows + " " + twos;
            if (!state.equals(last)) {
              out.println(state);
              last = state;
            }
          }
          out.println("stopped");
        }
      }
      case "mixer" -> mixer(args, out);
      default -> throw new IllegalArgumentException(args[0]);
    }
  }

  private static long micros() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  private static void mixer(String[] args, PrintStream out) throws Exception {
    Map<String, String> options = new HashMap<>(Map.of("path", args[1]));
    for (int i = 5; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      options.put(kv[0], kv[1]);
    }
    int proc = Integer.parseInt(args[2]);
    int ops = Integer.parseInt(args[3]);
    int keys = Integer.parseInt(args[4]);
    java.util.Random random = new java.util.Random(31L * proc + ops);
    try (ContextStore store = ContextStore.open(options)) {
      io.lancecontext.core.testing.StoreProcess.awaitGo(out);
      for (int op = 0; op < ops; op++) {
        int value = proc * 1_000_000 + op * 10;
        int kind = random.nextInt(10);
        if (kind < 6) {
          Map<String, Integer> written = new java.util.LinkedHashMap<>();
          List<Map<String, Object>> rows = new ArrayList<>();
          int n = 1 + random.nextInt(6);
          for (int i = 0; i < n; i++) {
            int k = random.nextInt(keys);
            if (written.putIfAbsent("k" + k, value) == null) {
              rows.add(row(k, value));
            }
          }
          long start = micros();
          String outcome = "add";
          try {
            store.add(rows);
          } catch (io.lancecontext.core.error.WriteNotAcknowledgedException e) {
            outcome = "unacked";
          }
          out.println("op " + outcome + " " + start + " " + micros() + " " + line(written));
        } else {
          String txid = "p" + proc + "-" + op;
          Map<String, Integer> given = new java.util.TreeMap<>();
          List<io.lancecontext.core.result.WriteSummary> summaries = new ArrayList<>();
          for (int part = 1; part <= 2; part++) {
            try (StoreWriter w = store.newWriter(WriterOptions.builder()
                .transaction(txid, part == 1 ? "a" : "b").build())) {
              int n = 2 + random.nextInt(8);
              for (int i = 0; i < n; i++) {
                int k = random.nextInt(keys);
                w.write(row(k, value + part));
                given.put("k" + k, value + part);  // b after a: b's row of a key both wrote wins
              }
              summaries.add(w.commit());
            }
          }
          long start = micros();
          if (kind < 9) {
            store.publish(txid, summaries);
            out.println("op txn " + start + " " + micros() + " " + line(given));
          } else {
            store.abort(txid);
            out.println("op aborted " + start + " " + micros() + " " + line(given));
          }
        }
      }
      out.println("abandoned " + store.stats().shards().stream()
          .mapToLong(io.lancecontext.core.result.StoreStats.Shard::abandonedWriters).sum());
    }
    out.println("done");
  }

  private static String line(Map<String, Integer> values) {
    StringBuilder b = new StringBuilder();
    values.forEach((k, v) -> b.append(b.length() == 0 ? "" : ",").append(k).append('=').append(v));
    return b.toString();
  }
}
