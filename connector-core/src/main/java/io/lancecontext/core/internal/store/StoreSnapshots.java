package io.lancecontext.core.internal.store;

import io.lancecontext.core.error.SnapshotNotFoundException;
import io.lancecontext.core.internal.io.ReadLeases;
import io.lancecontext.core.internal.io.StoreFiles;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.read.ReadSplit;
import io.lancecontext.core.read.StoreSnapshot;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Snapshots that outlive garbage collection: what keeps them, tags, and the check that a snapshot a read asks
 * for is still kept. An untagged snapshot is kept by a read lease planned at the time it was taken ({@link
 * ReadLeases}) until {@code snapshot.retention} after it was taken: garbage collection keeps everything a read
 * planned after a leased one needs. A tag is the object {@code _lc/tags/<name>} holding the token, and keeps
 * exactly what its snapshot reads until it is dropped: garbage collection reads every tag ({@link
 * #taggedSnapshots}) and keeps the base version, generations, WAL entries, shard manifests and transaction parts
 * each one names, and nothing else on its account. So a kept snapshot reads the same rows whatever merges,
 * compactions and collections ran since.
 */
public final class StoreSnapshots {
  static final String TAGS = "_lc/tags";
  private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,127}");
  /** How long the lease that holds a snapshot while it is tagged lasts, if its deletion fails. */
  private static final long TAGGING_LEASE_MILLIS = 600_000;
  /** A snapshot younger than {@code gc.grace} less this is readable without a lease. */
  private static final long GRACE_MARGIN_MILLIS = 2_000;

  private final StoreFiles files;
  private final String uri;
  private final int buckets;
  private final Duration grace;

  public StoreSnapshots(StoreFiles files, String uri, int buckets, Duration grace) {
    this.files = files;
    this.uri = uri;
    this.buckets = buckets;
    this.grace = grace;
  }

  /** Keeps {@code pinned} for {@code retention} and returns it as an untagged snapshot. */
  public StoreSnapshot retain(ReadSplit.Snapshot pinned, Duration retention) {
    long at = pinned.plannedAt().toEpochMilli();
    LanceErrors.call("keep a snapshot", () -> ReadLeases.holdUntil(files, at,
        System.currentTimeMillis() + retention.toMillis(), java.util.concurrent.ThreadLocalRandom.current().nextInt()));
    return new StoreSnapshot(SnapshotTokens.encode(pinned, buckets), pinned.plannedAt(), null);
  }

  /**
   * Keeps {@code now} as {@link #retain} does if its view differs from {@code then}'s (another base version, or other
   * fresh-tier positions of a shard); empty, writing nothing, if both pin the same view.
   */
  public Optional<StoreSnapshot> retainIfChanged(ReadSplit.Snapshot then, ReadSplit.Snapshot now, Duration retention) {
    if (now.baseVersion() == then.baseVersion() && now.shards().equals(then.shards())) {
      return Optional.empty();
    }
    return Optional.of(retain(now, retention));
  }

  /**
   * Tags {@code pinned} as {@code name}: kept until {@link #dropTag}. The caller has made sure it is kept now (a
   * snapshot just taken, or one {@link #resolve} returned). A lease holds it while the tag is written (so a garbage
   * collection that lists the tags before the write keeps it anyway) and is deleted once the tag is there.
   *
   * @throws IllegalArgumentException if the name is not a valid tag name or the tag exists
   */
  public StoreSnapshot tag(String name, ReadSplit.Snapshot pinned) {
    checkName(name);
    String token = SnapshotTokens.encode(pinned, buckets);
    long at = pinned.plannedAt().toEpochMilli();
    String lease = LanceErrors.call("tag a snapshot", () -> ReadLeases.holdUntil(files, at,
        System.currentTimeMillis() + TAGGING_LEASE_MILLIS, java.util.concurrent.ThreadLocalRandom.current().nextInt()));
    try {
      boolean created = LanceErrors.call("tag a snapshot",
          () -> files.createIfAbsent(path(name), token.getBytes(StandardCharsets.UTF_8)));
      if (!created) {
        throw new IllegalArgumentException("tag '" + name + "' of " + uri + " exists; drop it first (dropTag)");
      }
    } finally {
      LanceErrors.run("tag a snapshot", () -> files.delete(lease));
    }
    return new StoreSnapshot(token, pinned.plannedAt(), name);
  }

  /** Drops the tag {@code name}: what only it kept may be collected. False if there is no such tag. */
  public boolean dropTag(String name) {
    checkName(name);
    Optional<String> token = read(name);
    if (token.isEmpty()) {
      return false;
    }
    LanceErrors.run("drop a tag", () -> files.delete(path(name)));
    // the never-ending lease a tag of an earlier build wrote (ignored by garbage collection now), if any
    String lease = ReadLeases.fixedName(SnapshotTokens.decode(token.get(), buckets, uri).plannedAt().toEpochMilli(),
        ReadLeases.NEVER, name.hashCode());
    LanceErrors.run("drop a tag", () -> files.delete(lease));
    return true;
  }

  /**
   * The snapshot of every tag, as garbage collection keeps them (one listing and one read per tag); a tag that is
   * not a token of this store is skipped with nothing kept for it.
   */
  public List<ReadSplit.Snapshot> taggedSnapshots() {
    List<ReadSplit.Snapshot> out = new ArrayList<>();
    for (StoreSnapshot t : tags()) {
      try {
        out.add(SnapshotTokens.decode(t.token(), buckets, uri));
      } catch (SnapshotNotFoundException e) {
        // not one of this store's: reading at it fails the same way, so it keeps nothing
      }
    }
    return out;
  }

  /** Every tag, by name. */
  public List<StoreSnapshot> tags() {
    List<StoreSnapshot> out = new ArrayList<>();
    for (String name : LanceErrors.call("list the tags", () -> files.list(TAGS))) {
      if (TAG.matcher(name).matches()) {
        read(name).ifPresent(token -> out.add(new StoreSnapshot(token, takenAt(token), name)));
      }
    }
    return out;
  }

  /**
   * The snapshot {@code tokenOrTag} names, checked to be kept now.
   *
   * @throws SnapshotNotFoundException if there is no such tag, it is not a token of this store, or its snapshot
   *     is no longer kept
   */
  public ReadSplit.Snapshot resolve(String tokenOrTag) {
    if (!SnapshotTokens.isToken(tokenOrTag)) {
      boolean valid = TAG.matcher(tokenOrTag).matches();
      String token = (valid ? read(tokenOrTag) : Optional.<String>empty()).orElseThrow(() -> new SnapshotNotFoundException("the store at " + uri
          + " has no tag '" + tokenOrTag + "' (nor is it a snapshot token, which starts with '"
          + SnapshotTokens.PREFIX + "')"));
      return SnapshotTokens.decode(token, buckets, uri);
    }
    ReadSplit.Snapshot pinned = SnapshotTokens.decode(tokenOrTag, buckets, uri);
    if (!keptAt(pinned, System.currentTimeMillis())) {
      throw new SnapshotNotFoundException("the snapshot taken at " + pinned.plannedAt() + " of " + uri
          + " is no longer kept: it is untagged and older than snapshot.retention and gc.grace (" + grace
          + "); tag a snapshot (ContextStore.tag) to keep it");
    }
    return pinned;
  }

  /**
   * Whether a read of {@code pinned} finds its files: young enough, held by a lease planned at or before it, or the
   * snapshot of a tag (tags are listed only when neither of the first two holds).
   */
  private boolean keptAt(ReadSplit.Snapshot pinned, long now) {
    long plannedAt = pinned.plannedAt().toEpochMilli();
    if (now - plannedAt < grace.toMillis() - GRACE_MARGIN_MILLIS
        || LanceErrors.call("check a snapshot is kept", () -> ReadLeases.covers(files, plannedAt, now))) {
      return true;
    }
    for (StoreSnapshot t : tags()) {
      if (t.takenAt().equals(pinned.plannedAt())
          && SnapshotTokens.decode(t.token(), buckets, uri).equals(pinned)) {
        return true;
      }
    }
    return false;
  }

  /** When the snapshot of a tag's token was taken (the epoch for a token not of this store, which keeps nothing). */
  private Instant takenAt(String token) {
    try {
      return SnapshotTokens.decode(token, buckets, uri).plannedAt();
    } catch (SnapshotNotFoundException e) {
      return Instant.EPOCH;
    }
  }

  private Optional<String> read(String name) {
    return LanceErrors.call("read a tag", () -> files.readIfPresent(path(name)))
        .map(b -> new String(b, StandardCharsets.UTF_8).trim());
  }

  private static String path(String name) {
    return TAGS + "/" + name;
  }

  private static void checkName(String name) {
    if (name == null || !TAG.matcher(name).matches() || SnapshotTokens.isToken(name)) {
      throw new IllegalArgumentException("'" + name + "' is not a tag name: 1 to 128 letters, digits, '_', '.' or '-', "
          + "not starting with '.', '-' or '" + SnapshotTokens.PREFIX + "'");
    }
  }
}
