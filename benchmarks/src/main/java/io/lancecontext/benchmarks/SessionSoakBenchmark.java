package io.lancecontext.benchmarks;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.session.LanceRuntime;
import io.lancecontext.core.store.ContextStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * RSS of a worker JVM that keeps 8 stores open and writes and reads them: 20,000 adds spread over the
 * stores, each followed by a read (a scan of the rows just added, a {@code get}, a {@code stats()}),
 * merges on the default triggers. One child JVM per mode: {@code shared} (the default 2 GiB session
 * budget), {@code unshared} ({@code cache.bytes=0}: lance-core's per-dataset sessions) and {@code small}
 * (a 64 MiB budget), run side by side. RSS is sampled every 500 adds; the slope is fitted over the last half.
 *
 * <p>Usage: {@code SessionSoakBenchmark [adds=20000] [stores=8]}. Last line:
 * {@code RESULT session_soak shared_slope_kb=.. unshared_slope_kb=.. shared_plateau_mb=.. small_slope_kb=..
 * small_plateau_mb=..}.
 */
public final class SessionSoakBenchmark {
  private SessionSoakBenchmark() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("child")) {
      child(args[1], Long.parseLong(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]));
      return;
    }
    int adds = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    int stores = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    Bench.log("SessionSoakBenchmark: %d adds over %d stores, each followed by a scan, a get and stats()", adds, stores);
    // the modes run side by side: each child's RSS is its own, and the curves are per add, not per second
    ExecutorService modes = Executors.newFixedThreadPool(3);
    Future<Result> sharedRun = modes.submit(() -> runChild("shared", -1, adds, stores));
    Future<Result> unsharedRun = modes.submit(() -> runChild("unshared", 0, adds, stores));
    Future<Result> smallRun = modes.submit(() -> runChild("small", 64L << 20, adds, stores));
    modes.shutdown();
    Result shared = sharedRun.get();
    Result unshared = unsharedRun.get();
    Result small = smallRun.get();
    Bench.log("");
    Bench.log("| adds | shared RSS MiB | unshared RSS MiB | 64 MiB budget RSS MiB |");
    Bench.log("|---|---|---|---|");
    for (int i = 0; i < shared.rssKb.size(); i++) {
      Bench.log("| %d | %d | %s | %s |", shared.adds.get(i), shared.rssKb.get(i) / 1024,
          i < unshared.rssKb.size() ? Long.toString(unshared.rssKb.get(i) / 1024) : "",
          i < small.rssKb.size() ? Long.toString(small.rssKb.get(i) / 1024) : "");
    }
    for (Result r : List.of(shared, unshared, small)) {
      Bench.log("%s: slope over the last half %.2f KB/add, final RSS %d MiB, max session %d bytes (budget %s), %.0f s",
          r.mode, r.slopeKbPerAdd(), r.rssKb.get(r.rssKb.size() - 1) / 1024, r.maxSessionBytes,
          r.budget < 0 ? "2 GiB default" : r.budget == 0 ? "none" : (r.budget >> 20) + " MiB", r.seconds);
    }
    Bench.log("RESULT session_soak shared_slope_kb=%.2f unshared_slope_kb=%.2f shared_plateau_mb=%d small_slope_kb=%.2f "
        + "small_plateau_mb=%d small_session_ratio=%.2f", shared.slopeKbPerAdd(), unshared.slopeKbPerAdd(),
        shared.rssKb.get(shared.rssKb.size() - 1) / 1024, small.slopeKbPerAdd(), small.rssKb.get(small.rssKb.size() - 1) / 1024,
        small.maxSessionBytes / (double) (64L << 20));
  }

  private static final class Result {
    final String mode;
    final long budget;
    final List<Integer> adds = new ArrayList<>();
    final List<Long> rssKb = new ArrayList<>();
    long maxSessionBytes;
    double seconds;

    Result(String mode, long budget) {
      this.mode = mode;
      this.budget = budget;
    }

    /** Least-squares slope of RSS over adds, last half of the samples, in KB per add. */
    double slopeKbPerAdd() {
      int from = adds.size() / 2;
      int n = adds.size() - from;
      double mx = 0;
      double my = 0;
      for (int i = from; i < adds.size(); i++) {
        mx += adds.get(i);
        my += rssKb.get(i);
      }
      mx /= n;
      my /= n;
      double num = 0;
      double den = 0;
      for (int i = from; i < adds.size(); i++) {
        num += (adds.get(i) - mx) * (rssKb.get(i) - my);
        den += (adds.get(i) - mx) * (adds.get(i) - mx);
      }
      return den == 0 ? 0 : num / den;
    }
  }

  private static Result runChild(String mode, long budget, int adds, int stores) throws Exception {
    Path dir = Bench.scratch("soak-" + mode);
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx1g");
    cmd.add("-XX:+UseG1GC");
    cmd.add("--add-opens=java.base/java.nio=ALL-UNNAMED");
    cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(SessionSoakBenchmark.class.getName());
    cmd.addAll(List.of("child", dir.toString(), Long.toString(budget), Integer.toString(adds), Integer.toString(stores)));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    Result r = new Result(mode, budget);
    long start = System.nanoTime();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("sample ")) {
          String[] f = line.split(" ");
          r.adds.add(Integer.parseInt(f[1]));
          r.rssKb.add(Long.parseLong(f[2]));
          r.maxSessionBytes = Math.max(r.maxSessionBytes, Long.parseLong(f[3]));
          Bench.log("  %s: %s adds, RSS %d MiB, session %s bytes", mode, f[1], Long.parseLong(f[2]) / 1024, f[3]);
        }
      }
    }
    if (p.waitFor() != 0) {
      throw new IllegalStateException(mode + " child failed with exit code " + p.exitValue());
    }
    r.seconds = (System.nanoTime() - start) / 1e9;
    if (!Boolean.getBoolean("bench.keep")) {
      Bench.delete(dir);
    }
    return r;
  }

  private static void child(String dir, long budget, int adds, int stores) {
    List<ContextStore> open = new ArrayList<>();
    for (int s = 0; s < stores; s++) {
      Map<String, String> options = new java.util.HashMap<>(Map.of("path", dir + "/store-" + s, "schema", "context",
          "schema.embedding-dim", "64"));
      if (budget >= 0) {
        options.put("cache.bytes", Long.toString(budget));
      }
      open.add(ContextStore.open(options));
    }
    Random random = new Random(1);
    System.out.println("sample 0 " + Bench.rssKb() + " " + LanceRuntime.get().sessionSizeBytes());
    for (int i = 1; i <= adds; i++) {
      ContextStore store = open.get(i % stores);
      List<Map<String, Object>> rows = new ArrayList<>();
      List<Object> keys = new ArrayList<>();
      for (int j = 0; j < 10; j++) {
        Map<String, Object> r = new java.util.HashMap<>();
        String key = "k" + i + "-" + j;
        r.put("id", key);
        r.put("session_id", "s" + (i % 100));
        r.put("role", j % 2 == 0 ? "user" : "assistant");
        r.put("text_payload", Bench.text(random, 300));
        r.put("token_count", random.nextInt(500));
        float[] v = new float[64];
        for (int d = 0; d < 64; d++) {
          v[d] = random.nextFloat();
        }
        r.put("embedding", v);
        rows.add(r);
        keys.add(key);
      }
      store.add(rows);
      int seen = store.scanRecords(ScanSpec.all().withColumns(List.of("id", "role")).withFilter(Predicate.in("id", keys))).size();
      if (seen != 10) {
        throw new IllegalStateException("scan after add " + i + " saw " + seen + " of 10 rows");
      }
      if (store.get("k" + i + "-3").isEmpty()) {
        throw new IllegalStateException("get after add " + i + " missed its row");
      }
      store.stats();
      if (i % 500 == 0) {
        System.out.println("sample " + i + " " + Bench.rssKb() + " " + LanceRuntime.get().sessionSizeBytes());
      }
    }
    open.forEach(ContextStore::close);
    ContextStore.closeAllResident();
  }
}
