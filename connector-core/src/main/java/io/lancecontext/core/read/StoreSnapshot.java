package io.lancecontext.core.read;

import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;

/**
 * A snapshot of a store's LSM view: what {@code ContextStore.snapshot()} and {@code tag(...)} return. Its
 * {@link #token()} names everything a read of that view needs (the base version and, per shard, the fresh tier
 * it held); {@code ScanSpec.all().atSnapshot(token)} reads exactly those rows in any process, after any merges,
 * compactions and garbage collections, for as long as the snapshot is kept: {@code snapshot.retention} after it
 * was taken, or until its tag is dropped.
 *
 * @param token the snapshot, as a short string ({@code lc.} and URL-safe base64)
 * @param takenAt when it was taken (records' expiry is judged at this instant when reading it)
 * @param tag the tag that keeps it, or null for an untagged snapshot
 */
public record StoreSnapshot(String token, Instant takenAt, String tag) implements Serializable {
  public StoreSnapshot {
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(takenAt, "takenAt");
  }
}
