package io.lancecontext.core;

import io.lancecontext.core.internal.store.ResidentStore;
import io.lancecontext.core.internal.txn.ReplacePublish;
import io.lancecontext.core.internal.txn.TxnRecord;
import io.lancecontext.core.internal.write.DeletionParts;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.vector.VarCharVector;

/**
 * What a replacing publish ({@link ContextStore#publishReplacing}, {@link ReplacePublish}) needs of its store: the
 * transaction's record, the deletion of every key present now staged as parts of the transaction
 * ({@link DeletionParts}, on any store), and the ordinary publish.
 */
final class ReplacingStore implements ReplacePublish.Store {
  /** Keys per staged part of a replace's deletions (per bucket; bounds the memory of staging them). */
  private static final int KEYS_PER_PART = 100_000;

  private final ContextStore store;
  private final ResidentStore resident;
  private final Runnable afterRead;

  /** {@code afterRead} runs between the key read and the publish (tests). */
  ReplacingStore(ContextStore store, ResidentStore resident, Runnable afterRead) {
    this.store = store;
    this.resident = resident;
    this.afterRead = afterRead;
  }

  @Override
  public Optional<TxnRecord> record(String txid) {
    return resident.transactions().record(resident.transactions().currentAttempt(txid));
  }

  @Override
  public WriteSummary stageTombstonesForVisibleKeys(String txid, String partId) {
    String key = resident.spec().key();
    String attempt = resident.transactions().currentAttempt(txid);
    DeletionParts deletions = resident.writes().deletionParts(attempt, partId, KEYS_PER_PART);
    try (TransactionLease held = store.holdAttempt(attempt);
        StoreReader reader = store.scan(ScanSpec.all().withColumns(List.of(key)).withIncludeSuperseded(true)
            .withIncludeExpired(true))) {
      while (reader.next()) {
        VarCharVector keys = (VarCharVector) reader.batch().getVector(key);
        for (int r = 0; r < keys.getValueCount(); r++) {
          deletions.add(new String(keys.get(r), StandardCharsets.UTF_8));
        }
      }
    }
    WriteSummary staged = deletions.finish();
    afterRead.run();
    return staged;
  }

  @Override
  public PublishResult publish(String txid, Collection<WriteSummary> all) {
    return resident.publisher().publish(txid, all);
  }
}
