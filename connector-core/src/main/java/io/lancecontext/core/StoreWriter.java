package io.lancecontext.core;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.internal.codec.BatchConformer;
import io.lancecontext.core.internal.codec.KeyIds;
import io.lancecontext.core.internal.codec.RowBuffer;
import io.lancecontext.core.internal.write.Buckets;
import io.lancecontext.core.internal.write.PutReceipt;
import io.lancecontext.core.internal.write.StoreWrites;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.result.WriteSummary;
import io.lancecontext.core.schema.Capability;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * The write handle of one task (a Spark {@code DataWriter}, a Flink {@code SinkWriter}): feed it
 * records, rows ({@link #rows()}), Arrow batches in the user schema and deletes, then {@link #commit()}.
 *
 * <p><b>What is durable when.</b> Records, rows and deletes are encoded when they are written (nothing
 * of the caller's objects is kept: a reused, mutated {@code Map} or array is safe) and buffered; the
 * buffer is put when it holds {@code write.batch-rows} rows or about {@code write.batch-bytes} bytes, and
 * an Arrow batch is put at once (after what is buffered). Every put is durable and visible to every
 * process when it returns (this is the {@code immediate} commit mode: rows can be visible before
 * {@code commit()}). When {@link #commit()} returns, everything written through the handle is durable,
 * visible, and was written by writers that still owned their shards; it returns a {@link WriteSummary}
 * of what it acknowledged since the previous commit, which a Spark {@code WriterCommitMessage} or a
 * Flink committable can carry (it holds no option and no secret).
 *
 * <p><b>Order.</b> Writes and deletes of a key through one handle take effect in the order they were
 * made, across puts too: write(k) then delete(k) leaves k absent, delete(k) then write(k) leaves it
 * present. Within one put the last row of a key wins.
 *
 * <p><b>Bad input.</b> A record, row or batch that does not fit the schema is refused whole when it is
 * written ({@link InvalidRecordException} naming the row and column, {@link SchemaException} for a batch
 * whose columns do not fit), and nothing of it is buffered or written; what was written before stays.
 * The row number of a refused record or appended row counts the handle's records, appended rows and
 * deletes from 0; that of a batch's row counts within the batch.
 *
 * <p><b>Failures.</b> A put that fails (for example {@link io.lancecontext.core.error.FencedWriterException},
 * or {@link io.lancecontext.core.error.UniqueKeyViolationException} with capability {@code unique-ids})
 * fails the call that made it, and the handle with it: its buffered rows are dropped and every later call
 * but {@link #abort()} and {@link #close()} throws a {@link StoreClosedException} with that failure as its
 * cause. Rows of the failed put may be durable; a retried task rewrites them (adds upsert by key, and
 * seeded keys repeat, see {@link WriterOptions.Builder#idSeed(String)}).
 *
 * <p><b>Atomic mode.</b> A handle made with {@link WriterOptions.Builder#transaction} (or on a store whose
 * {@code write.commit} is {@code atomic}) stages instead of putting: every flush of its buffer (at
 * {@code write.batch-rows} rows or about {@code write.batch-bytes}) and every Arrow batch is deduplicated by
 * key and split by bucket, and each bucket's rows are kept until the handle holds about
 * {@code write.batch-bytes} of staged rows, then written once as Lance data (one part per bucket) under the
 * transaction, so a handle holds at most about three times {@code write.batch-bytes} (buffer, the copy split by bucket,
 * staging buffer) however many rows a task
 * streams through it; nothing of it is visible. {@link #commit()} then returns a summary
 * naming the parts staged since the previous commit, and the rows become visible when
 * {@link ContextStore#publish} is called with the summaries of the transaction's handles. Capability
 * {@code unique-ids} takes immediate writes only.
 *
 * <p><b>Who may call.</b> One thread at a time (a handle is not thread-safe); any number of handles may
 * write one store at once, in one process or many. Closing a handle without committing discards what is
 * still buffered (rows already put stay).
 */
public final class StoreWriter implements AutoCloseable {
  private final ContextStore store;
  private final int batchRows;
  private final long batchBytes;
  private final RowBuffer buffer;
  private final RowAppender appender;
  private final Map<String, Span> spans = new LinkedHashMap<>();
  private long rowsWritten;
  private long keysDeleted;
  private long committedRows;
  private boolean closed;
  private RuntimeException failure;
  /** The transaction of an atomic handle (null: immediate). */
  private final String transactionId;
  private final String partId;
  private final io.lancecontext.core.internal.write.StagingBuffer stager;
  private final List<WriteSummary.StagedPart> staged = new ArrayList<>();
  /** Keeps an atomic handle's transaction alive while the handle is open (null: immediate). */
  private final TransactionLease lease;
  /** Whether the handle writes a stream ({@link WriterOptions.Builder#continuous()}). */
  private final boolean continuous;

  StoreWriter(ContextStore store, WriterOptions options) {
    this.store = store;
    boolean atomic = options.commitMode().map(m -> m == WriterOptions.CommitMode.ATOMIC)
        .orElse("atomic".equals(store.config().get(StoreOptions.WRITE_COMMIT)));
    if (atomic && options.transactionId().isEmpty()) {
      throw new IllegalArgumentException("write.commit is atomic for " + store.uri() + ": a write handle needs a "
          + "transaction id and a part id (WriterOptions.Builder.transaction)");
    }
    (atomic ? WriterOptions.CommitMode.ATOMIC : WriterOptions.CommitMode.IMMEDIATE).requireSupportedBy(store.spec(),
        store.uri());
    // a replay of a transaction that expired stages under its next attempt (TxnIds.attempt), which the
    // summaries name and the publish of the transaction resolves alike
    this.transactionId = atomic ? store.writes().currentAttempt(options.transactionId().get()) : null;
    this.partId = atomic ? options.partId().get() : null;
    this.stager = atomic ? store.writes().stagingBuffer(transactionId, partId) : null;
    this.batchRows = store.config().get(StoreOptions.BATCH_ROWS);
    this.batchBytes = store.config().get(StoreOptions.BATCH_BYTES);
    KeyIds ids = KeyIds.seeded(options.idSeed().orElse(null));
    // an atomic handle stages each bucket's rows apart: its buffer keeps them apart as they come, so a full
    // buffer is not split by bucket (a copy of every row) before it is staged
    int shards = store.shards();
    this.buffer = atomic
        ? new RowBuffer(store.spec(), store.resident().allocator(), ids, shards,
            (utf8, offset, length) -> Buckets.of(utf8, offset, length, shards))
        : new RowBuffer(store.spec(), store.resident().allocator(), ids);
    buffer.consumeKeyless(options.firstKeylessOrdinal());
    this.appender = new RowAppender(this, buffer);
    this.lease = atomic ? store.holdAttempt(transactionId) : null;
    this.continuous = options.continuous();
  }

  /** Writes one record (a map by column name), encoded now; put with the buffer. */
  public void write(Map<String, ?> record) {
    check();
    buffer.addRecord(record);
    afterRow();
  }

  /** Writes records in order (see {@link #write(Map)}); a bad one is refused with those before it kept. */
  public void write(List<? extends Map<String, ?>> records) {
    for (Map<String, ?> r : records) {
      write(r);
    }
  }

  /** The row appender of this handle (one per handle). */
  public RowAppender rows() {
    check();
    return appender;
  }

  /**
   * Writes a batch in the user schema ({@link io.lancecontext.core.schema.SchemaSpec#toUserArrowSchema()},
   * columns matched by name, see the conforming rules in docs/schema.md), after what is buffered; it is
   * put before this returns. The batch is neither closed nor modified.
   *
   * @throws SchemaException if a column is unknown, reserved ({@code _lc_*}), missing while required, or
   *     of a type that cannot be stored without loss; nothing is written
   * @throws InvalidRecordException if a value does not fit (a null key, a vector of the wrong length);
   *     nothing of the batch is written
   */
  public void write(VectorSchemaRoot batch) {
    check();
    requireNoOpenRow();
    flush();
    BatchConformer.Conformed conformed = BatchConformer.conform(store.spec(), batch, buffer.ids(),
        buffer.keylessRows(), store.resident().allocator());
    try (VectorSchemaRoot rows = conformed.batch()) {
      buffer.consumeKeyless(conformed.keylessRows());
      put(rows, true);
    }
  }

  /** Writes every batch of {@code reader} in order (see {@link #write(VectorSchemaRoot)}); does not close it. */
  public void write(ArrowReader reader) {
    check();
    try {
      while (reader.loadNextBatch()) {
        write(reader.getVectorSchemaRoot());
      }
    } catch (IOException e) {
      throw new io.lancecontext.core.error.StorageException("reading the batches to write failed", e);
    }
  }

  /** Deletes a key (a tombstone, in order with this handle's writes); needs capability {@code tombstones}. */
  public void delete(String key) {
    check();
    if (!store.spec().has(Capability.TOMBSTONES)) {
      throw new SchemaException("the store at " + store.uri() + " has no 'tombstones' capability: deleting by key is "
          + "disabled");
    }
    buffer.addTombstone(key);
    afterRow();
  }

  public void delete(Collection<String> keys) {
    for (String k : keys) {
      delete(k);
    }
  }

  /**
   * Puts everything buffered and returns what this handle acknowledged since the previous commit: when
   * it returns, all of it is durable, visible to every process, and was written by writers that still
   * owned their shards. An atomic handle stages what is buffered and returns the parts it staged since
   * the previous commit: durable, not visible until the transaction is published with this summary.
   *
   * @throws IllegalStateException if a row of {@link #rows()} is being built (end or abandon it first)
   */
  public WriteSummary commit() {
    check();
    requireNoOpenRow();
    flush();
    if (stager != null) {
      stage(null, false);
    }
    List<WriteSummary.ShardPuts> shards = new ArrayList<>();
    for (Span s : spans.values()) {
      shards.add(new WriteSummary.ShardPuts(s.bucket, s.lane, s.shardId, s.epoch, s.first, s.last, s.puts));
    }
    WriteSummary summary = new WriteSummary(rowsWritten, keysDeleted, shards, transactionId, staged);
    committedRows += rowsWritten;
    rowsWritten = 0;
    keysDeleted = 0;
    spans.clear();
    staged.clear();
    return summary;
  }

  /** Discards what is buffered and not yet put (rows already put stay). */
  public void abort() {
    if (!closed && failure == null) {
      buffer.clear();
    }
  }

  /**
   * The ordinal of the next row written without a key: {@link WriterOptions#firstKeylessOrdinal()} plus the
   * keyless rows written so far (records, appended rows and batch rows alike).
   */
  public long keylessRows() {
    return buffer.keylessRows();
  }

  /** Rows committed through this handle so far. */
  public long committedRows() {
    return committedRows;
  }

  // ---------------------------------------------------------------- internals

  /** Puts the buffer once it is full (after a row was ended). */
  void afterRow() {
    if (buffer.rows() >= batchRows || buffer.bytes() >= batchBytes) {
      flush();
    }
  }

  private void flush() {
    List<VectorSchemaRoot> batches = buffer.takeAll();
    try {
      for (VectorSchemaRoot rows : batches) {
        put(rows, true);  // the buffer's batches are ours alone (takeAll() starts new ones): their vectors may be moved
      }
    } finally {
      batches.forEach(VectorSchemaRoot::close);
    }
  }

  private void put(VectorSchemaRoot rows, boolean owned) {
    if (transactionId != null) {
      stage(rows, owned);
      return;
    }
    StoreWrites.Outcome outcome;
    try {
      outcome = store.writes().put(rows, owned, continuous);
    } catch (RuntimeException e) {
      failure = e;
      buffer.close();
      throw e;
    }
    rowsWritten += outcome.rows();
    keysDeleted += outcome.deletes();
    for (PutReceipt r : outcome.puts()) {
      spans.computeIfAbsent(r.shardId() + "@" + r.epoch(), k -> new Span(r)).add(r.walPosition());
    }
  }

  /** Stages through the handle's buffer ({@code rows} null: writes out what it holds). */
  private void stage(VectorSchemaRoot rows, boolean owned) {
    StoreWrites.Staged outcome;
    try {
      outcome = store.writes().stage(stager, rows, owned);
    } catch (RuntimeException e) {
      failure = e;
      buffer.close();
      stager.close();
      throw e;
    }
    rowsWritten += outcome.rows();
    keysDeleted += outcome.deletes();
    staged.addAll(outcome.parts());
  }

  private void requireNoOpenRow() {
    if (buffer.rowStarted()) {
      throw new IllegalStateException("a row of this handle's RowAppender is being built: end it (endRow) or abandon it "
          + "first");
    }
  }

  void check() {
    if (closed) {
      throw new StoreClosedException("this writer handle of " + store.uri() + " is closed", false);
    }
    if (failure != null) {
      throw new StoreClosedException("this writer handle of " + store.uri() + " failed earlier ("
          + failure.getMessage() + "); abort it and write again with a new handle", false, failure);
    }
  }

  /** Closes without committing: buffered rows are discarded. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      if (lease != null) {
        lease.close();
      }
      if (failure == null) {
        buffer.close();
        if (stager != null) {
          stager.close();
        }
      }
    }
  }

  /** The puts of one shard at one writer epoch. */
  private static final class Span {
    final int bucket;
    final int lane;
    final String shardId;
    final long epoch;
    long first = -1;
    long last = -1;
    int puts;

    Span(PutReceipt r) {
      this.bucket = r.bucket();
      this.lane = r.lane();
      this.shardId = r.shardId();
      this.epoch = r.epoch();
    }

    void add(long position) {
      if (puts > 0 && position == last) {
        return;
      }
      first = first < 0 ? position : Math.min(first, position);
      last = Math.max(last, position);
      puts++;
    }
  }
}
