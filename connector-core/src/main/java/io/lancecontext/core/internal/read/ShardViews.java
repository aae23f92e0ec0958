package io.lancecontext.core.internal.read;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Builds the views of several shards at once, which after a publish or a seal each load new sources (a part of
 * 12,500 rows: 10–50 ms): the first on the calling thread, the others on a small pool shared by the JVM, or on the
 * calling thread too when the pool is busy. Each shard has its own lock, so they never wait on each other.
 */
final class ShardViews {
  /**
   * Threads building shard views beside a reader's own; idle ones end after 30 s. They are shared by every store and
   * caller of the JVM, so they carry this library's class loader as context, never that of the caller that happened
   * to start them (a Flink job's user-code loader, closed when the job ends).
   */
  private static final ExecutorService BUILDERS = new ThreadPoolExecutor(0,
      Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors())), 30, TimeUnit.SECONDS,
      new SynchronousQueue<>(), r -> {
        Thread t = new Thread(r, "lancecontext-shard-views");
        t.setDaemon(true);
        t.setContextClassLoader(ShardViews.class.getClassLoader());
        return t;
      }, new ThreadPoolExecutor.CallerRunsPolicy());

  private ShardViews() {}

  /** The views of {@code ids}, in their order. On failure every view built is released and the first failure thrown. */
  static List<FreshShard> build(List<String> ids, Function<String, FreshShard> view) {
    if (ids.size() <= 1) {
      return ids.isEmpty() ? List.of() : List.of(view.apply(ids.get(0)));
    }
    List<Future<FreshShard>> others = new ArrayList<>();
    for (String id : ids.subList(1, ids.size())) {
      others.add(BUILDERS.submit(() -> view.apply(id)));
    }
    FreshShard[] out = new FreshShard[ids.size()];
    RuntimeException failure = null;
    try {
      out[0] = view.apply(ids.get(0));
    } catch (RuntimeException e) {
      failure = e;
    }
    boolean interrupted = false;
    for (int i = 0; i < others.size(); i++) {
      while (true) {
        try {
          out[i + 1] = others.get(i).get();
          break;
        } catch (InterruptedException e) {
          interrupted = true;  // the view is being built and holds references: wait for it, then release it
        } catch (ExecutionException e) {
          RuntimeException cause = e.getCause() instanceof RuntimeException r ? r
              : new IllegalStateException("building a shard view failed", e.getCause());
          if (failure == null) {
            failure = cause;
          } else {
            failure.addSuppressed(cause);
          }
          break;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (failure != null) {
      for (FreshShard v : out) {
        if (v != null) {
          v.release();
        }
      }
      throw failure;
    }
    return List.of(out);
  }
}
