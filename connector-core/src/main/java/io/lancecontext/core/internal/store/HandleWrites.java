package io.lancecontext.core.internal.store;

import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.internal.codec.BatchConformer;
import io.lancecontext.core.internal.codec.KeyIds;
import io.lancecontext.core.internal.write.StagingBuffer;
import io.lancecontext.core.internal.write.StoreWrites;
import io.lancecontext.core.options.StoreConfig;
import io.lancecontext.core.options.StoreOptions;
import io.lancecontext.core.schema.Capability;
import io.lancecontext.core.schema.SystemColumns;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The writes of one store handle into its resident store: records encoded, Arrow batches in either schema,
 * deletions as tombstones, and the puts and staging of its write handles, with the handle's own options
 * (its bulk-path threshold and staging bounds). Each call runs as one operation of the resident store
 * ({@link ResidentStore#operation}); the handle checks that it is open first.
 */
public final class HandleWrites {
  private final ResidentStore store;
  /** The options the handle was opened with. */
  private final StoreConfig config;

  public HandleWrites(ResidentStore store, StoreConfig config) {
    this.store = store;
    this.config = config;
  }

  /** Adds (upserts) records. Returns the rows written (after dedupe by key). */
  public int add(List<? extends Map<String, ?>> records) {
    return store.operation("add rows", () -> {
      try (VectorSchemaRoot batch = store.codec().encode(records, store.allocator())) {
        return store.writes().write(batch, true, bulkRows()).keys();
      }
    });
  }

  /**
   * Adds (upserts) a batch in the dataset schema (it has the system columns) or in the user schema
   * (conformed by column name; keyless rows get random UUIDv7 keys). Not closed. Returns the rows written.
   */
  public int add(VectorSchemaRoot batch) {
    if (batch.getSchema().getFields().stream()
        .anyMatch(f -> f.getName().equals(SystemColumns.SEQUENCE))) {
      return store.add(batch, false);
    }
    return store.operation("add rows", () -> {
      BatchConformer.Conformed conformed = BatchConformer.conform(store.spec(), batch, KeyIds.random(), 0,
          store.allocator());
      try (VectorSchemaRoot rows = conformed.batch()) {
        return store.writes().write(rows, true, bulkRows()).keys();
      }
    });
  }

  /** Deletes keys (writes tombstones); needs capability {@code tombstones}. */
  public int delete(Collection<String> keys) {
    requireTombstones();
    return store.operation("delete keys", () -> {
      try (VectorSchemaRoot batch = store.codec().encodeTombstones(new ArrayList<>(keys), store.allocator())) {
        return store.add(batch, true, true);
      }
    });
  }

  /** Refuses a delete by key on a store without capability {@code tombstones}. */
  public void requireTombstones() {
    if (!store.spec().has(Capability.TOMBSTONES)) {
      throw new SchemaException("the store at " + store.config().uri() + " has no 'tombstones' capability: deleting "
          + "by key is disabled");
    }
  }

  /** The attempt of transaction {@code txid} an atomic handle opened now stages under (see TxnIds.attempt). */
  public String currentAttempt(String txid) {
    return store.operation("read the record of a transaction", () -> store.transactions().currentAttempt(txid));
  }

  /**
   * The staging buffer of an atomic write handle, bounded by {@code write.batch-bytes}, its parts by
   * {@code merge.max-bytes}.
   */
  public StagingBuffer stagingBuffer(String txid, String partId) {
    return store.writes().stagingBuffer(txid, partId, config.get(StoreOptions.BATCH_BYTES),
        config.get(StoreOptions.MERGE_MAX_BYTES), config.get(StoreOptions.TXN_TIMEOUT));
  }

  /** Stages a batch in the dataset schema through an atomic handle's buffer (null batch: flush it). */
  public StoreWrites.Staged stage(StagingBuffer buffer, VectorSchemaRoot batch, boolean owned) {
    return store.operation("stage rows", () -> batch == null ? buffer.flush() : buffer.add(batch, owned));
  }

  /**
   * Puts a batch in the dataset schema for a write handle (see {@link StoreWrites#write}); a {@code continuous}
   * handle's (see {@code WriterOptions.Builder#continuous}) takes the bulk path only when {@code write.bulk-rows}
   * is set.
   */
  public StoreWrites.Outcome put(VectorSchemaRoot batch, boolean owned, boolean continuous) {
    int bulkRows = continuous ? config.getOptional(StoreOptions.BULK_ROWS).orElse(0) : bulkRows();
    return store.operation("add rows", () -> store.writes().write(batch, owned, bulkRows));
  }

  /** The bulk-path threshold of a handle's calls ({@code write.bulk-rows}, else {@code write.batch-rows}). */
  private int bulkRows() {
    return config.getOptional(StoreOptions.BULK_ROWS).orElse(config.get(StoreOptions.BATCH_ROWS));
  }
}
