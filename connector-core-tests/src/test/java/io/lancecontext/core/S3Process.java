package io.lancecontext.core;

import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.ShardLayout;
import io.lancecontext.core.internal.lance.WalEntry;
import io.lancecontext.core.internal.write.ShardIds;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.GcResult;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.testing.StoreProcess;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Child JVM of {@link S3ProcessesTest}, started with the {@code AWS_*} environment lance-core 7.0.0's MemWAL
 * needs; every store is opened with {@link StoreProcess#options} (its {@code storage.*} keys from that
 * environment). Prints {@code name value} lines, then {@code done}; a failure prints {@code error ...}.
 *
 * <ul>
 *   <li>{@code create <uri> <shards> [option=value ...]}: creates the store ({@code rollout}, dim 8).</li>
 *   <li>{@code keys <uri>}: {@code count <n>} and one {@code key <id> <sequence_order>} per row of the view.</li>
 *   <li>{@code gc <uri>}: base, a merged generation, an unmerged one and a WAL tail, then garbage collection;
 *       prints the generation directories and WAL entries before and after and what a scan returns.</li>
 *   <li>{@code stage <uri> <txid> <part> <from> <rows> <file>}: stages rows {@code t<from..>} (sequence_order
 *       7) under the transaction and writes the summary to {@code file}.</li>
 *   <li>{@code publish <uri> <txid> <files...>}: publishes the summaries, twice (the second is a replay).</li>
 *   <li>{@code show <uri> <wrong secret>}: a store's {@code toString}, config and stats, and the messages of
 *       failures that involve the credentials (a wrong secret, a missing region).</li>
 * </ul>
 */
public final class S3Process {
  private S3Process() {}

  public static void main(String[] args) {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    try {
      switch (args[0]) {
        case "create" -> create(args, out);
        case "keys" -> keys(args[1], out);
        case "gc" -> gc(args[1], out);
        case "stage" -> stage(args, out);
        case "publish" -> publish(args, out);
        case "show" -> show(args, out);
        default -> throw new IllegalArgumentException(args[0]);
      }
      out.println("done");
    } catch (Exception e) {
      out.println("error " + e.getClass().getName() + " " + String.valueOf(e.getMessage()).replace('\n', ' '));
    }
    ContextStore.closeAllResident();
    out.flush();
    Runtime.getRuntime().halt(0);
  }

  private static Map<String, Object> row(String key, int seq) {
    Map<String, Object> r = new HashMap<>();
    r.put("id", key);
    r.put("sequence_order", seq);
    return r;
  }

  private static void add(ContextStore store, String prefix, int from, int to, int seq) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = from; i < to; i++) {
      rows.add(row(prefix + i, seq));
    }
    store.add(rows);
  }

  private static void create(String[] args, PrintStream out) {
    Map<String, String> o = StoreProcess.options(args[1]);
    o.put("schema", "rollout");
    o.put("schema.embedding-dim", "8");
    o.put("shards", args[2]);
    for (int i = 3; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      o.put(kv[0], kv[1]);
    }
    try (ContextStore store = ContextStore.open(o)) {
      out.println("created " + store.shards());
    }
  }

  private static void keys(String uri, PrintStream out) {
    try (ContextStore store = ContextStore.open(StoreProcess.options(uri))) {
      List<Map<String, Object>> rows = store.scanRecords(ScanSpec.all().withColumns(List.of("id", "sequence_order")));
      out.println("count " + rows.size());
      for (Map<String, Object> r : rows) {
        out.println("key " + r.get("id") + " " + r.get("sequence_order"));
      }
    }
  }

  private static void gc(String uri, PrintStream out) throws Exception {
    Map<String, String> o = StoreProcess.options(uri);
    o.put("schema", "rollout");
    o.put("schema.embedding-dim", "8");
    o.put("shards", "1");
    o.put("gc.grace", "0s");
    o.put("merge.trigger.generations", "1000");
    o.put("merge.trigger.interval", "1h");
    StoreFiles files = StoreFiles.forUri(uri, new HashMap<>(Map.of(
        "aws_endpoint", o.get("storage.aws_endpoint"), "aws_region", o.get("storage.aws_region"),
        "aws_access_key_id", o.get("storage.aws_access_key_id"),
        "aws_secret_access_key", o.get("storage.aws_secret_access_key"), "allow_http", o.get("storage.allow_http"))));
    String shard = ShardIds.all(1).get(0);
    try (ContextStore store = ContextStore.open(o)) {
      add(store, "m", 0, 100, 1);
      store.seal();
      out.println("merged " + store.merge().generationCount());  // generation 1: merged into the base
      add(store, "m", 0, 20, 2);
      add(store, "u", 0, 50, 2);
      store.seal();                                              // generation 2: flushed, not merged
      add(store, "w", 0, 10, 3);                                 // the WAL tail
      out.println("gens-before " + generations(files, shard));
      out.println("wal-before " + WalEntry.positions(files, shard));
      GcResult gc = store.gc();
      out.println("gc " + gc.ran() + " " + gc.generationDirs() + " " + gc.walEntries());
      out.println("gens-after " + generations(files, shard));
      out.println("wal-after " + WalEntry.positions(files, shard));
      List<Map<String, Object>> rows = store.scanRecords(ScanSpec.all().withColumns(List.of("id", "sequence_order")));
      out.println("count " + rows.size());
      for (Map<String, Object> r : rows) {
        out.println("key " + r.get("id") + " " + r.get("sequence_order"));
      }
    }
  }

  private static TreeSet<String> generations(StoreFiles files, String shard) throws Exception {
    TreeSet<String> out = new TreeSet<>();
    for (String name : files.list(ShardLayout.shardDir(shard))) {
      if (name.matches("[0-9a-f]+_gen_\\d+")) {
        out.add(name.substring(name.lastIndexOf('_') + 1));
      }
    }
    return out;
  }

  private static void stage(String[] args, PrintStream out) throws Exception {
    try (ContextStore store = ContextStore.open(StoreProcess.options(args[1]));
        StoreWriter w = store.newWriter(WriterOptions.builder().transaction(args[2], args[3]).build())) {
      int from = Integer.parseInt(args[4]);
      int rows = Integer.parseInt(args[5]);
      for (int i = from; i < from + rows; i++) {
        w.write(row("t" + i, 7));
      }
      Files.write(Path.of(args[6]), w.commit().toBytes());
      out.println("staged " + args[6]);
    }
  }

  private static void publish(String[] args, PrintStream out) throws Exception {
    List<WriteSummary> summaries = new ArrayList<>();
    for (int i = 3; i < args.length; i++) {
      summaries.add(WriteSummary.fromBytes(Files.readAllBytes(Path.of(args[i]))));
    }
    try (ContextStore store = ContextStore.open(StoreProcess.options(args[1]))) {
      out.println("published " + store.publish(args[2], summaries).alreadyPublished());
      out.println("replayed " + store.publish(args[2], summaries).alreadyPublished());
    }
  }

  private static void show(String[] args, PrintStream out) {
    Map<String, String> o = StoreProcess.options(args[1]);
    o.put("schema", "rollout");
    o.put("schema.embedding-dim", "8");
    o.put("shards", "2");
    try (ContextStore store = ContextStore.open(o)) {
      add(store, "s", 0, 20, 1);
      out.println("get " + store.get("s3").isPresent());
      out.println("tostring " + store);
      out.println("config " + store.config());
      out.println("stats " + store.stats());
      out.println("summary " + store.stats().summary());
      // refused while this handle is open (storage options are one per store while handles are open): the
      // refusals must not show the values
      Map<String, String> wrong = StoreProcess.options(args[1]);
      wrong.put("storage.aws_secret_access_key", args[2]);
      out.println("wrong-secret " + failure(() -> ContextStore.open(wrong).close()));
      Map<String, String> noRegion = StoreProcess.options(args[1]);
      noRegion.remove("storage.aws_region");
      out.println("no-region " + failure(() -> ContextStore.open(noRegion).close()));
      Map<String, String> unknown = StoreProcess.options(args[1]);
      unknown.put("storage.aws_secret_acces_key", o.get("storage.aws_secret_access_key"));
      out.println("unknown-key " + failure(() -> ContextStore.open(unknown).close()));
    }
  }

  private static String failure(Runnable r) {
    try {
      r.run();
      return "none";
    } catch (RuntimeException e) {
      StringBuilder sb = new StringBuilder(e.getClass().getName());
      for (Throwable t = e; t != null; t = t.getCause()) {
        sb.append(" | ").append(t);
      }
      return sb.toString().replace('\n', ' ');
    }
  }
}
