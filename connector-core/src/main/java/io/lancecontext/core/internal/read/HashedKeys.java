package io.lancecontext.core.internal.read;

import java.util.Set;

/**
 * A set of keys with the 64-bit hashes of its members ({@link KeyHashSet}), computed once, when first asked
 * for. A base scan tests every row's key against the keys the fresh tier holds; testing its hash first, from
 * the key's bytes, needs no {@code String} per row (decoding and hashing 750,000 keys into strings was about
 * half of a {@code count()} of a store with 250,000 fresh keys). Hashing a key costs about what testing a base
 * row by its decoded key does, so a scan hashes them only for a base of more rows than fresh keys
 * ({@link #worthHashing}), or when they are hashed already (live snapshots of unchanged shard views share
 * them). Thread-safe.
 */
final class HashedKeys {
  private final Set<String> keys;
  private volatile KeyHashSet hashes;

  HashedKeys(Set<String> keys) {
    this.keys = keys;
  }

  /** Whether a scan of {@code baseRows} base rows should test them against {@link #hashes()}. */
  boolean worthHashing(long baseRows) {
    return hashed() || baseRows > keys.size();
  }

  Set<String> keys() {
    return keys;
  }

  /** Whether {@link #hashes()} were computed already (testing against them costs nothing more). */
  boolean hashed() {
    return hashes != null;
  }

  KeyHashSet hashes() {
    KeyHashSet h = hashes;
    if (h == null) {
      synchronized (this) {
        h = hashes;
        if (h == null) {
          h = new KeyHashSet(KeyHashSet.hashes(keys));
          hashes = h;
        }
      }
    }
    return h;
  }
}
