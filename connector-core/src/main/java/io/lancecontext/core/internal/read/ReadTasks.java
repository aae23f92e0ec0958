package io.lancecontext.core.internal.read;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Runs a read's independent native steps at once: the views of several shards, which after a publish or a seal each
 * load new sources (a part of 12,500 rows: 10–50 ms), and the takes of a lookup from several fresh parts (one
 * checkpoint's 4 new parts: 14–56 ms one after another). The first task runs on the calling thread, the others on a
 * small pool shared by the JVM, or on the calling thread too when the pool is busy.
 */
final class ReadTasks {
  /**
   * Threads running tasks beside a reader's own; idle ones end after 30 s. They are shared by every store and
   * caller of the JVM, so they carry this library's class loader as context, never that of the caller that happened
   * to start them (a Flink job's user-code loader, closed when the job ends).
   */
  private static final ExecutorService BUILDERS = new ThreadPoolExecutor(0,
      Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors())), 30, TimeUnit.SECONDS,
      new SynchronousQueue<>(), r -> {
        Thread t = new Thread(r, "lancecontext-read-tasks");
        t.setDaemon(true);
        t.setContextClassLoader(ReadTasks.class.getClassLoader());
        return t;
      }, new ThreadPoolExecutor.CallerRunsPolicy());

  private ReadTasks() {}

  /**
   * {@code task} of each of {@code inputs}, in their order (null results included). On failure every result made is
   * given to {@code release} and the first failure thrown, the others suppressed in it.
   */
  static <I, T> List<T> all(List<I> inputs, Function<I, T> task, Consumer<T> release) {
    if (inputs.size() <= 1) {
      return inputs.isEmpty() ? List.of() : java.util.Collections.singletonList(task.apply(inputs.get(0)));
    }
    List<Future<T>> others = new ArrayList<>();
    for (I input : inputs.subList(1, inputs.size())) {
      others.add(BUILDERS.submit(() -> task.apply(input)));
    }
    List<T> out = new ArrayList<>(java.util.Collections.nCopies(inputs.size(), null));
    RuntimeException failure = null;
    try {
      out.set(0, task.apply(inputs.get(0)));
    } catch (RuntimeException e) {
      failure = e;
    }
    boolean interrupted = false;
    for (int i = 0; i < others.size(); i++) {
      while (true) {
        try {
          out.set(i + 1, others.get(i).get());
          break;
        } catch (InterruptedException e) {
          interrupted = true;  // the task runs and may hold references: wait for it, then release what it made
        } catch (ExecutionException e) {
          RuntimeException cause = e.getCause() instanceof RuntimeException r ? r
              : new IllegalStateException("a read task failed", e.getCause());
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
      for (T v : out) {
        if (v != null) {
          release.accept(v);
        }
      }
      throw failure;
    }
    return out;
  }
}
