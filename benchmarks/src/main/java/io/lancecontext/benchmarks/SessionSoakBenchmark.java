package io.lancecontext.benchmarks;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.internal.lance.LanceSession;
import io.lancecontext.core.internal.session.LanceRuntime;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.ToLongFunction;
import org.lance.Session;

/**
 * Native memory of a worker JVM that keeps 8 stores open and writes and reads them: 20,000 adds spread
 * over the stores, each followed by a read (a scan of the rows just added, a {@code get}, a
 * {@code stats()}), merges, sealing and garbage collection on the default triggers.
 *
 * <p>One child JVM per mode, run side by side, each with a fixed, pre-touched heap ({@code -Xms} =
 * {@code -Xmx}, {@code -XX:+AlwaysPreTouch}) and {@code MALLOC_ARENA_MAX=2} (system property
 * {@code soak.malloc-arenas}), so that its RSS moves with the native memory it retains:
 * <ul>
 *   <li>{@code baseline}: the predecessor's layout, one Lance session of lance-core's default capacity
 *       (6 GiB index + 1 GiB metadata) per store, shared by that store's base table and every generation
 *       it opens, kept for the store's life (built through {@link LanceRuntime#overrideSessions});
 *   <li>{@code shared}: the JVM's one session with the default budget (2 GiB);
 *   <li>{@code small}: the JVM's one session with a 64 MiB budget;
 *   <li>{@code unshared}: {@code cache.bytes=0}, a session of lance-core's own per dataset;
 *   <li>{@code shared_base_only} (only when asked for): the shared default session for base tables, a
 *       session of their own for generations (a diagnostic: what generations add to the shared cache);
 *   <li>{@code baseline_tiny} and {@code tiny} (only when asked for; together they discriminate what one session
 *       per JVM buys): a session of a small budget (4 MiB) per store, the predecessor's way, against one session of
 *       that budget for the JVM ({@code cache.bytes=4MiB}). The stores fill their caches within the run, so the
 *       per-store sessions reach the number of stores times the budget while the one session stays at it; with only
 *       these two modes the last line is {@code RESULT session_soak_tiny ..}.
 * </ul>
 * RSS and session size are sampled every 500 adds; slopes are least-squares fits over the last half.
 *
 * <p>Usage: {@code SessionSoakBenchmark [adds=20000] [stores=8] [heap=1g] [modes=baseline,shared,small,unshared]}.
 * With the four default modes the last line is:
 * {@code RESULT session_soak baseline_slope_kb=.. shared_slope_kb=.. small_slope_kb=.. unshared_slope_kb=..
 * session_over_budget=..}.
 */
public final class SessionSoakBenchmark {
  private SessionSoakBenchmark() {}

  private static final long SMALL_BUDGET = 64L << 20;
  private static final long TINY_BUDGET = 4L << 20;
  private static final int SAMPLE_EVERY = 500;

  /** A mode and the {@code cache.bytes} its stores are opened with (null: not set, the default). */
  private enum Mode {
    BASELINE(null), SHARED(null), SMALL(Long.toString(SMALL_BUDGET)), UNSHARED("0"), SHARED_BASE_ONLY(null),
    BASELINE_TINY(null), TINY(Long.toString(TINY_BUDGET));

    final String cacheBytes;

    Mode(String cacheBytes) {
      this.cacheBytes = cacheBytes;
    }

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The session budget in bytes, or -1 where no one session has one. */
    long budget() {
      return switch (this) {
        case SHARED, SHARED_BASE_ONLY -> 2L << 30;
        case SMALL -> SMALL_BUDGET;
        case BASELINE_TINY, TINY -> TINY_BUDGET;  // baseline_tiny: each store's session's
        default -> -1;
      };
    }

    /** Whether the mode's sessions are the benchmark's own (summed per store), not the JVM's one. */
    boolean ownSessions() {
      return this == BASELINE || this == SHARED_BASE_ONLY || this == BASELINE_TINY;
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("child")) {
      child(Mode.valueOf(args[1]), args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
      return;
    }
    int adds = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    int stores = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    String heap = args.length > 2 ? args[2] : "1g";
    List<Mode> modes = args.length > 3
        ? java.util.Arrays.stream(args[3].split(",")).map(m -> Mode.valueOf(m.trim().toUpperCase(java.util.Locale.ROOT))).toList()
        : List.of(Mode.BASELINE, Mode.SHARED, Mode.SMALL, Mode.UNSHARED);
    Bench.log("SessionSoakBenchmark: %d adds over %d stores, each followed by a scan, a get and stats(); "
        + "one child JVM per mode with a fixed pre-touched heap of %s; %d cores", adds, stores, heap,
        Runtime.getRuntime().availableProcessors());
    ExecutorService pool = Executors.newFixedThreadPool(modes.size());
    Map<Mode, Future<Result>> futures = new LinkedHashMap<>();
    for (Mode m : modes) {
      futures.put(m, pool.submit(() -> runChild(m, adds, stores, heap)));
    }
    pool.shutdown();
    Map<Mode, Result> results = new LinkedHashMap<>();
    for (var e : futures.entrySet()) {
      results.put(e.getKey(), e.getValue().get());
    }
    Bench.log("");
    StringBuilder head = new StringBuilder("| adds |");
    StringBuilder rule = new StringBuilder("|---|");
    for (Mode m : modes) {
      head.append(' ').append(m.label()).append(" RSS MiB |");
      rule.append("---|");
    }
    for (Mode m : modes) {
      if (m != Mode.UNSHARED) {
        head.append(' ').append(m.label()).append(" session MiB |");
        rule.append("---|");
      }
    }
    Bench.log("%s", head);
    Bench.log("%s", rule);
    Result first = results.get(modes.get(0));
    for (int i = 0; i < first.adds.size(); i++) {
      StringBuilder row = new StringBuilder("| " + first.adds.get(i) + " |");
      for (Mode m : modes) {
        row.append(' ').append(mib(results.get(m).rssKb, i, 10)).append(" |");
      }
      for (Mode m : modes) {
        if (m != Mode.UNSHARED) {
          row.append(' ').append(mib(results.get(m).sessionBytes, i, 20)).append(" |");
        }
      }
      Bench.log("%s", row);
    }
    for (Result r : results.values()) {
      Bench.log("%-8s: native slope over the last half %7.2f KB/add (session %6.2f KB/add, the rest %6.2f KB/add), "
          + "RSS %d -> %d MiB, max session %,d bytes%s, heap committed %d MiB, %.0f s", r.mode.label(), r.slopeKb(),
          r.sessionSlopeKb(), r.slopeKb() - r.sessionSlopeKb(), r.rssKb.get(0) / 1024, r.rssKb.get(r.rssKb.size() - 1) / 1024,
          r.maxSessionBytes(), r.mode.budget() > 0 ? String.format(" (%.3f of its budget)", r.overBudget()) : "",
          r.heapCommittedMb, r.seconds);
    }
    Result perStoreTiny = results.get(Mode.BASELINE_TINY);
    Result tiny = results.get(Mode.TINY);
    if (perStoreTiny != null && tiny != null) {
      Bench.log("per-store sessions of %d MiB each: session peak %.2fx one store's budget, RSS +%d MiB after the first "
          + "1,000 adds; one session of %d MiB: %.2fx its budget, RSS +%d MiB", TINY_BUDGET >> 20,
          perStoreTiny.overBudget(), perStoreTiny.rssGrowthMib(), TINY_BUDGET >> 20, tiny.overBudget(), tiny.rssGrowthMib());
      Bench.log("RESULT session_soak_tiny baseline_tiny_over_budget=%.2f tiny_over_budget=%.2f baseline_tiny_slope_kb=%.2f "
          + "tiny_slope_kb=%.2f baseline_tiny_rss_growth_mib=%d tiny_rss_growth_mib=%d", perStoreTiny.overBudget(),
          tiny.overBudget(), perStoreTiny.slopeKb(), tiny.slopeKb(), perStoreTiny.rssGrowthMib(), tiny.rssGrowthMib());
      return;
    }
    Result baseline = results.get(Mode.BASELINE);
    Result shared = results.get(Mode.SHARED);
    Result small = results.get(Mode.SMALL);
    Result unshared = results.get(Mode.UNSHARED);
    if (baseline == null || shared == null || small == null || unshared == null) {
      return;
    }
    double overBudget = Math.max(shared.overBudget(), small.overBudget());
    double limit = Math.min(5.0, baseline.slopeKb() / 20);
    Bench.log("targets: shared and 64 MiB <= %.2f KB/add (5 KB/add and 1/20 of the baseline's %.2f): shared %s, 64 MiB %s; "
        + "session <= 1.1x budget: %s", limit, baseline.slopeKb(), shared.slopeKb() <= limit ? "met" : "MISSED",
        small.slopeKb() <= limit ? "met" : "MISSED", overBudget <= 1.1 ? "met" : "MISSED");
    Bench.log("RESULT session_soak baseline_slope_kb=%.2f shared_slope_kb=%.2f small_slope_kb=%.2f unshared_slope_kb=%.2f "
        + "session_over_budget=%.3f", baseline.slopeKb(), shared.slopeKb(), small.slopeKb(), unshared.slopeKb(), overBudget);
  }

  private static String mib(List<Long> values, int i, int shift) {
    return i < values.size() ? Long.toString(values.get(i) >> shift) : "";
  }

  private static final class Result {
    final Mode mode;
    final List<Integer> adds = new ArrayList<>();
    final List<Long> rssKb = new ArrayList<>();
    final List<Long> sessionBytes = new ArrayList<>();
    long heapCommittedMb;
    double seconds;

    Result(Mode mode) {
      this.mode = mode;
    }

    double slopeKb() {
      return slope(adds, rssKb, v -> v);
    }

    double sessionSlopeKb() {
      return slope(adds, sessionBytes, v -> v / 1024);
    }

    long maxSessionBytes() {
      return sessionBytes.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /** Largest session size over the mode's budget (0 where the mode has no one budget). */
    double overBudget() {
      return mode.budget() > 0 ? maxSessionBytes() / (double) mode.budget() : 0;
    }

    /** RSS growth from the sample at 1,000 adds (past the warm-up) to the last, in MiB. */
    long rssGrowthMib() {
      int from = Math.min(rssKb.size() - 1, Math.max(0, adds.indexOf(1_000)));
      return (rssKb.get(rssKb.size() - 1) - rssKb.get(from)) / 1024;
    }

    /** Least-squares slope of {@code ys} (as KB) over adds, last half of the samples, in KB per add. */
    private static double slope(List<Integer> xs, List<Long> ys, ToLongFunction<Long> kb) {
      int from = xs.size() / 2;
      int n = xs.size() - from;
      double mx = 0;
      double my = 0;
      for (int i = from; i < xs.size(); i++) {
        mx += xs.get(i);
        my += kb.applyAsLong(ys.get(i));
      }
      mx /= n;
      my /= n;
      double num = 0;
      double den = 0;
      for (int i = from; i < xs.size(); i++) {
        num += (xs.get(i) - mx) * (kb.applyAsLong(ys.get(i)) - my);
        den += (xs.get(i) - mx) * (xs.get(i) - mx);
      }
      return den == 0 ? 0 : num / den;
    }
  }

  private static Result runChild(Mode mode, int adds, int stores, String heap) throws Exception {
    Path dir = Bench.scratch("soak-" + mode.label());
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xms" + heap);
    cmd.add("-Xmx" + heap);
    cmd.add("-XX:+AlwaysPreTouch");
    cmd.add("-XX:+UseG1GC");
    cmd.add("--add-opens=java.base/java.nio=ALL-UNNAMED");
    cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(SessionSoakBenchmark.class.getName());
    cmd.addAll(List.of("child", mode.name(), dir.toString(), Integer.toString(adds), Integer.toString(stores)));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    // glibc adds a 64 MiB malloc arena whenever threads contend: steps of RSS that say nothing of what a
    // mode retains (seen as +70 MiB jumps in single runs); a fixed arena count keeps them out of the slope
    pb.environment().put("MALLOC_ARENA_MAX", System.getProperty("soak.malloc-arenas", "2"));
    Process p = pb.start();
    Result r = new Result(mode);
    long start = System.nanoTime();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] f = line.split(" ");
        if (f[0].equals("sample")) {
          r.adds.add(Integer.parseInt(f[1]));
          r.rssKb.add(Long.parseLong(f[2]));
          r.sessionBytes.add(Long.parseLong(f[3]));
          Bench.log("  %-8s: %5s adds, RSS %5d MiB, session %,d bytes, %.0f s", mode.label(), f[1], Long.parseLong(f[2]) / 1024,
              Long.parseLong(f[3]), (System.nanoTime() - start) / 1e9);
        } else if (f[0].equals("heap")) {
          r.heapCommittedMb = Long.parseLong(f[1]) >> 20;
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

  private static void child(Mode mode, String dir, int adds, int stores) {
    Map<String, Session> perStore = new ConcurrentHashMap<>();
    if (mode == Mode.BASELINE) {
      LanceRuntime.get().overrideSessions((StoreConfig config, String dataset) -> LanceSession.wrap(
          perStore.computeIfAbsent(config.uri(), uri -> Session.builder().indexCacheSizeBytes(
              Session.DEFAULT_INDEX_CACHE_SIZE_BYTES).metadataCacheSizeBytes(Session.DEFAULT_METADATA_CACHE_SIZE_BYTES)
              .build())));
    } else if (mode == Mode.BASELINE_TINY) {
      io.lancecontext.core.internal.session.CacheBudget budget =
          new io.lancecontext.core.internal.session.CacheBudget(TINY_BUDGET, "soak");
      LanceRuntime.get().overrideSessions((StoreConfig config, String dataset) -> LanceSession.wrap(
          perStore.computeIfAbsent(config.uri(), uri -> Session.builder().indexCacheSizeBytes(budget.indexCacheBytes())
              .metadataCacheSizeBytes(budget.metadataCacheBytes()).build())));
    } else if (mode == Mode.SHARED_BASE_ONLY) {
      Session shared = Session.builder().indexCacheSizeBytes(new io.lancecontext.core.internal.session.CacheBudget(2L << 30, "soak")
          .indexCacheBytes()).metadataCacheSizeBytes(new io.lancecontext.core.internal.session.CacheBudget(2L << 30, "soak")
          .metadataCacheBytes()).build();
      perStore.put("shared", shared);
      LanceRuntime.get().overrideSessions((StoreConfig config, String dataset) ->
          stripSlash(dataset).equals(stripSlash(config.uri())) ? LanceSession.wrap(shared) : null);
    }
    List<ContextStore> open = new ArrayList<>();
    for (int s = 0; s < stores; s++) {
      Map<String, String> options = new HashMap<>(Map.of("path", dir + "/store-" + s, "schema", "context",
          "schema.embedding-dim", "64"));
      if (mode.cacheBytes != null) {
        options.put("cache.bytes", mode.cacheBytes);
      }
      open.add(ContextStore.open(options));
    }
    Runtime rt = Runtime.getRuntime();
    System.out.println("heap " + rt.totalMemory());
    sample(0, mode, perStore);
    Random random = new Random(1);
    for (int i = 1; i <= adds; i++) {
      ContextStore store = open.get(i % stores);
      List<Map<String, Object>> rows = new ArrayList<>();
      List<Object> keys = new ArrayList<>();
      for (int j = 0; j < 10; j++) {
        Map<String, Object> r = new HashMap<>();
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
      if (i % SAMPLE_EVERY == 0) {
        sample(i, mode, perStore);
      }
    }
    open.forEach(ContextStore::close);
    ContextStore.closeAllResident();
    LanceRuntime.get().overrideSessions(null);
    perStore.values().forEach(Session::close);
  }

  private static String stripSlash(String uri) {
    return uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
  }

  /** One line: adds, RSS in KB, bytes held by the mode's session(s) (0 when each dataset has its own). */
  private static void sample(int adds, Mode mode, Map<String, Session> perStore) {
    long session = mode.ownSessions() ? perStore.values().stream().mapToLong(Session::sizeBytes).sum()
        : LanceRuntime.get().sessionSizeBytes();
    System.out.println("sample " + adds + " " + Bench.rssKb() + " " + session);
  }
}
