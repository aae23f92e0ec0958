package io.lancecontext.core;

import io.lancecontext.core.error.CommitConflictException;
import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.read.ScanSpec;
import io.lancecontext.core.result.PublishResult;
import io.lancecontext.core.result.WriteSummary;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.arrow.vector.VarCharVector;

/**
 * A delete by condition ({@link ContextStore#deleteWhere}): the keys whose newest row matches are read from one
 * snapshot, a tombstone is staged for each under one transaction, and the transaction is published only if,
 * while the publish holds every bucket it touches (no put can land there meanwhile), each of those keys still
 * matches: a key another writer changed in between so that it no longer matches is a conflict (nothing is
 * deleted, {@link CommitConflictException}, retryable), never a lost update.
 */
final class DeleteWhere {
  /** Up to this many keys, the check reads them by key; above it, it scans with the condition. */
  static final int CHECK_BY_KEY_MAX = 10_000;

  private DeleteWhere() {}

  static PublishResult run(ContextStore store, Predicate filter, Runnable afterRead) {
    String key = store.spec().key();
    String txid = "delete-" + UUID.randomUUID();
    Set<String> deleted = new HashSet<>();
    WriteSummary staged;
    try (StoreWriter w = store.newWriter(WriterOptions.builder().transaction(txid, "000000-0").build())) {
      for (String k : keys(store, filter)) {
        w.delete(k);
        deleted.add(k);
      }
      staged = w.commit();
    }
    afterRead.run();
    try {
      return store.publish(txid, List.of(staged), () -> {
        Predicate check = deleted.size() <= CHECK_BY_KEY_MAX
            ? Predicate.and(filter, Predicate.in(key, new ArrayList<>(deleted))) : filter;
        Set<String> stillMatching = new HashSet<>(keys(store, check));
        for (String k : deleted) {
          if (!stillMatching.contains(k)) {
            throw new CommitConflictException("the delete from " + store.uri() + " conflicts with a concurrent write: key '"
                + k + "' was changed (or deleted) after the delete read it and no longer matches its condition; "
                + "nothing was deleted, run the delete again");
          }
        }
      });
    } catch (RuntimeException e) {
      try {
        store.abort(txid);
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private static List<String> keys(ContextStore store, Predicate filter) {
    String key = store.spec().key();
    List<String> out = new ArrayList<>();
    try (StoreReader reader = store.scan(ScanSpec.all().withColumns(List.of(key)).withFilter(filter))) {
      while (reader.next()) {
        VarCharVector v = (VarCharVector) reader.batch().getVector(key);
        for (int r = 0; r < v.getValueCount(); r++) {
          out.add(new String(v.get(r), StandardCharsets.UTF_8));
        }
      }
    }
    return out;
  }
}
