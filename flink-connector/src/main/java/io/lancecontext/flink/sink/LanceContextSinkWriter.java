package io.lancecontext.flink.sink;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.StoreWriter;
import io.lancecontext.core.WriterOptions;
import io.lancecontext.core.schema.Capability;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

/**
 * One subtask's writer: rows are copied into a core write handle as they arrive and put every
 * {@code write.batch-rows} rows or {@code write.batch-bytes} bytes, each put durable and visible to every
 * reader when it returns; {@code sink.buffer-flush.interval} also puts what is buffered, and a checkpoint
 * or the end of input ({@link #flush}) waits until every row is durable. Changelog rows: +I and +U upsert,
 * -D writes a tombstone (capability {@code tombstones}), and -U too when the store has that capability
 * (Flink sends -U without a following +U when a filter drops the updated row, so an upsert sink must
 * delete on it, as Flink's JDBC and upsert-kafka sinks do; a following +U writes the key again, in order);
 * without it, -U is ignored. Runs in the task's mailbox thread
 * only (timers included), as the handle requires.
 */
final class LanceContextSinkWriter implements SinkWriter<RowData> {
  private final ContextStore store;
  private final StoreWriter writer;
  private final RowDataWriter rows;
  private final boolean tombstones;
  private final ProcessingTimeService timers;
  private final long intervalMillis;
  private boolean closed;

  LanceContextSinkWriter(Map<String, String> options, RowType type, Duration flushInterval, ProcessingTimeService timers) {
    this.store = ContextStore.open(options);
    try {
      // at-least-once: every put is visible on return, whatever the store's write.commit default
      this.writer = store.newWriter(WriterOptions.builder().commitMode(WriterOptions.CommitMode.IMMEDIATE).build());
      this.rows = new RowDataWriter(writer.rows(), type, store.spec());
      this.tombstones = store.spec().has(Capability.TOMBSTONES);
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    this.timers = timers;
    this.intervalMillis = flushInterval.toMillis();
    if (intervalMillis > 0) {
      schedule();
    }
  }

  private void schedule() {
    timers.registerTimer(timers.getCurrentProcessingTime() + intervalMillis, now -> {
      if (!closed) {
        writer.commit();
        schedule();
      }
    });
  }

  @Override
  public void write(RowData row, Context context) {
    switch (row.getRowKind()) {
      case INSERT, UPDATE_AFTER -> rows.write(row);
      case UPDATE_BEFORE -> {
        // the planner sends -U when a row may leave the result without a -D (a filter after an update):
        // like Flink's JDBC and upsert-kafka sinks, it deletes the key; a following +U writes it again
        if (tombstones) {
          delete(row);
        }
      }
      case DELETE -> {
        if (!tombstones) {
          throw new UnsupportedOperationException("a delete (-D) reached the store at " + store.uri()
              + ", whose schema has no 'tombstones' capability: deleting by key is disabled");
        }
        delete(row);
      }
    }
  }

  private void delete(RowData row) {
    String key = rows.key(row);
    if (key == null) {
      throw new IllegalArgumentException("a retraction without a key reached the store at " + store.uri());
    }
    writer.delete(key);
  }

  @Override
  public void flush(boolean endOfInput) {
    writer.commit();
  }

  @Override
  public void close() {
    closed = true;
    try {
      writer.close();
    } finally {
      store.close();
    }
  }
}
