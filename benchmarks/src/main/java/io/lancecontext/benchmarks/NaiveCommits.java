package io.lancecontext.benchmarks;

import io.lancecontext.core.schema.SchemaSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;

/**
 * The baseline: one Lance commit per add (an APPEND of a new fragment, visible to every process when it
 * returns), as shared/reference/baselines measured it. With several callers, a committer thread groups
 * whatever adds are waiting into one commit (group commit, the baseline's best case). Written with lance-core
 * and Arrow directly, as a lance-core user would: a dataset in the store's Arrow schema, records encoded by
 * {@link ArrowBatches}.
 */
final class NaiveCommits implements AutoCloseable {
  private final String uri;
  private final Schema schema;
  private final BufferAllocator allocator;
  private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
  private Thread committer;
  private volatile boolean running = true;

  private record Pending(VectorSchemaRoot batch, CompletableFuture<Void> done) {}

  NaiveCommits(String uri, SchemaSpec spec, BufferAllocator allocator) {
    this.uri = uri;
    this.schema = spec.toArrowSchema();
    this.allocator = allocator;
    try (VectorSchemaRoot empty = VectorSchemaRoot.create(schema, allocator);
        ArrowReader r = ArrowBatches.reader(List.of(empty), allocator);
        Dataset ignored = Dataset.write().allocator(allocator).reader(r).uri(uri).mode(WriteParams.WriteMode.CREATE)
            .execute()) {
      // created empty
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** One commit per call. */
  void add(List<Map<String, Object>> records) {
    try (VectorSchemaRoot batch = ArrowBatches.encode(schema, records, allocator)) {
      append(List.of(batch));
    }
  }

  /** One APPEND commit of {@code batches}. */
  private void append(List<VectorSchemaRoot> batches) {
    try (ArrowReader r = ArrowBatches.reader(batches, allocator);
        Dataset ignored = Dataset.write().allocator(allocator).reader(r).uri(uri).mode(WriteParams.WriteMode.APPEND)
            .execute()) {
      // committed
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Concurrent callers: grouped into one commit per committer round. */
  void addGrouped(List<Map<String, Object>> records) {
    startCommitter();
    CompletableFuture<Void> done = new CompletableFuture<>();
    queue.add(new Pending(ArrowBatches.encode(schema, records, allocator), done));
    done.join();
  }

  private synchronized void startCommitter() {
    if (committer != null) {
      return;
    }
    committer = new Thread(() -> {
      while (running) {
        List<Pending> group = new ArrayList<>();
        try {
          Pending first = queue.poll(50, java.util.concurrent.TimeUnit.MILLISECONDS);
          if (first == null) {
            continue;
          }
          group.add(first);
          queue.drainTo(group);
          List<VectorSchemaRoot> batches = new ArrayList<>();
          group.forEach(p -> batches.add(p.batch()));
          append(batches);  // the group's batches in one write: one commit
          group.forEach(p -> p.done().complete(null));
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          group.forEach(p -> p.done().completeExceptionally(e));
        } finally {
          group.forEach(p -> p.batch().close());
        }
      }
    }, "naive-committer");
    committer.setDaemon(true);
    committer.start();
  }

  long count() {
    try (Dataset ds = Dataset.open().allocator(allocator).uri(uri).build()) {
      return ds.countRows();
    }
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    if (committer != null) {
      committer.join();
    }
  }
}
