package io.lancecontext.flink.sink;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.WriteNotAcknowledgedException;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.schema.Capability;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.groups.SinkWriterMetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.types.RowKind;

/**
 * One subtask's writer, in one of two modes.
 *
 * <p><b>At-least-once</b>: rows are copied into one {@code immediate} core write handle as they arrive and
 * put every {@code write.batch-rows} rows or {@code write.batch-bytes} bytes, each put durable and visible to
 * every reader when it returns (a {@link WriterOptions.Builder#continuous() continuous} handle: through the MemWAL, not the bulk path); {@code sink.buffer-flush.interval} also puts what is buffered, and a
 * checkpoint or the end of input ({@link #flush}) waits until every row is durable. It emits no committable.
 * Rows without a key get keys derived from a seed and their ordinal among this writer's keyless rows
 * ({@link WriterOptions.Builder#idSeed(String, long)}); both are in the writer state, so a restored writer
 * gives the rows replayed after its checkpoint the keys the failed attempt gave them, as long as they reach it
 * in the same order (a deterministic source; keyless rows all go to the subtask of bucket 0, so from one
 * upstream subtask, or from several whose interleaving repeats), and they replace those rows instead of
 * duplicating them.
 *
 * <p><b>Exactly-once</b>: the rows after a checkpoint go into an {@code atomic} handle of transaction
 * {@code <sink id>-<job id>-<n>} (part id: the subtask index), opened with the first row; buffers are
 * staged as they fill (durable, invisible). At the next checkpoint barrier {@link #prepareCommit} stages the
 * rest and emits the handle's summary; the committer publishes it with every other subtask's once the
 * checkpoint completes. {@code n} is one above the id of the last checkpoint this writer took part in (its
 * writer state, so a restored writer continues above the checkpoint it was restored from, 0 on a fresh
 * start; Flink tells a writer without state no restored checkpoint id): every subtask that saw the same checkpoints names the same transaction, and a published
 * transaction's {@code n} is never above the id of the checkpoint that published it, so no later attempt
 * (restored from that checkpoint or a later one) reuses a published name. A failed attempt's staged parts are never named by a committable,
 * so they are never visible (garbage collection removes them after {@code gc.grace}).
 *
 * <p>Changelog rows (both modes): +I and +U upsert; -D writes a tombstone where the spec has capability
 * {@code tombstones}, and on a store without it fails the writer with core's {@link SchemaException} naming the
 * capability, the store and the key (before the -D's buffer is put or staged). -U is ignored, not written: a +U (or +I, -D) of its key that follows
 * before the next put of this writer's buffers replaces it. One case is different: Flink 2.3's planner also sends
 * this sink, whose changelog mode excludes -U, a lone -U (no +U follows) when a filter after an update drops the
 * updated row ({@code GROUP BY ... HAVING}); the key has left the query's result. A -U is never published
 * without its +U: the writer holds it until a row of its key replaces it or the next checkpoint (or the end of
 * input), and only there writes a -U no row replaced as a delete, on a store with {@code tombstones} (ignored on
 * one without). Puts between checkpoints ({@code write.batch-rows}, {@code sink.buffer-flush.interval}) never
 * write one: there the +U may still be on its way, and deleting would make the key vanish from every reader
 * until the next put. At a checkpoint it cannot be: Flink's operators emit a -U and its +U in one step, so
 * both precede the same barrier, and the sink's input edge takes aligned barriers only (Flink disables
 * unaligned checkpoints on a sink's partitioning edge), so every row before the barrier has been written when
 * {@link #flush}/{@link #prepareCommit} run. At-least-once without checkpointing, a lone -U deletes at the end of
 * input. Runs in the task's mailbox thread only (timers included), as a handle requires.
 *
 * <p>Metrics (sink writer group): the standard {@code numRecordsSend} (rows and deletes written) and
 * {@code numBytesSend} (their estimated encoded size), {@code putLatencyMs} (histogram: the writes that put
 * or staged a full buffer, and the interval flushes), {@code flushLatencyMs} (histogram: a checkpoint's wait
 * for durability), {@code transactionsStaged}, {@code fencedPuts} (puts that failed because another writer
 * took the shard and core could not win it back within {@code write.put-timeout}) and {@code failedPuts}
 * (every put that was not acknowledged, fenced ones included).
 */
final class LanceContextSinkWriter<IN> implements CommittingSinkWriter<IN, LanceContextWriteResult>,
    StatefulSinkWriter<IN, LanceContextWriterState> {
  private final ContextStore store;
  private final SinkFormat<IN> format;
  private final boolean exactlyOnce;
  private final boolean tombstones;
  private final ProcessingTimeService timers;
  private final long intervalMillis;
  private final int batchRows;
  private final int subtask;
  private final String transactionPrefix;
  /** Whether the job replaces the store's contents (a batch INSERT OVERWRITE). */
  private final boolean overwrite;
  private long nextTransaction;
  /** At-least-once: the seed of keyless rows' keys (null exactly-once). */
  private final String idSeed;

  private StoreWriter handle;
  private SinkFormat.Bound<IN> rows;
  private String transaction;
  private int buffered;
  private boolean closed;
  /** Keys of -U rows no later row of the same key has replaced yet (stores with tombstones only). */
  private final Set<String> retracted = new LinkedHashSet<>();

  private final Counter recordsSend;
  private final Counter bytesSend;
  private final Histogram putLatency;
  private final Histogram flushLatency;
  private final Counter transactionsStaged;
  private final Counter fencedPuts;
  private final Counter failedPuts;

  LanceContextSinkWriter(Map<String, String> options, SinkFormat<IN> format, boolean exactlyOnce, boolean overwrite,
      Duration flushInterval, String sinkId, WriterInitContext context, long lastCheckpoint,
      LanceContextWriterState keyless) {
    this.format = format;
    this.exactlyOnce = exactlyOnce;
    this.overwrite = overwrite;
    this.subtask = context.getTaskInfo().getIndexOfThisSubtask();
    this.transactionPrefix = "flink-" + sinkId + "-" + context.getJobInfo().getJobId();
    this.nextTransaction = lastCheckpoint + 1;
    // a writer without a seed to continue takes a new one: its keys must not repeat those of any other writer
    this.idSeed = exactlyOnce ? null : keyless != null ? keyless.idSeed()
        : transactionPrefix + "/" + subtask + "/" + java.util.UUID.randomUUID();
    long firstKeyless = keyless != null && !exactlyOnce ? keyless.keylessOrdinal() : 0;
    SinkWriterMetricGroup metrics = context.metricGroup();
    this.recordsSend = metrics.getNumRecordsSendCounter();
    this.bytesSend = metrics.getNumBytesSendCounter();
    this.putLatency = metrics.histogram("putLatencyMs", new DescriptiveStatisticsHistogram(1024));
    this.flushLatency = metrics.histogram("flushLatencyMs", new DescriptiveStatisticsHistogram(1024));
    this.transactionsStaged = metrics.counter("transactionsStaged");
    this.fencedPuts = metrics.counter("fencedPuts");
    this.failedPuts = metrics.counter("failedPuts");
    this.store = ContextStore.open(options);
    try {
      this.tombstones = store.spec().has(Capability.TOMBSTONES);
      this.batchRows = store.config().get(StoreOptions.BATCH_ROWS);
      if (!exactlyOnce) {
        // at-least-once: every put is visible on return, whatever the store's write.commit default
        open(WriterOptions.builder().commitMode(WriterOptions.CommitMode.IMMEDIATE).continuous().idSeed(idSeed, firstKeyless)
            .build());
      }
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    this.timers = context.getProcessingTimeService();
    this.intervalMillis = exactlyOnce ? 0 : flushInterval.toMillis();
    if (intervalMillis > 0) {
      schedule(timers.getCurrentProcessingTime() + intervalMillis);
    }
  }

  /** Publish order of transaction ids: by their checkpoint number {@code n}, then by name. */
  static Comparator<String> transactionOrder() {
    return Comparator.<String>comparingLong(LanceContextSinkWriter::transactionNumber).thenComparing(Comparator.naturalOrder());
  }

  static long transactionNumber(String txn) {
    try {
      return Long.parseLong(txn.substring(txn.lastIndexOf('-') + 1));
    } catch (NumberFormatException e) {
      return Long.MAX_VALUE;
    }
  }

  private void open(WriterOptions options) {
    StoreWriter opened = store.newWriter(options);
    try {
      rows = format.bind(opened, store.spec());
    } catch (RuntimeException e) {
      opened.close();
      throw e;
    }
    handle = opened;
    buffered = 0;
  }

  /**
   * Puts what is buffered at {@code due} and every {@code sink.buffer-flush.interval} after it, at a fixed rate:
   * the next put is due one interval after this one was, not one interval after it ended, so that a put's own time
   * (50–100 ms for 6,000 {@code context} rows at 50,000 rows/s) does not add to how long rows wait in the buffer.
   */
  private void schedule(long due) {
    timers.registerTimer(due, now -> {
      if (!closed) {
        long start = System.nanoTime();
        commit(false);
        putLatency.update((System.nanoTime() - start) / 1_000_000);
        schedule(nextFlush(due, timers.getCurrentProcessingTime(), intervalMillis));
      }
    });
  }

  /** When the put after the one due at {@code due} is due: one interval later, or at once ({@code now}) if that passed. */
  static long nextFlush(long due, long now, long intervalMillis) {
    return Math.max(due + intervalMillis, now);
  }

  @Override
  public void write(IN element, Context context) {
    RowKind kind = format.kind(element);
    if (kind == RowKind.UPDATE_BEFORE) {
      // not written: the +U of the same key normally follows and replaces the row; see the class comment
      String key = format.key(element);
      if (tombstones && key != null) {
        retracted.add(key);
      }
      return;
    }
    if (kind == RowKind.DELETE && !tombstones) {
      // core's error for a delete without the capability (StoreWriter.delete), thrown before the handle is
      // opened so that the rows buffered before the -D are never put or staged
      throw new SchemaException("a delete (-D) of key '" + format.key(element) + "' reached the store at "
          + store.uri() + ", whose spec has no 'tombstones' capability (its capabilities: "
          + store.spec().capabilities() + "): deleting by key needs a spec declaring 'tombstones' (a JSON spec in "
          + "option 'schema', or the 'context' preset), or a changelog without deletes");
    }
    if (!retracted.isEmpty()) {
      retracted.remove(format.key(element));
    }
    if (handle == null) {
      openTransaction();
    }
    boolean puts = ++buffered >= batchRows;
    long start = puts ? System.nanoTime() : 0;
    try {
      if (kind == RowKind.DELETE) {
        delete(element);
      } else {
        bytesSend.inc(rows.write(element));
      }
    } catch (WriteNotAcknowledgedException e) {
      throw counted(e);
    }
    recordsSend.inc();
    if (puts) {
      putLatency.update((System.nanoTime() - start) / 1_000_000);
      buffered = 0;
    }
  }

  private void openTransaction() {
    transaction = transactionPrefix + "-" + nextTransaction;
    open(WriterOptions.builder().transaction(transaction, String.valueOf(subtask)).build());
  }

  /** Writes the -U rows no later row replaced as deletes (their keys left the result), before a checkpoint's put or staging. */
  private void deleteRetracted() {
    for (String key : retracted) {
      deleteKey(key);
      recordsSend.inc();
    }
    retracted.clear();
  }

  private void delete(IN element) {
    String key = format.key(element);
    if (key == null) {
      throw new IllegalArgumentException("a retraction without a key reached the store at " + store.uri());
    }
    deleteKey(key);
  }

  private void deleteKey(String key) {
    handle.delete(key);
    bytesSend.inc(key.length());
  }

  private RuntimeException counted(WriteNotAcknowledgedException e) {
    failedPuts.inc();
    if (e instanceof FencedWriterException) {
      fencedPuts.inc();
    }
    return e;
  }

  /**
   * Puts (at-least-once) or stages (exactly-once) what is buffered; at a checkpoint or the end of input
   * ({@code checkpoint}) with the deletes of the lone -U rows, which must not be written at any other put.
   */
  private WriteSummary commit(boolean checkpoint) {
    buffered = 0;
    try {
      if (checkpoint) {
        deleteRetracted();
      }
      return handle.commit();
    } catch (WriteNotAcknowledgedException e) {
      throw counted(e);
    }
  }

  /** At-least-once: waits until every row written so far is durable and visible. Exactly-once: nothing to do. */
  @Override
  public void flush(boolean endOfInput) {
    if (!exactlyOnce) {
      long start = System.nanoTime();
      commit(true);
      flushLatency.update((System.nanoTime() - start) / 1_000_000);
    }
  }

  /**
   * Exactly-once: stages what is buffered (durable when this returns) and returns this subtask's result for
   * the checkpoint (none if it wrote nothing since the previous one). At-least-once: nothing.
   */
  @Override
  public List<LanceContextWriteResult> prepareCommit() {
    if (!exactlyOnce) {
      return List.of();
    }
    if (handle == null) {
      if (retracted.isEmpty() && !overwrite) {
        return List.of();  // an overwrite's writers report even no rows: an empty result still replaces the contents
      }
      openTransaction();
    }
    long start = System.nanoTime();
    WriteSummary summary;
    try {
      summary = commit(true);
    } finally {
      handle.close();
      handle = null;
      rows = null;
    }
    flushLatency.update((System.nanoTime() - start) / 1_000_000);
    transactionsStaged.inc();
    return List.of(new LanceContextWriteResult(transaction, subtask, summary.toBytes()));
  }

  /**
   * The writer state: the checkpoint's id, above which the next transaction is named, and at-least-once the
   * keyless rows' seed and next ordinal (every row is put by then: {@link #flush} ran at the barrier).
   */
  @Override
  public List<LanceContextWriterState> snapshotState(long checkpointId) {
    nextTransaction = checkpointId + 1;
    return List.of(new LanceContextWriterState(checkpointId, idSeed, exactlyOnce ? 0 : handle.keylessRows()));
  }

  @Override
  public void close() {
    closed = true;
    try {
      if (handle != null) {
        handle.close();
      }
    } finally {
      store.close();
    }
  }
}
